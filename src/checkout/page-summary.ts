import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import type { PublicPaymentView } from "./public-view.ts";

/** Who is paid and how much: first on every screen. */
export function summaryHead(view: PublicPaymentView): Raw {
  const initial = (view.merchant_name.trim()[0] ?? "S").toUpperCase();
  const merchantName = view.merchant_name || "Merchant";
  const name = html`<span class="sr-only">Pay </span><span id="merchant-name">${merchantName}</span>`;
  return html`<section class="head" aria-labelledby="title">
  <h1 id="title">
    <span class="merchant"><span class="avatar" aria-hidden="true">${initial}</span><span>${name}</span></span>
    <span class="total"><span id="amount">${view.amount}</span> <span class="unit">USDC</span></span>
  </h1>
  ${view.description ? html`<p class="description" id="description">${view.description}</p>` : ""}
</section>`;
}

/** What is being paid for: line items and invoice details; after the payment panel on phones. */
export function detailsSection(view: PublicPaymentView): Raw | "" {
  const facts = factsList(view);
  if (!view.line_items && !facts) return "";
  return html`<section class="details" aria-label="Order details">
  ${view.line_items ? itemsTable(view) : ""}
  ${facts}
</section>`;
}

/** Line items with their total; a payment link's page shows its own the same way. */
export function itemsTable(view: Pick<PublicPaymentView, "line_items" | "amount">): Raw {
  return html`<table class="items">
    <caption class="sr-only">Order summary</caption>
    <thead class="sr-only"><tr><th scope="col">Item</th><th scope="col">Amount (USDC)</th></tr></thead>
    <tbody>${(view.line_items ?? []).map(
      (item) =>
        html`<tr>
          <td>
            <span class="item-name">${item.description}</span>
            <span class="item-qty">${item.quantity} × ${item.unit_amount} USDC</span>
          </td>
          <td class="num">${item.amount}</td>
        </tr>`,
    )}</tbody>
    <tfoot><tr><th scope="row">Total</th><td class="num">${view.amount} USDC</td></tr></tfoot>
  </table>`;
}

function factsList(view: PublicPaymentView): Raw | "" {
  const facts: Array<[string, unknown]> = [];
  // The documents open in their own tab: the checkout may be inside the widget's iframe.
  if (view.invoice_number)
    facts.push([
      "Invoice",
      html`<a id="invoice-link" href="/pay/${view.id}/invoice" target="_blank" rel="noopener"
        ><span id="invoice-number">${view.invoice_number}</span></a>`,
    ]);
  if (view.due_at) facts.push(["Due", timeTag(view.due_at)]);
  if (view.reference) facts.push(["Reference", view.reference]);
  if (view.customer_name) facts.push(["Billed to", view.customer_name]);
  if (view.status === "confirmed")
    facts.push([
      "Receipt",
      html`<a id="receipt-link" href="/pay/${view.id}/receipt" target="_blank" rel="noopener">View receipt</a>`,
    ]);
  if (facts.length === 0) return "";
  const rows = facts.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`);
  return html`<dl class="facts">${rows}</dl>`;
}
