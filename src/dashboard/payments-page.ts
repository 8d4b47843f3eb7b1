import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { isoMillis } from "../lib/clock.ts";
import { formatAmount } from "../lib/money.ts";
import type { PaymentPage } from "../payments/search.ts";
import { PAYMENT_STATUSES, type PaymentRow } from "../payments/store.ts";
import { type ListForm, listQueryString } from "./lists-filter.ts";

/** What the payments page shows: the form as typed, and the page of rows or why there is none. */
export interface PaymentsPageData {
  form: ListForm;
  page: PaymentPage | null;
  /** A filter that broke its rule: shown above the form, nothing listed. */
  error?: string;
}

/** Payments as a table: each row leads to the payment's own page. */
export function paymentsTable(rows: PaymentRow[], caption: string): Raw {
  return html`<div class="table-wrap"><table class="payments">
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr>
    <th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Reference</th>
    <th scope="col">Customer</th><th scope="col">Created</th>
  </tr></thead>
  <tbody>${rows.map(
    (row) => html`<tr>
    <td class="num"><a href="/dashboard/payments/${row.id}">${formatAmount(row.amount)} USDC</a></td>
    <td><span class="badge ${row.status}">${row.status}</span></td>
    <td class="cell-text">${row.reference ?? html`<span class="muted">—</span>`}</td>
    <td class="cell-text">${row.customer_email ?? row.customer_name ?? html`<span class="muted">—</span>`}</td>
    <td>${timeTag(isoMillis(row.created_at))}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

export function paymentsPageBody({ form, page, error }: PaymentsPageData): Raw {
  const filtered = Boolean(form.status || form.from || form.to || form.q);
  const exportHref = `/dashboard/payments.csv${listQueryString(form)}`;
  return html`<div class="page-head">
  <h1>Payments</h1>
  <a class="btn secondary" href="${exportHref}" download>Export CSV</a>
</div>
${error ? html`<p class="notice bad" role="alert">${error}</p>` : ""}
${filterForm(form)}
${page ? results(page, form, filtered) : ""}`;
}

function filterForm(form: ListForm): Raw {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${form.status === value ? html` selected` : ""}>${label}</option>`;
  return html`<form class="card filters" method="get" action="/dashboard/payments" role="search">
  <div class="field"><label for="f-status">Status</label>
    <select id="f-status" name="status">
      ${option("", "Any status")}${PAYMENT_STATUSES.map((s) => option(s, s))}
    </select></div>
  <div class="field"><label for="f-from">Created from</label>
    <input id="f-from" name="from" type="date" value="${form.from}"></div>
  <div class="field"><label for="f-to">Created to</label>
    <input id="f-to" name="to" type="date" value="${form.to}"></div>
  <div class="field grow"><label for="f-q">Search</label>
    <input id="f-q" name="q" type="search" value="${form.q}" maxlength="500"
      placeholder="Payment id, reference, invoice number or email"></div>
  <div class="filter-actions">
    <button class="btn" type="submit">Filter</button>
    <a class="btn secondary" href="/dashboard/payments">Clear</a>
  </div>
  <p class="muted small">Dates are UTC days, both included.
    Search matches a whole value exactly (email in any case).</p>
</form>`;
}

function results(page: PaymentPage, form: ListForm, filtered: boolean): Raw {
  if (page.rows.length === 0 && !page.newer && !page.older) {
    return html`<div class="card empty">${
      filtered
        ? html`<p>No payments match these filters.</p><p><a href="/dashboard/payments">Show all payments</a></p>`
        : html`<p>No payments yet.</p>
          <p><a href="/dashboard/payments/new">Create a payment</a> or a payment link and share it with a customer.</p>`
    }</div>`;
  }
  const link = (rel: "newer" | "older", id: string | null, label: string) => {
    if (!id) return html`<span class="btn secondary disabled" aria-disabled="true">${label}</span>`;
    const href = `/dashboard/payments${listQueryString(form, rel === "newer" ? { after: id } : { before: id })}`;
    return html`<a class="btn secondary" rel="${rel === "newer" ? "prev" : "next"}" href="${href}">${label}</a>`;
  };
  const table =
    page.rows.length > 0
      ? paymentsTable(page.rows, "Payments, newest first")
      : html`<p class="empty">Nothing on this page.</p>`;
  const pager =
    page.newer || page.older
      ? html`<nav class="pager" aria-label="Pages">
    ${link("newer", page.newer, "← Newer")}${link("older", page.older, "Older →")}</nav>`
      : "";
  return html`<section class="card flush" aria-label="Payments">
  ${table}
  ${pager}
</section>`;
}
