import type { PaymentStatus } from "../payments/store.ts";
import type { PublicPaymentView } from "./public-view.ts";
import { html } from "./html.ts";

const STATUS_TEXT: Record<PaymentStatus, string> = {
  pending: "Waiting for payment",
  underpaid: "Partly paid",
  settling: "Payment received, settling",
  overpaid: "Paid (more than requested), settling",
  confirmed: "Paid",
  expired: "Expired",
  failed: "Received, settlement delayed",
};

const STATUS_NOTICE: Partial<Record<PaymentStatus, string>> = {
  underpaid: "Part of the amount has arrived. Send the remaining amount to the same address to complete the payment.",
  expired: "This payment window has closed. Funds sent to this address are still credited and settled.",
  failed: "Your funds arrived and are safe at the deposit address. Settlement to the merchant is being retried automatically.",
  confirmed: "Thank you. The merchant has been paid.",
};

/** Security headers for server-rendered pages: nothing loads from anywhere but here. */
export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** The checkout page, complete without JavaScript: everything needed to pay is in the HTML. */
export function checkoutPage(view: PublicPaymentView, qrSvg: string): string {
  const items = view.line_items;
  const notice = STATUS_NOTICE[view.status];
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay ${view.amount} USDC to ${view.merchant_name}</title>
<link rel="stylesheet" href="/checkout.css">
</head>
<body>
<main data-payment-id="${view.id}">
  <h1>${view.merchant_name}</h1>
  <p class="amount"><span id="amount">${view.amount}</span> USDC</p>
  <p><span class="status status-${view.status}" id="status" role="status">${STATUS_TEXT[view.status]}</span></p>
  ${notice ? html`<p class="notice">${notice}</p>` : ""}
  ${view.status === "underpaid" ? html`<p class="notice">Remaining: <strong id="amount-due">${view.amount_due} USDC</strong></p>` : ""}
  ${view.description ? html`<p id="description">${view.description}</p>` : ""}
  ${items
    ? html`<table>
    <thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Amount</th></tr></thead>
    <tbody>${items.map((item) => html`<tr><td>${item.description}</td><td class="num">${item.quantity}</td><td class="num">${item.amount}</td></tr>`)}</tbody>
  </table>`
    : ""}
  <dl>
    ${view.invoice_number ? html`<dt>Invoice</dt><dd id="invoice-number">${view.invoice_number}</dd>` : ""}
    ${view.due_at ? html`<dt>Due</dt><dd><time datetime="${view.due_at}">${humanTime(view.due_at)}</time></dd>` : ""}
    ${view.reference ? html`<dt>Reference</dt><dd>${view.reference}</dd>` : ""}
    <dt>Network</dt><dd>${chainLabel(view.chain)} (chain id ${view.chain_id})</dd>
    <dt>Token</dt><dd>USDC <span class="address">${view.token_address}</span></dd>
    <dt>Pay before</dt><dd><time id="expires-at" datetime="${view.expires_at}">${humanTime(view.expires_at)}</time></dd>
  </dl>
  <h2 id="send-heading">Send exactly ${view.amount_due} USDC on ${chainLabel(view.chain)} to</h2>
  <p class="address" id="deposit-address" aria-labelledby="send-heading">${view.deposit_address}</p>
  <img class="qr" src="data:image/svg+xml;base64,${Buffer.from(qrSvg).toString("base64")}" alt="QR code of the deposit address ${view.deposit_address}">
  <footer>Only USDC on ${chainLabel(view.chain)} is credited to this address.</footer>
</main>
</body>
</html>`.toString();
}

export function notFoundPage(): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment not found</title><link rel="stylesheet" href="/checkout.css"></head>
<body><main><h1>Payment not found</h1><p>This payment link is not valid. Check the link you were given, or ask the merchant for a new one.</p></main></body></html>`.toString();
}

function humanTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function chainLabel(name: string): string {
  return name
    .split("-")
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join(" ");
}
