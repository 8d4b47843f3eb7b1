import type { ExplorerLinks } from "../chain/explorer.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { isoMillis } from "../lib/clock.ts";
import { formatAmount, formatExact } from "../lib/money.ts";
import type { PaymentDetail } from "../payments/detail.ts";

export interface PaymentDetailData {
  detail: PaymentDetail;
  payUrl: string;
  /** The settlement chain's name ("base", or "custom"). */
  chainName: string;
  /** Null where no public explorer knows the chain: then hashes are shown, not linked. */
  explorer: ExplorerLinks | null;
  /** The explorer of a cross-chain source chain, by name; null where there is none. */
  sourceExplorer: (chain: string) => ExplorerLinks | null;
  /** The pay link's QR code, as a data: URI (the page's CSP allows images from data:). */
  qrDataUri: string;
  /** Just created from the form: say so, and put the link to send first. */
  created: boolean;
  /** The card to recover tokens sent by mistake (./payment-detail-recover.ts). */
  recover?: Raw;
  /** The refunds card: the payment's refunds and the form to make one (./payment-detail-refunds.ts). */
  refunds?: Raw;
}

/** The body of /dashboard/payments/{id}: everything about one payment, for its merchant. */
export function paymentDetailBody(data: PaymentDetailData): Raw {
  const { payment } = data.detail;
  const created = html`<p class="notice ok" role="status">Payment created. Send your customer the pay link below.</p>`;
  return html`${data.created ? created : ""}
<section class="card pd-card pd-head" aria-labelledby="pd-title" data-live-payment="${payment.id}"
  data-live-state="${liveState(payment.status, payment.amount_received)}">
  <div>
    <p class="muted">Payment</p>
    <h1 id="pd-title"><span id="pd-amount">${formatAmount(payment.amount)}</span> USDC
      <span class="badge ${payment.status}" id="pd-status">${payment.status}</span></h1>
    <p class="mono muted pd-id" id="pd-id">${payment.id}</p>
  </div>
  <a class="btn secondary" href="/dashboard/payments">All payments</a>
</section>
${reversedNotice(data)}
${payLinkCard(data)}
${summaryCard(data)}
${itemsCard(data)}
${metadataCard(data)}
${transfersCard(data)}
${crossChainCard(data)}
${settlementsCard(data)}
${data.refunds ?? ""}
${data.recover ?? ""}
${historyCard(data)}
${deliveriesCard(data)}`;
}

/**
 * What the page's script compares with the public view to know the page is out of date: the
 * status and the received amount, in the public view's own format.
 */
const liveState = (status: string, received: bigint | null) =>
  `${status}|${received === null ? "" : formatExact(received)}`;

function payLinkCard(data: PaymentDetailData): Raw {
  return html`<section class="card pd-card pd-link" aria-labelledby="pd-link-title">
  <img class="pd-qr" width="168" height="168" src="${data.qrDataUri}" alt="QR code of the pay link">
  <div class="pd-link-text">
    <h2 id="pd-link-title">Pay link</h2>
    <p class="muted">Send it to your customer: it opens the checkout page for this payment.</p>
    <p><a class="mono" id="pd-pay-url" href="${data.payUrl}">${data.payUrl}</a></p>
    <p><button class="btn" type="button" data-copy="${data.payUrl}" hidden>Copy link</button></p>
  </div>
</section>`;
}

/**
 * A confirmed payment stays confirmed when a reorg takes its funds back (docs/speed.md): say so
 * where a merchant who ships on `confirmed` looks first.
 */
function reversedNotice(data: PaymentDetailData): Raw | string {
  const { payment, transfers } = data.detail;
  const received = payment.amount_received ?? 0n;
  if (payment.status !== "confirmed" || received >= payment.amount || !transfers.some((t) => t.reversed)) return "";
  return html`<p class="notice bad" role="alert" id="pd-reversed">A reorg took funds of this payment off the chain
    after it was confirmed: ${formatExact(received)} of ${formatAmount(payment.amount)} USDC is still received.
    The reversed transfer is listed below.</p>`;
}

