import { html, type Raw } from "../html/template.ts";
import { csrfField, type DashboardSession } from "./kit.ts";
import {
  BLANK_ITEM_ROWS,
  type ErrorPlace,
  type ItemValues,
  type NewPaymentValues,
  placeOf,
} from "./new-payment-form.ts";

export interface NewPaymentFormData {
  session: DashboardSession;
  values: NewPaymentValues;
  /** The one-time token that makes a second submit of this form find the first one's payment. */
  nonce: string;
  /** Why the last submit created nothing; shown beside the field it names and above the form. */
  error: string | null;
}

/** The body of /dashboard/payments/new: a fixed amount or line items, and what the checkout shows. */
export function newPaymentBody(data: NewPaymentFormData): Raw {
  const place: ErrorPlace | null = data.error === null ? null : placeOf(data.error);
  const fieldError = (field: string) =>
    place && "field" in place && place.field === field ? errorText(field, data.error!) : "";
  const input = (field: keyof Omit<NewPaymentValues, "items">, label: string, attrs: Raw, hint = "") =>
    html`<div class="field">
    <label for="np-${field}">${label}</label>
    <input id="np-${field}" name="${field}" value="${data.values[field]}" ${attrs}${invalid(
      fieldError(field) !== "",
      field,
    )}>
    ${hint ? html`<p class="muted np-hint">${hint}</p>` : ""}${fieldError(field)}
  </div>`;
  const itemsInvalid = place !== null && ("row" in place || ("field" in place && place.field === "line_items"));
  const rows = [...data.values.items];
  while (rows.length < Math.max(BLANK_ITEM_ROWS, data.values.items.length + 1)) rows.push(blankItem());
  return html`<h1>New payment</h1>
${data.error ? html`<p class="notice bad" role="alert">Nothing was created: ${data.error}</p>` : ""}
<form class="np-form" method="post" action="/dashboard/payments/new" novalidate>
  ${csrfField(data.session)}<input type="hidden" name="nonce" value="${data.nonce}">
  <section class="card np-section" aria-labelledby="np-amount-title">
    <h2 id="np-amount-title">Amount</h2>
    ${input(
      "amount",
      "Amount (USDC)",
      html`inputmode="decimal" autocomplete="off" placeholder="25.00"`,
      "Leave empty to charge the total of the line items below; if you fill in both, they must agree.",
    )}
    <fieldset class="np-items"${invalid(itemsInvalid, "line_items")}>
      <legend>Line items <span class="muted">(optional)</span></legend>
      ${fieldError("line_items")}
      <div class="np-item-head" aria-hidden="true">
        <span>Description</span><span>Unit price (USDC)</span><span>Quantity</span>
      </div>
      ${rows.map((item, i) => itemRow(item, i, place, data.error))}
      <p class="muted np-hint">Empty rows are ignored.
        <button class="btn link" type="button" data-add-item hidden>Add a row</button></p>
    </fieldset>
  </section>
  <section class="card np-section" aria-labelledby="np-details-title">
    <h2 id="np-details-title">Shown at checkout</h2>
    ${input("description", "Description", html`maxlength="500" autocomplete="off"`)}
    ${input("reference", "Reference", html`maxlength="500" autocomplete="off"`, "Your own order number.")}
    ${input("invoice_number", "Invoice number", html`maxlength="100" autocomplete="off"`)}
    ${input("customer_name", "Customer name", html`maxlength="200" autocomplete="off"`)}
    ${input("customer_email", "Customer email", html`type="email" maxlength="320" autocomplete="off"`)}
    ${input(
      "due_at",
      "Due date",
      html`type="date"`,
      "Payable until the end of that day (UTC). Leave empty for the usual payment window.",
    )}
  </section>
  <div><button class="btn" type="submit">Create payment</button></div>
</form>`;
}

function itemRow(item: ItemValues, i: number, place: ErrorPlace | null, error: string | null): Raw {
  const bad = place && "row" in place && place.row === i ? place.column : null;
  const cell = (column: keyof ItemValues, label: string, attrs: Raw) =>
    html`<label class="np-cell"><span class="sr-only">${label}</span>
      <input name="item_${column}" value="${item[column]}" autocomplete="off" ${attrs}${invalid(
        bad === column,
        `item-${i}`,
      )}></label>`;
  return html`<div class="np-item">
    ${cell("description", `Item ${i + 1} description`, html`maxlength="500" placeholder="Item ${i + 1}"`)}
    ${cell("unit_amount", `Item ${i + 1} unit price (USDC)`, html`inputmode="decimal" placeholder="0.00"`)}
    ${cell("quantity", `Item ${i + 1} quantity`, html`inputmode="numeric"`)}
    ${bad ? errorText(`item-${i}`, error!) : ""}
  </div>`;
}

const blankItem = (): ItemValues => ({ description: "", unit_amount: "", quantity: "1" });

const invalid = (yes: boolean, id: string): Raw | "" =>
  yes ? html` aria-invalid="true" aria-describedby="np-${id}-error"` : "";

const errorText = (id: string, message: string): Raw => html`<p class="field-error" id="np-${id}-error">${message}</p>`;
