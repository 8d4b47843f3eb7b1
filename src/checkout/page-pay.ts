import type { PaymentStatus } from "../payments/store.ts";
import { html, type Raw } from "./html.ts";
import { timeTag } from "./page-summary.ts";
import type { PublicPaymentView } from "./public-view.ts";

/** Status names shown to the payer; the page script gets the same table, so wording lives here. */
export const STATUS_LABELS: Record<PaymentStatus | "incoming", string> = {
  pending: "Awaiting payment",
  incoming: "Payment seen, confirming",
  underpaid: "Partly paid",
  settling: "Payment received",
  overpaid: "Payment received",
  confirmed: "Paid",
  expired: "Expired",
  failed: "Received, funds safe",
};

/** Statuses in which the payer may (still) send funds. */
export const PAYABLE: PaymentStatus[] = ["pending", "underpaid", "expired"];

export interface PayContext {
  chainLabel: string;
  qrDataUri: string;
}

/** Marks an element as belonging to `states`; hidden unless the payment is in one of them. */
function when(states: PaymentStatus[], status: PaymentStatus): Raw {
  return html`data-state="${states.join(" ")}"${states.includes(status) ? "" : html` hidden`}`;
}

const field = (name: keyof PublicPaymentView, value: unknown) => html`<strong data-field="${name}">${value}</strong>`;

/** Status, notices for every state, and the ways to pay: wallet, manual transfer, cross-chain. */
export function paySection(view: PublicPaymentView, ctx: PayContext): Raw {
  const s = view.status;
  const seen = PAYABLE.includes(s) && (view.incoming_transfers.some((t) => !t.confirmed) || burnInFlight(view));
  const shown = seen ? "incoming" : s;
  return html`<section class="pay" aria-labelledby="pay-title">
  <h2 id="pay-title" class="sr-only">Payment</h2>
  <div class="state">
  <div class="status-row">
    <p class="status" data-status="${shown}" role="status" aria-atomic="true">
      <span class="dot" aria-hidden="true"></span><span id="status-label">${STATUS_LABELS[shown]}</span>
    </p>
    <p class="countdown" id="countdown" hidden>
      <span class="sr-only">Time left to pay: </span><span id="countdown-value" role="timer">--:--</span>
    </p>
  </div>
  <div class="notices" aria-live="polite">
    <p class="notice info" id="incoming"${seen ? "" : html` hidden`}>We can see your payment on its way.
      It is waiting for network confirmations; this page updates by itself.</p>
    <p class="notice warn" ${when(["underpaid"], s)}>${field("amount_received", view.amount_received)} of ${view.amount}
      USDC received. Send the remaining ${field("amount_due", view.amount_due)} USDC to the same address to complete the
      payment.</p>
    <p class="notice info" ${when(["settling"], s)}>Your payment has arrived and is being forwarded to the merchant.
      This takes a few moments.</p>
    <p class="notice warn" ${when(["overpaid"], s)}>You sent ${field("amount_received", view.amount_received)} USDC,
      more than the ${view.amount} USDC requested. The payment goes through and the merchant receives all of it;
      contact them about the difference.</p>
    <div class="notice ok" ${when(["confirmed"], s)}>
      <p>Payment complete. Thank you!</p>
      <p class="return"${view.success_url ? "" : html` hidden`}>
        <a class="btn primary" id="return-link" href="${view.success_url ?? "#"}">Return to the merchant</a>
        <span id="redirect-note"></span>
      </p>
    </div>
    <p class="notice warn" ${when(["expired"], s)}>The time to pay has run out. A payment sent to this address is
      still credited and forwarded to the merchant, so if yours is on its way there is nothing more to do. If you have
      not paid yet, check with the merchant first.</p>
    <p class="notice warn" ${when(["failed"], s)}>Your funds arrived and are safe at the deposit address. Passing them
      on to the merchant has not gone through yet and is retried automatically. You do not need to pay again.</p>
    <p class="notice bad" id="net-notice" hidden></p>
  </div>
  </div>
  <div class="methods" ${when(PAYABLE, s)}>
    <div class="wallet" id="wallet" hidden>
      <div class="wallet-options" id="wallet-options"></div>
      <p class="wallet-none" id="wallet-none" hidden>No browser wallet found on this device.
        Scan the QR code with a mobile wallet, or send the USDC yourself.</p>
      <p class="wallet-msg" id="wallet-msg" role="status"></p>
      <button class="btn link" id="wallet-cancel" type="button" hidden>Cancel</button>
      <p class="divider" id="wallet-divider"><span>or send it yourself</span></p>
    </div>
    ${manualTransfer(view, ctx)}
    ${crossChainPanel(ctx)}
  </div>
  <p class="expiry" ${when(["pending", "underpaid"], s)}>Pay before ${timeTag(view.expires_at, "expires-at")}</p>
  <noscript><p class="expiry"><a href="">Reload this page</a> to see the latest status.</p></noscript>
</section>`;
}

/** A cross-chain burn on its way (the list's items come from src/crosschain's burn view). */
function burnInFlight(view: PublicPaymentView): boolean {
  return view.cross_chain_transfers.some((b) => {
    const state = (b as { state?: unknown } | null)?.state;
    return state === "attesting" || state === "redeeming";
  });
}

function manualTransfer(view: PublicPaymentView, ctx: PayContext): Raw {
  // The chain ID, unless the label already names it.
  const chainId = ctx.chainLabel.includes(String(view.chain_id))
    ? ""
    : html` <span class="muted">(chain ID ${view.chain_id})</span>`;
  return html`<div class="manual">
    <h3 id="send-heading">Send <span data-field="amount_due">${view.amount_due}</span> USDC on ${ctx.chainLabel}</h3>
    <div class="manual-body">
      <img class="qr" width="176" height="176" src="${ctx.qrDataUri}" alt="QR code of the deposit address">
      <dl class="send">
        <div>
          <dt>Amount</dt>
          <dd><span class="mono" id="amount-due" data-field="amount_due">${view.amount_due}</span> USDC
            <button class="copy" type="button" data-copy="amount-due"
              aria-label="Copy amount" hidden>Copy</button>
          </dd>
        </div>
        <div>
          <dt>To address</dt>
          <dd><code class="address" id="deposit-address">${view.deposit_address}</code>
            <button class="copy" type="button" data-copy="deposit-address"
              aria-label="Copy address" hidden>Copy</button>
          </dd>
        </div>
        <div><dt>Network</dt><dd id="network">${ctx.chainLabel}${chainId}</dd></div>
        <div><dt>Token</dt><dd>USDC <code class="address small">${view.token_address}</code></dd></div>
      </dl>
    </div>
    <p class="fine">Send only USDC on ${ctx.chainLabel}. Other tokens and networks are not credited.</p>
    <p class="sr-only" id="copy-live" aria-live="polite"></p>
  </div>`;
}

function crossChainPanel(ctx: PayContext): Raw {
  return html`<div class="crosschain" id="crosschain" hidden>
    <h3>Pay from another network</h3>
    <p class="muted">USDC sent from another chain is moved to ${ctx.chainLabel} with Circle CCTP and credited here.</p>
    <div class="cc-row">
      <label for="cc-chain">Source network</label>
      <select id="cc-chain"></select>
      <button class="btn secondary" id="cc-quote" type="button">Get quote</button>
    </div>
    <div class="cc-quote" id="cc-quote-out" hidden></div>
    <button class="btn primary" id="cc-pay" type="button" hidden>Pay with wallet</button>
    <p class="wallet-msg" id="cc-msg" role="status"></p>
    <ul class="cc-transfers" id="cc-transfers" hidden></ul>
  </div>`;
}
