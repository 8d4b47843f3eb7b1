import { assetUrl } from "../html/assets.ts";
import { pageHeaders } from "../html/headers.ts";
import { html, type Raw } from "../html/template.ts";
import { DOCUMENT_ASSETS } from "./assets.ts";
import type { ChainTx, DocumentLine, DocumentMerchant } from "./data.ts";
import { usdc } from "./format.ts";

/** No script, no form, framed by nobody: a document page only shows. */
export const DOCUMENT_HEADERS = pageHeaders("'none'", "never");

/** The frame of a document page: the sheet, the links under it, and the small print. */
export function documentPage(title: string, sheet: Raw, actions: Raw, foot: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl(DOCUMENT_ASSETS.css)}">
</head>
<body>
<main class="sheet">
${sheet}
</main>
<nav class="doc-actions" aria-label="This document">${actions}</nav>
<footer class="doc-foot">${foot}</footer>
</body>
</html>`.toString();
}

export function merchantSection(m: DocumentMerchant): Raw {
  return html`<section class="merchant-block" aria-label="From">
  ${m.logoPath ? html`<img class="logo" src="${m.logoPath}" alt="${m.name}">` : ""}
  <p class="name" id="merchant-name">${m.name}</p>
  ${m.addressLines.map((line) => html`<p>${line}</p>`)}
  ${m.taxId ? html`<p>Tax ID: <span id="tax-id">${m.taxId}</span></p>` : ""}
  ${m.supportEmail ? html`<p><a href="mailto:${m.supportEmail}">${m.supportEmail}</a></p>` : ""}
</section>`;
}

export function titleSection(title: string, facts: Array<[string, string]>): Raw {
  return html`<section class="doc-title">
  <h1>${title}</h1>
  <dl class="doc-facts">${facts.map(([key, value]) => html`<dt>${key}</dt><dd>${value}</dd>`)}</dl>
</section>`;
}

export function partySection(heading: string, customer: { name: string | null; email: string | null }): Raw | "" {
  if (!customer.name && !customer.email) return "";
  return html`<section class="party">
  <p class="label">${heading}</p>
  ${customer.name ? html`<p><strong id="customer-name">${customer.name}</strong></p>` : ""}
  ${customer.email ? html`<p id="customer-email">${customer.email}</p>` : ""}
</section>`;
}

/** The items and the totals under them; the last total is the one that matters (due, paid). */
export function linesTable(lines: DocumentLine[], sums: Array<[string, string]>): Raw {
  return html`<table class="lines">
  <thead><tr><th scope="col">Description</th><th scope="col" class="num qty-col">Qty</th>
    <th scope="col" class="num qty-col">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
  <tbody>${lines.map(
    (
      line,
    ) => html`<tr><td>${line.description}<span class="line-qty">${line.quantity} × ${usdc(line.unitAmount)}</span></td>
    <td class="num qty-col">${line.quantity}</td>
    <td class="num qty-col">${usdc(line.unitAmount)}</td><td class="num">${usdc(line.amount)}</td></tr>`,
  )}</tbody>
  <tfoot>${sums.map(
    ([key, value], i) =>
      // The empty cell spans the quantity columns, which phones hide: the key stays under the description.
      html`<tr${i === sums.length - 1 ? html` class="strong"` : ""}><td class="qty-col" colspan="2"></td>
    <th scope="row" class="num">${key}</th><td class="num">${value}</td></tr>`,
  )}</tfoot>
</table>`;
}

/** A transaction hash, linked to its chain's explorer where there is one. */
export function txLink(tx: ChainTx): Raw {
  return tx.explorerUrl
    ? html`<a class="tx" href="${tx.explorerUrl}" rel="noopener">${tx.txHash}</a>`
    : html`<span class="tx">${tx.txHash}</span>`;
}

export const pdfLinks = (path: string): Raw =>
  html`<a href="${path}.pdf" download>Download PDF (A4)</a>
<a href="${path}.pdf?paper=letter" download>PDF (Letter)</a>`;
