import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { AWAITING_FUNDS } from "../payments/states.ts";
import type { PaymentStatus } from "../payments/store.ts";
import { transfersList } from "./page-transfers.ts";
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
const PAYABLE = AWAITING_FUNDS;

/** A network the payer may send on, as the page shows it. */
export interface ShownNetwork {
  chain: string;
  chainId: number;
  label: string;
  usdc: string;
  /** The deposit address alone when it is the only network, else this network's EIP-681 request. */
  qrDataUri: string;
}

export interface PayContext {
  /** The settlement chain's name for people. */
  chainLabel: string;
  /** The settlement chain first; more than one only for a deposit address valid on source chains. */
  networks: ShownNetwork[];
}

/** Marks an element as belonging to `states`; hidden unless the payment is in one of them. */
function when(states: readonly PaymentStatus[], status: PaymentStatus): Raw {
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
      USDC received. Send the remaining ${field("amount_due", view.amount_due)} USDC to the same address
      ${ctx.networks.length > 1 ? "(on any of the networks below) " : ""}to complete the payment.</p>
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
  ${transfersList(view, ctx.networks)}
  <div class="methods" ${when(PAYABLE, s)}>
    <div class="wallet" id="wallet" hidden>
      ${ctx.networks.length > 1 ? walletNetworkPicker(ctx.networks) : ""}
      <p class="notice warn" id="gas-notice" hidden></p>
      <div class="wallet-options" id="wallet-options"></div>
      <p class="wallet-hint" id="gasless-hint" hidden>Pay without gas: you sign the payment in your wallet and the
        network fee is paid for you, so you need no ETH.</p>
      <p class="wallet-none" id="wallet-none" hidden>No browser wallet found on this device.
        Scan ${ctx.networks.length > 1 ? "a QR code below" : "the QR code"} with a mobile wallet, or send the USDC
        yourself.</p>
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

/** A cross-chain burn on its way (the list's items come from src/chain/redeeming's burn view). */
function burnInFlight(view: PublicPaymentView): boolean {
  return view.cross_chain_transfers.some((b) => {
    const state = (b as { state?: unknown } | null)?.state;
    return state === "attesting" || state === "redeeming";
  });
}

function manualTransfer(view: PublicPaymentView, ctx: PayContext): Raw {
  const [only, ...others] = ctx.networks;
  if (!only) return html``;
  if (others.length > 0) return manyNetworks(view, ctx.networks);
  // The chain ID, unless the label already names it.
  const chainId = only.label.includes(String(only.chainId))
    ? ""
    : html` <span class="muted">(chain ID ${only.chainId})</span>`;
  return html`<div class="manual">
    <h3 id="send-heading">Send <span data-field="amount_due">${view.amount_due}</span> USDC on ${only.label}</h3>
    <div class="manual-body">
      <img class="qr" width="176" height="176" src="${only.qrDataUri}" alt="QR code of the deposit address">
      <dl class="send">
        ${amountRow(view)}
        ${addressRow(view, "")}
        <div><dt>Network</dt><dd id="network">${only.label}${chainId}</dd></div>
        <div><dt>Token</dt><dd>USDC <code class="address small">${only.usdc}</code></dd></div>
      </dl>
    </div>
    <p class="fine">Send only USDC on ${only.label}. Other tokens and networks are not credited.</p>
    <p class="sr-only" id="copy-live" aria-live="polite"></p>
  </div>`;
}

/** One address, valid on several networks: each gets its own QR (an EIP-681 request naming it). */
function manyNetworks(view: PublicPaymentView, networks: ShownNetwork[]): Raw {
  return html`<div class="manual">
    <h3 id="send-heading">Send <span data-field="amount_due">${view.amount_due}</span> USDC</h3>
    <dl class="send">
      ${amountRow(view)}
      ${addressRow(view, html`<span class="same-address">The same address on every network below.</span>`)}
    </dl>
    <h4 class="networks-title" id="networks-title">Send USDC on any of these networks</h4>
    <p class="networks-hint">Each code is a payment request for its network: wallets that read them (EIP-681) fill
      in the address, the amount and the network.</p>
    <ul class="networks" aria-labelledby="networks-title">${networks.map(
      (n) => html`<li class="network" data-chain="${n.chain}">
        <img class="qr" width="148" height="148" src="${n.qrDataUri}" data-qr-chain="${n.chain}"
          alt="QR code: pay in USDC on ${n.label}">
        <span class="network-name">${n.label}</span>
        ${n.label.includes(String(n.chainId)) ? "" : html`<span class="network-meta">Chain ID ${n.chainId}</span>`}
        <span class="network-meta">USDC contract <code class="address">${n.usdc}</code></span>
      </li>`,
    )}</ul>
    <p class="only-usdc" role="note"><strong>Send only USDC, and only on a network listed here.</strong> Any other
      token, or USDC on any other network, is not credited to this payment.</p>
    <p class="sr-only" id="copy-live" aria-live="polite"></p>
  </div>`;
}

function amountRow(view: PublicPaymentView): Raw {
  return html`<div>
          <dt>Amount</dt>
          <dd><span class="mono" id="amount-due" data-field="amount_due">${view.amount_due}</span> USDC
            <button class="copy" type="button" data-copy="amount-due"
              aria-label="Copy amount" hidden>Copy</button>
          </dd>
        </div>`;
}

function addressRow(view: PublicPaymentView, note: Raw | ""): Raw {
  return html`<div>
          <dt>To address</dt>
          <dd><code class="address" id="deposit-address">${view.deposit_address}</code>
            <button class="copy" type="button" data-copy="deposit-address"
              aria-label="Copy address" hidden>Copy</button>${note}
          </dd>
        </div>`;
}

/** The network a wallet pays on; the script adds the wallets' buttons under it. */
function walletNetworkPicker(networks: ShownNetwork[]): Raw {
  const options = networks.map((n) => html`<option value="${n.chain}">${n.label}</option>`);
  return html`<div class="wallet-network" id="wallet-network-row">
        <label for="wallet-network">Network to pay on</label>
        <select id="wallet-network">${options}</select>
      </div>`;
}

/** The payer's own CCTP burn; where the address takes other networks directly, it is the longer way. */
function crossChainPanel(ctx: PayContext): Raw {
  const direct = ctx.networks.length > 1;
  const what = direct ? "Your wallet burns USDC on another network; it" : "USDC sent from another chain";
  return html`<div class="crosschain" id="crosschain" hidden>
    <h3>${direct ? "Or bridge it yourself" : "Pay from another network"}</h3>
    <p class="muted">${what} is moved to ${ctx.chainLabel} with Circle CCTP and credited here.</p>
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
