import { html } from "../html/template.ts";
import type { ReceiptData } from "./data.ts";
import { documentDate, usdc } from "./format.ts";
import {
  documentPage,
  linesTable,
  merchantSection,
  partySection,
  pdfLinks,
  titleSection,
  txLink,
} from "./page-frame.ts";

/** `{base}/pay/{id}/receipt`: what was paid, the transfers on chain and any refunds, without JavaScript. */
export function receiptPage(data: ReceiptData): string {
  const facts: Array<[string, string]> = [["Paid", documentDate(data.paidAt)]];
  if (data.invoiceNumber) facts.push(["Invoice number", data.invoiceNumber]);
  if (data.reference) facts.push(["Reference", data.reference]);
  const sums: Array<[string, string]> = [
    ["Total", usdc(data.total)],
    ["Amount paid", usdc(data.amountReceived)],
  ];
  // Refunds come off what was paid: the last line is what the customer paid in the end.
  if (data.amountRefunded > 0n)
    sums.push(
      ["Refunded", `-${usdc(data.amountRefunded)}`],
      ["Net paid", usdc(data.amountReceived - data.amountRefunded)],
    );
  const sheet = html`<div class="doc-head">
  ${merchantSection(data.merchant)}
  ${titleSection("Receipt", facts)}
</div>
${partySection("Received from", data.customer)}
${data.description ? html`<p class="doc-description">${data.description}</p>` : ""}
${linesTable(data.lines, sums)}
<h2 class="section">Transfers</h2>
<table class="lines" id="transfers">
  <thead><tr><th scope="col">Chain</th><th scope="col" class="num">Amount</th>
    <th scope="col">Transaction</th></tr></thead>
  <tbody>${data.transfers.map(
    (t) => html`<tr><td>${t.chain}</td><td class="num">${usdc(t.amount)}</td><td>${txLink(t)}</td></tr>`,
  )}</tbody>
</table>
${
  data.refunds.length > 0
    ? html`<h2 class="section">Refunds</h2>
<table class="lines" id="refunds">
  <thead><tr><th scope="col">Date</th><th scope="col" class="num">Amount</th>
    <th scope="col">Transaction</th></tr></thead>
  <tbody>${data.refunds.map(
    (r) =>
      html`<tr><td>${documentDate(r.succeededAt)}</td><td class="num">${usdc(r.amount)}</td><td>${txLink(r)}</td></tr>`,
  )}</tbody>
</table>`
    : ""
}`;
  const base = `/pay/${data.paymentId}`;
  const invoice = data.invoiceNumber ? html`<a href="${base}/invoice">Invoice</a>` : "";
  const actions = html`${pdfLinks(`${base}/receipt`)}${invoice}<a href="${base}">Payment page</a>`;
  return documentPage(
    `Receipt from ${data.merchant.name}`,
    sheet,
    actions,
    `Payment ${data.paymentId}. Amounts in USDC, a US dollar stablecoin.`,
  );
}