function summaryCard(data: PaymentDetailData): Raw {
  const { payment: p, split } = data.detail;
  const address = (value: string) =>
    data.explorer
      ? html`<a class="mono" href="${data.explorer.address(value)}">${value}</a>`
      : html`<span class="mono">${value}</span>`;
  const rows: Array<[string, unknown]> = [
    ["Amount", `${formatAmount(p.amount)} USDC`],
    ["Received", p.amount_received === null ? "Nothing yet" : `${formatExact(p.amount_received)} USDC`],
    [
      "Fee",
      html`${split ? `${formatExact(split.fee)} USDC` : "None yet"} <span class="muted">(${percent(p.fee_bps)})</span>`,
    ],
    ["Bridge fee", p.bridge_fee === 0n ? null : `${formatExact(p.bridge_fee)} USDC`],
    ["Net to you", split ? `${formatExact(split.net)} USDC` : "Nothing yet"],
    ["Swept to payout", `${formatExact(p.amount_settled)} USDC`],
    ["Refunded", p.amount_received === null ? null : `${formatExact(p.amount_refunded)} USDC`],
    ["Status", html`<span class="badge ${p.status}">${p.status}</span>`],
    ["Speed", p.speed],
    ["Deposit address", address(p.deposit_address)],
    ["Payout address", address(p.payout_address)],
    ["Chain", `${data.chainName} (chain ID ${p.chain_id})`],
    ["Token", address(p.token_address)],
    ["Created", timeTag(isoMillis(p.created_at))],
    ["Updated", timeTag(isoMillis(p.updated_at))],
    ["Expires", timeTag(isoMillis(p.expires_at))],
    ["Due", p.due_at === null ? null : timeTag(isoMillis(p.due_at))],
    ["Description", p.description],
    ["Reference", p.reference],
    ["Invoice number", p.invoice_number],
    ["Customer name", p.customer_name],
    ["Customer email", p.customer_email],
    ["Success URL", p.success_url === null ? null : html`<span class="mono">${p.success_url}</span>`],
  ];
  const shown = rows.filter(([, value]) => value !== null && value !== "");
  return html`<section class="card pd-card" aria-labelledby="pd-summary-title">
  <h2 id="pd-summary-title">Details</h2>
  <dl class="pd-facts" id="pd-facts">${shown.map(
    ([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`,
  )}</dl>
