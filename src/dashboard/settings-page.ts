import { html, type Raw } from "../html/template.ts";

export interface SettingsPageData {
  accountId: string;
  accountName: string;
  payoutAddress: string;
  feeBps: number;
  /** Whether the fee is the account's own or the server's STABLEGATE_FEE_BPS. */
  feeSource: "account" | "server";
  chain: { name: string; chainId: number; usdc: string; confirmations: number };
  relayer: { address: string; balance: string | null };
}

/** /dashboard/settings: what the account is and where its money goes; read-only by design. */
export function settingsBody(data: SettingsPageData): Raw {
  const percent = (data.feeBps / 100).toFixed(2).replace(/\.?0+$/, "");
  const feeText =
    data.feeBps === 0
      ? "No platform fee: each payment is forwarded whole to the payout address."
      : `${percent}% of every amount received goes to the platform's fee recipient (rounded down to ` +
        "the micro-USDC); the rest goes to the payout address.";
  return html`<div class="admin-head"><h1>Settings</h1></div>
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
  </dl>
</section>
<section class="card" aria-labelledby="chain-title">
  <h2 id="chain-title">Settlement chain</h2>
  <dl class="settings">
    <div><dt>Chain</dt>
      <dd id="chain-name">${data.chain.name} <span class="muted">(chain id ${data.chain.chainId})</span></dd></div>
    <div><dt>USDC contract</dt><dd class="mono">${data.chain.usdc}</dd></div>
    <div><dt>Confirmations</dt>
      <dd>${plural(data.chain.confirmations, "block")} before a transfer is credited</dd></div>
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

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
