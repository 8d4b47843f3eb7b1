import type { BusinessDetails } from "../documents/business.ts";
import { html, type Raw } from "../html/template.ts";
import { type FinalTag, SPEEDS, type Speed } from "../lib/speed.ts";
import { type Notice, noticeBox } from "./admin-page.ts";
import { businessSection } from "./business-form.ts";
import { type EmailSettingsData, emailSection } from "./email-settings-page.ts";
import { csrfField, type DashboardSession } from "./kit.ts";

export interface SettingsPageData {
  session: DashboardSession;
  /** What just happened (the speed was saved), or why the speed form was refused. */
  notice?: Notice;
  accountId: string;
  accountName: string;
  payoutAddress: string;
  feeBps: number;
  /** Whether the fee is the account's own or the server's STABLEGATE_FEE_BPS. */
  feeSource: "account" | "server";
  /** The account's own speed policy; null: it follows the server's STABLEGATE_SPEED (`defaultSpeed`). */
  speed: Speed | null;
  defaultSpeed: Speed;
  /** The block tag `final` waits for (STABLEGATE_FINAL_BLOCK_TAG). */
  finalTag: FinalTag;
  chain: { name: string; chainId: number; usdc: string; confirmations: number };
  relayer: { address: string; balance: string | null };
  /** What its invoices and receipts print (docs/documents.md). */
  business: BusinessDetails;
  email: EmailSettingsData;
}

/**
 * /dashboard/settings: what the account is and where its money goes, read-only by design, and the
 * one thing its users choose themselves: how fast its payments count (the speed form).
 */
export function settingsBody(data: SettingsPageData): Raw {
  const percent = (data.feeBps / 100).toFixed(2).replace(/\.?0+$/, "");
  const feeText =
    data.feeBps === 0
      ? "No platform fee: each payment is forwarded whole to the payout address."
      : `${percent}% of every amount received goes to the platform's fee recipient (rounded down to ` +
        "the micro-USDC); the rest goes to the payout address.";
  const speed = data.speed ?? data.defaultSpeed;
  return html`<div class="admin-head"><h1>Settings</h1></div>
${data.notice ? noticeBox(data.notice) : ""}
<section class="card" aria-labelledby="account-title">
  <h2 id="account-title">Account</h2>
  <dl class="settings">
    <div><dt>Name</dt><dd id="account-name">${data.accountName}</dd></div>
    <div><dt>Account id</dt><dd class="mono">${data.accountId}</dd></div>
    <div><dt>Payout address</dt><dd>
      <span class="address-row"><code class="mono" id="payout-address">${data.payoutAddress}</code>
      <button class="btn secondary small" type="button" data-copy="${data.payoutAddress}">Copy</button></span>
      <p class="muted hint">Where new payments are paid out. It is committed into each payment's deposit address, so
        it cannot be changed from this dashboard: the server operator runs
        <code class="mono">stablegate account set-payout ${data.accountId} ADDRESS</code>. Payments created before a
        change keep the address they were created with; every change is recorded as an
        <code>account.updated</code> event.</p>
    </dd></div>
    <div><dt>Fee</dt><dd>
      <span id="fee">${data.feeBps} bps</span>
      <span class="muted">(${data.feeSource === "account" ? "this account's own" : "the server's default"})</span>
      <p class="muted hint">${feeText}</p>
    </dd></div>
    <div><dt>Speed</dt><dd>
      <span id="speed">${speed}</span>
      <span class="muted">(${data.speed === null ? "the server's default" : "this account's own"})</span>
      <p class="muted hint">${speedRisk(speed, data)} Change it <a href="#speed-title">below</a>.</p>
    </dd></div>
  </dl>
</section>
${businessSection(data.session, data.business, data.accountName)}
${speedForm(data)}
${emailSection(data.email)}
<section class="card" aria-labelledby="chain-title">
  <h2 id="chain-title">Settlement chain</h2>
  <dl class="settings">
    <div><dt>Chain</dt>
      <dd id="chain-name">${data.chain.name} <span class="muted">(chain id ${data.chain.chainId})</span></dd></div>
    <div><dt>USDC contract</dt><dd class="mono">${data.chain.usdc}</dd></div>
    <div><dt>Confirmations</dt>
      <dd>${plural(data.chain.confirmations, "block")} before a transfer is credited under the standard speed</dd></div>
    <div><dt>Relayer</dt><dd class="mono">${data.relayer.address}</dd></div>
    <div><dt>Relayer gas balance</dt><dd>
      ${
        data.relayer.balance === null
          ? html`<span class="badge failed" id="relayer-balance">Unavailable</span>
      <p class="muted hint">The chain's RPC did not answer just now. Settlements wait and retry;
        reload to check again.</p>`
          : html`<span id="relayer-balance">${data.relayer.balance}</span>`
      }
      <p class="muted hint">The relayer pays the gas to forward payments to the payout address. It never holds
        merchant funds; keep it topped up so settlements are not delayed.</p>
    </dd></div>
  </dl>
</section>`;
}

/** What a policy means for the merchant, in one line: how soon a payment counts, and what could undo it. */
function speedRisk(speed: Speed, data: Pick<SettingsPageData, "chain" | "finalTag">): string {
  switch (speed) {
    case "fast":
      return (
        "Paid within seconds, once the transfer is in a block. A reorganisation of the chain could still " +
        "take it back: for small amounts."
      );
    case "standard":
      return (
        `Paid once the transfer is ${plural(data.chain.confirmations, "block")} deep, the margin careful ` +
        "processors wait for on this chain."
      );
    case "final":
      return data.finalTag === "finalized"
        ? "Paid only once the chain reports its block finalized: the slowest (minutes, tens of them on a " +
            "rollup), and then it cannot be undone."
        : "Paid only once the chain reports its block safe, its data posted to Ethereum: the slowest (minutes), " +
            "and only a reorganisation of Ethereum could undo it.";
  }
}

const SPEED_NAMES: Record<Speed, string> = { fast: "Fast", standard: "Standard", final: "Final" };

/** The three policies and "the server's default", the one in effect checked; a POST with the session's CSRF token. */
function speedForm(data: SettingsPageData): Raw {
  const choice = (value: string, title: string, risk: string, checked: boolean) =>
    html`<label class="speed-choice">
        <input type="radio" name="speed" value="${value}"${checked ? html` checked` : ""}>
        <span><strong>${title}</strong><span class="muted hint">${risk}</span></span>
      </label>`;
  return html`<section class="card" aria-labelledby="speed-title">
  <h2 id="speed-title">Speed</h2>
  <p class="muted hint">How deep in the chain a payer's transfer, and the settlement that pays you, must be before
    they count: sooner, or safer from a reorganisation of the chain. It applies to payments created from now on
    (an API request may still name its own); each payment keeps the speed it was created with.</p>
  <form class="speed-form" method="post" action="/dashboard/settings/speed">
    ${csrfField(data.session)}
    <fieldset class="speed-choices">
      <legend>Speed of new payments</legend>
      ${SPEEDS.map((speed) => choice(speed, SPEED_NAMES[speed], speedRisk(speed, data), data.speed === speed))}
      ${choice(
        "default",
        `Follow the server's default (${data.defaultSpeed})`,
        "Whatever the server's operator sets for every account, now and if it changes.",
        data.speed === null,
      )}
    </fieldset>
    <button class="btn" type="submit">Save speed</button>
  </form>
</section>`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