</section>`;
}

/** 100 bps is "1.00%". */
const percent = (bps: number) => `${Math.floor(bps / 100)}.${String(bps % 100).padStart(2, "0")}%`;

function itemsCard(data: PaymentDetailData): Raw | "" {
  const items = data.detail.lineItems;
  if (!items) return "";
  return card(
    "Line items",
    "pd-items",
    html`<div class="table-wrap"><table>
    ${headRow("Item", { num: "Unit price" }, { num: "Quantity" }, { num: "Amount" })}
    <tbody>${items.map(
      (item) => html`<tr><td class="pd-wrap">${item.description}</td><td class="num">${item.unit_amount}</td>
        <td class="num">${item.quantity}</td><td class="num">${item.amount}</td></tr>`,
    )}</tbody>
    <tfoot><tr>
      <th colspan="3">Total</th><td class="num">${formatAmount(data.detail.payment.amount)} USDC</td>
    </tr></tfoot>
  </table></div>`,
  );
}

function metadataCard(data: PaymentDetailData): Raw | "" {
  const text = data.detail.payment.metadata;
  if (text === null) return "";
  // Stored as the merchant sent it, minus spacing; indented here for reading (values are strings).
  return card("Metadata", "pd-metadata", html`<pre class="pd-json">${JSON.stringify(JSON.parse(text), null, 2)}</pre>`);
}

function transfersCard(data: PaymentDetailData): Raw {
  const { transfers } = data.detail;
  const body =
    transfers.length === 0
      ? html`<p class="muted">Nothing has arrived yet. USDC sent to the deposit address shows up here.</p>`
      : html`<div class="table-wrap"><table>
    ${headRow("Network", "Transaction", "From", { num: "Amount (USDC)" }, { num: "Block" }, "State", "Seen")}
    <tbody>${transfers.map(
      (t) => html`<tr><td>${t.chain}</td>
        <td>${txLink(t.onSettlementChain ? data.explorer : data.sourceExplorer(t.chain), t.txHash)}</td>
        <td class="mono">${short(t.from)}</td>
        <td class="num">${formatExact(t.amount)}</td><td class="num">${t.blockNumber}</td>
        <td>${t.reversed ? REVERSED : t.confirmed ? CREDITED : AWAITING}</td>
        <td>${timeTag(isoMillis(t.seenAt))}</td></tr>`,
    )}</tbody>
  </table></div>`;
  return card("Incoming transfers", "pd-transfers", body);
}

function settlementsCard(data: PaymentDetailData): Raw {
  const { settlements } = data.detail;
  const body =
    settlements.length === 0
      ? html`<p class="muted">No settlement yet. Once the payment is funded, the relayer sweeps it to your payout
          address.</p>`
      : html`<div class="table-wrap"><table>
    ${headRow("Transaction", "State", { num: "Swept (USDC)" }, { num: "Block" }, "Sent")}
    <tbody>${settlements.map(
      (s) => html`<tr><td>${txLink(data.explorer, s.txHash)}</td>
        <td><span class="badge ${SETTLEMENT_BADGE[s.state]}">${s.state}</span></td>
        <td class="num">${s.amount === null ? "" : formatExact(s.amount)}</td>
        <td class="num">${s.blockNumber ?? ""}</td><td>${timeTag(isoMillis(s.submittedAt))}</td></tr>`,
    )}</tbody>
  </table></div>`;
  return card("Settlement", "pd-settlements", body);
}

function crossChainCard(data: PaymentDetailData): Raw | "" {
  const burns = data.detail.crossChain;
  if (burns.length === 0) return "";
  const rows = burns.map(
    (b) => html`<tr><td>${b.chain}</td><td>${txLink(data.sourceExplorer(b.chain), b.tx_hash)}</td>
        <td><span class="badge ${BURN_BADGE[b.state]}">${b.state}</span></td>
        <td class="num">${b.amount ?? ""}</td>
        <td>${b.redeem_tx_hash ? txLink(data.explorer, b.redeem_tx_hash) : ""}</td>
        <td class="pd-wrap">${b.error ?? ""}</td></tr>`,
  );
  return card(
    "Cross-chain funding",
    "pd-crosschain",
    html`<p class="muted">USDC burned on another chain with Circle CCTP and minted to the deposit address.</p>
  <div class="table-wrap"><table>
    ${headRow("Source chain", "Burn", "State", { num: "Amount (USDC)" }, "Mint", "Error")}
    <tbody>${rows}</tbody>
  </table></div>`,
  );
}

const BURN_BADGE: Record<PaymentDetail["crossChain"][number]["state"], string> = {
  attesting: "settling",
  redeeming: "settling",
  redeemed: "confirmed",
  failed: "failed",
};

const CREDITED = html`<span class="badge confirmed">credited</span>`;
const AWAITING = html`<span class="badge">awaiting confirmations</span>`;
const REVERSED = html`<span class="badge failed" title="A reorg took it off the chain">reversed by a reorg</span>`;

const SETTLEMENT_BADGE: Record<PaymentDetail["settlements"][number]["state"], string> = {
  submitted: "settling",
  mined: "confirmed",
  reverted: "failed",
  dropped: "",
  reorged: "failed",
};

function historyCard(data: PaymentDetailData): Raw {
  const created = data.detail.payment.created_at;
  const rows = [
    { type: "created (pending)", createdAt: created },
    ...data.detail.history.map((e) => ({ type: e.type, createdAt: e.createdAt })),
  ];
  return card(
    "Status history",
    "pd-history",
    html`<ol class="pd-history">${rows.map(
      (row) => html`<li>${timeTag(isoMillis(row.createdAt))} <span class="mono">${row.type}</span></li>`,
    )}</ol>`,
  );
}

function deliveriesCard(data: PaymentDetailData): Raw {
  const { deliveries } = data.detail;
  const body =
    deliveries.length === 0
      ? html`<p class="muted">No webhooks sent for this payment. Add an endpoint under
          <a href="/dashboard/webhooks">Webhooks</a> to be told of status changes.</p>`
      : deliveries.map(
          (d) => html`<div class="pd-delivery">
    <p><span class="mono">${d.event_type}</span> to <span class="mono pd-wrap">${d.endpoint_url}</span>
      <span class="badge ${DELIVERY_BADGE[d.status]}">${d.status}</span>
      <span class="muted">${d.attempt_count} ${d.attempt_count === 1 ? "attempt" : "attempts"}</span></p>
    ${
      d.attempts.length === 0
        ? html`<p class="muted">Not attempted yet.</p>`
        : html`<div class="table-wrap"><table>
      ${headRow("Attempted", { num: "Response" }, "Error", { num: "Duration" })}
      <tbody>${d.attempts.map(
        (a) => html`<tr><td>${a.attempted_at ? timeTag(a.attempted_at) : ""}</td>
          <td class="num">${a.response_status ?? "none"}</td><td class="pd-wrap">${a.error ?? ""}</td>
          <td class="num">${a.duration_ms} ms</td></tr>`,
      )}</tbody>
    </table></div>`
    }
  </div>`,
        );
  return card("Webhook deliveries", "pd-deliveries", html`${body}`);
}

const DELIVERY_BADGE: Record<string, string> = {
  succeeded: "confirmed",
  pending: "settling",
  failed: "failed",
  canceled: "",
};

export function txLink(explorer: ExplorerLinks | null, hash: string): Raw {
  return explorer
    ? html`<a class="mono" href="${explorer.tx(hash)}" title="${hash}">${short(hash)}</a>`
    : html`<span class="mono" title="${hash}">${short(hash)}</span>`;
}

/** 0x5c50…2060: enough to recognise; the full value is in the title and behind the link. */
export const short = (hex: string) => (hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex);

/** A table's header row; `num` columns are right-aligned, as their figures are. */
function headRow(...columns: Array<string | { num: string }>): Raw {
  const cells = columns.map((c) => (typeof c === "string" ? html`<th>${c}</th>` : html`<th class="num">${c.num}</th>`));
  return html`<thead><tr>${cells}</tr></thead>`;
}

function card(title: string, id: string, body: Raw): Raw {
  return html`<section class="card pd-card" id="${id}" aria-labelledby="${id}-title">
  <h2 id="${id}-title">${title}</h2>
  ${body}
</section>`;
}
