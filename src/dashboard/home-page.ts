import { html, type Raw } from "../html/template.ts";
import { formatExact } from "../lib/money.ts";
import type { HomeFigures, Totals } from "../payments/search.ts";
import { PAYMENT_STATUSES } from "../payments/store.ts";
import { dailyChart } from "./lists-chart.ts";
import { paymentsTable } from "./payments-page.ts";

const usdc = (micro: bigint) => `${formatExact(micro)} USDC`;

/** The home page: settled money, a month's chart, payments by status, and what needs attention. */
export function homePageBody(figures: HomeFigures): Raw {
  return html`<h1>Home</h1>
<section class="card" aria-labelledby="received-title">
  <h2 id="received-title">Received</h2>
  <p class="muted small">Confirmed money only: what settlements swept from your payments' deposit addresses,
    counted on the UTC day each settlement confirmed. Gross = fee + net; the fee is the platform fee each
    settlement took, net is what reached your payout address. Today is ${figures.today} (UTC).</p>
  <div class="figures">
    ${figure("Today", figures.totals.today)}
    ${figure("Last 7 days", figures.totals.week)}
    ${figure("Last 30 days", figures.totals.month)}
  </div>
</section>
<section class="card" aria-labelledby="daily-title">
  <h2 id="daily-title">Settled per day</h2>
  ${dailyChart("Settled per day over the last 30 days, UTC, in USDC", figures.daily)}
</section>
<section class="card" aria-labelledby="status-title">
  <h2 id="status-title">Payments by status</h2>
  <ul class="status-counts">${PAYMENT_STATUSES.map(
    (status) =>
      html`<li><a href="/dashboard/payments?status=${status}"><span class="badge ${status}">${status}</span>
        <span class="count">${figures.counts[status].toLocaleString("en-US")}</span></a></li>`,
  )}</ul>
</section>
<section class="card" aria-labelledby="attention-title">
  <h2 id="attention-title">Needs attention</h2>
  ${
    figures.attention.length === 0
      ? html`<p class="muted">Nothing needs your attention: no payment is underpaid or failed.</p>`
      : html`<p class="muted small">Underpaid: the customer sent less than asked; the rest may still come.
    Failed: the settlement reverted; it is retried and the funds stay at the deposit address.</p>
  ${paymentsTable(figures.attention, "Underpaid and failed payments, newest first")}
  <p class="more">${figures.moreAttention ? "Showing the 10 newest. " : ""}See all
    <a href="/dashboard/payments?status=underpaid">underpaid</a> or
    <a href="/dashboard/payments?status=failed">failed</a> payments.</p>`
  }
</section>`;
}

function figure(label: string, totals: Totals): Raw {
  return html`<div class="figure">
  <h3>${label}</h3>
  <p class="net">${usdc(totals.net)} <span class="muted">net</span></p>
  <dl><dt>Gross</dt><dd>${usdc(totals.gross)}</dd><dt>Fees</dt><dd>${usdc(totals.fee)}</dd></dl>
</div>`;
}
