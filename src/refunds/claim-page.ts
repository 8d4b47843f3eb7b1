import { explorerFor } from "../chain/explorer.ts";
import { chainLabel } from "../checkout/chain-info.ts";
import { layout, messagePage } from "../checkout/page.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { isoMillis } from "../lib/clock.ts";
import { asSentence } from "../lib/errors.ts";
import { formatExact } from "../lib/money.ts";
import type { PaymentRow } from "../payments/store.ts";
import type { RefundRow, RefundStatus } from "./store.ts";

/**
 * What the claim page shows, and all of it: whoever holds the link is the payer, so nothing of
 * the merchant's own (reason, metadata, fee, payout address, account) nor the customer's email.
 */
export interface ClaimView {
  status: RefundStatus;
  merchantName: string;
  amount: string;
  chain: string;
  refundAddress: string | null;
  txHash: string | null;
  txUrl: string | null;
  payment: {
    description: string | null;
    reference: string | null;
    invoiceNumber: string | null;
    amountPaid: string;
    createdAt: string;
  };
}

export function claimView(refund: RefundRow, payment: PaymentRow, merchantName: string, chainName: string): ClaimView {
  const explorer = explorerFor({ name: chainName, chainId: refund.chain_id });
  return {
    status: refund.status,
    merchantName: merchantName || "The merchant",
    amount: formatExact(refund.amount),
    chain: chainLabel(chainName, refund.chain_id),
    refundAddress: refund.refund_address,
    txHash: refund.tx_hash,
    txUrl: refund.tx_hash && explorer ? explorer.tx(refund.tx_hash) : null,
    payment: {
      description: payment.description,
      reference: payment.reference,
      invoiceNumber: payment.invoice_number,
      amountPaid: formatExact(payment.amount_received ?? 0n),
      createdAt: isoMillis(payment.created_at)!,
    },
  };
}

export interface ClaimPageOptions {
  /** Where the form posts: the page's own path, which holds the token. */
  action: string;
  /** Why the last claim was refused (shown above the form, or above the state on a conflict). */
  error?: string;
  /** What the payer had typed, given back with the refusal. */
  address?: string;
}

/** The payer's claim page: who refunds what, and the form or where the refund stands. */
export function claimPage(view: ClaimView, opts: ClaimPageOptions): string {
  const merchant = html`<span class="sr-only">Refund from </span><span id="merchant-name">${view.merchantName}</span>`;
  const body = html`<main class="checkout claim-page">
  <section class="head" aria-labelledby="title">
    <h1 id="title">
      <span class="merchant"><span class="avatar" aria-hidden="true">${initial(view.merchantName)}</span>
        <span>${merchant}</span></span>
      <span class="total"><span id="amount">${view.amount}</span> <span class="unit">USDC</span></span>
    </h1>
    <p class="description">Your refund, paid in USDC on ${view.chain}</p>
  </section>
  <section class="pay" aria-label="Refund">
    ${opts.error ? html`<p class="notice bad" role="alert" id="claim-error">${asSentence(opts.error)}</p>` : ""}
    ${view.status === "awaiting_address" ? claimForm(view, opts) : stateSection(view)}
  </section>
  ${paymentSection(view)}
</main>`;
  return layout(`Refund of ${view.amount} USDC from ${view.merchantName}`, body, {
    embed: false,
    scripts: false,
    foot: "Refunds by Stablegate. The merchant sends the refund from their own wallet.",
  });
}

function claimForm(view: ClaimView, opts: ClaimPageOptions): Raw {
  return html`<form class="claim-form" method="post" action="${opts.action}">
    <div class="notice warn" id="address-warning">
      <p><strong>Use your own wallet.</strong> Do not enter an exchange deposit address: funds sent to an
        exchange's address may be lost.</p>
      <p>The address cannot be changed once given.</p>
    </div>
    <div class="field">
      <label for="refund-address">Refund address</label>
      <input id="refund-address" name="refund_address" type="text" required maxlength="64" autocomplete="off"
        autocapitalize="off" spellcheck="false" placeholder="0x…" value="${opts.address ?? ""}"
        ${opts.error ? html`aria-describedby="claim-error address-hint"` : html`aria-describedby="address-hint"`}>
      <p class="fine" id="address-hint">A wallet address on ${view.chain} that can receive USDC. ${view.merchantName}
        sends ${view.amount} USDC to it.</p>
    </div>
    <label class="confirm" for="confirm">
      <input id="confirm" name="confirm" type="checkbox" value="yes" required>
      <span>This is my own wallet on ${view.chain}, and it can receive USDC.</span>
    </label>
    <button class="btn primary" type="submit">Claim refund</button>
  </form>`;
}

function stateSection(view: ClaimView): Raw {
  const to = html`<span class="address" id="refund-address">${view.refundAddress}</span>`;
  const tx = view.txHash
    ? view.txUrl
      ? html`<a class="mono" id="refund-tx" href="${view.txUrl}">${view.txHash}</a>`
      : html`<span class="mono" id="refund-tx">${view.txHash}</span>`
    : "";
  switch (view.status) {
    case "awaiting_payment":
      return html`<p class="status" data-status="${view.txHash ? "incoming" : "pending"}" id="refund-status">
      <span class="dot" aria-hidden="true"></span>${view.txHash ? "Transfer seen, confirming" : "Address recorded"}</p>
    <p id="refund-next">${view.merchantName} will send ${view.amount} USDC to ${to} on ${view.chain}.</p>
    ${view.txHash ? html`<p class="fine">Transfer ${tx}</p>` : html`<p class="fine">${nextSteps(view)}</p>`}`;
    case "succeeded":
      return html`<p class="status" data-status="confirmed" id="refund-status">
      <span class="dot" aria-hidden="true"></span>Refunded</p>
    <p id="refund-next">${view.amount} USDC was sent to ${to} on ${view.chain}.</p>
    <p class="fine">Transfer ${tx}</p>`;
    default:
      return html`<p class="status" data-status="expired" id="refund-status">
      <span class="dot" aria-hidden="true"></span>Canceled</p>
    <p id="refund-next">This refund was canceled by the merchant. If you were expecting it, contact
      ${view.merchantName}.</p>`;
  }
}

const nextSteps = (view: ClaimView) =>
  `The address cannot be changed now. This page shows the transfer once ${view.merchantName} has sent it.`;

/** The payment being refunded, in the payer's terms. */
function paymentSection(view: ClaimView): Raw {
  const p = view.payment;
  const facts: Array<[string, unknown]> = [];
  if (p.description) facts.push(["For", html`<span id="payment-description">${p.description}</span>`]);
  if (p.invoiceNumber) facts.push(["Invoice", p.invoiceNumber]);
  if (p.reference) facts.push(["Reference", p.reference]);
  facts.push(["You paid", html`<span id="amount-paid">${p.amountPaid} USDC</span>`]);
  facts.push(["Date", timeTag(p.createdAt)]);
  const rows = facts.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`);
  return html`<section class="details" aria-labelledby="payment-title">
    <h2 id="payment-title" class="details-title">Your payment</h2>
    <dl class="facts">${rows}</dl>
  </section>`;
}

/** A refusal that lifts with time: `reason` says why and how long, in the payer's words. */
export const claimBusyPage = (reason: string): string =>
  messagePage("Please try again shortly", `${asSentence(reason)} Then open the refund link again.`);

const initial = (name: string) => (name.trim()[0] ?? "S").toUpperCase();
