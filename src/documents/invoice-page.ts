import { html } from "../html/template.ts";
import type { InvoiceData } from "./data.ts";
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

/** `{base}/pay/{id}/invoice`: the invoice as a page, complete without JavaScript; `qrSvg` encodes the pay link. */
export function invoicePage(data: InvoiceData, qrSvg: string): string {
  const facts: Array<[string, string]> = [
    ["Invoice number", data.invoiceNumber],
    ["Issued", documentDate(data.issuedAt)],
  ];
  if (data.dueAt !== null) facts.push(["Due", documentDate(data.dueAt)]);
  if (data.reference) facts.push(["Reference", data.reference]);
  const sums: Array<[string, string]> = [["Total", usdc(data.total)]];
  if (data.total !== data.amountDue) sums.push(["Received", usdc(data.total - data.amountDue)]);
  sums.push(["Amount due", usdc(data.amountDue)]);
  const qr = `data:image/svg+xml;base64,${Buffer.from(qrSvg).toString("base64")}`;
  const sheet = html`<div class="doc-head">
  ${merchantSection(data.merchant)}
  ${titleSection("Invoice", facts)}
</div>
${partySection("Bill to", data.customer)}
${data.description ? html`<p class="doc-description">${data.description}</p>` : ""}
${linesTable(data.lines, sums)}
${
  data.paid
    ? html`<section class="paid" id="paid">
  <h2>Paid</h2>
  ${data.paid.at !== null ? html`<p>Paid on ${documentDate(data.paid.at)}</p>` : ""}
  <ul>${data.paid.transfers.map((t) => html`<li>${usdc(t.amount)} on ${t.chain}: ${txLink(t)}</li>`)}</ul>
</section>`
    : html`<section class="pay-online" id="pay-online">
  <div>
    <p class="label">Pay online</p>
    <p>Pay ${usdc(data.amountDue)} at</p>
    <p><a class="tx" href="${data.payUrl}">${data.payUrl}</a></p>
    <p><a class="btn" href="${data.payUrl}">Pay now</a></p>
  </div>
  <img class="qr" src="${qr}" alt="QR code of the payment link">
</section>`
}`;
  const base = `/pay/${data.paymentId}`;
  const receipt = data.paid ? html`<a href="${base}/receipt">Receipt</a>` : "";
  const actions = html`${pdfLinks(`${base}/invoice`)}${receipt}<a href="${base}">Payment page</a>`;
  return documentPage(
    `Invoice ${data.invoiceNumber} from ${data.merchant.name}`,
    sheet,
    actions,
    `Payment ${data.paymentId}. Amounts in USDC, a US dollar stablecoin.`,
  );
}
