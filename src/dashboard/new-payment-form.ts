import { randomBase62 } from "../lib/ids.ts";

/**
 * The new-payment form as text, both ways: what was typed (kept when the form comes back with a
 * message) and the create-payment request it stands for, which the payments service validates
 * exactly as it validates the API's. The inputs carry the API's field names, so a message
 * ("due_at must be in the future") names the field it belongs next to.
 */
export interface NewPaymentValues {
  amount: string;
  description: string;
  reference: string;
  invoice_number: string;
  customer_name: string;
  customer_email: string;
  /** A date input's value, "2026-12-01": due at the end of that day, UTC, as the API reads it. */
  due_at: string;
  items: ItemValues[];
}

export interface ItemValues {
  description: string;
  unit_amount: string;
  quantity: string;
}

/** Blank item rows a form offers without JavaScript; rows left empty are ignored. */
export const BLANK_ITEM_ROWS = 5;

const TEXT_FIELDS = [
  "amount",
  "description",
  "reference",
  "invoice_number",
  "customer_name",
  "customer_email",
] as const;

export const emptyValues = (): NewPaymentValues => ({
  amount: "",
  description: "",
  reference: "",
  invoice_number: "",
  customer_name: "",
  customer_email: "",
  due_at: "",
  items: [],
});

/**
 * What was typed, with empty item rows dropped: the request's line_items[i] is the form's row i,
 * so a message about line_items[1] lands on the second row shown.
 */
export function readValues(form: URLSearchParams): NewPaymentValues {
  const values = emptyValues();
  for (const field of TEXT_FIELDS) values[field] = (form.get(field) ?? "").trim();
  values.due_at = (form.get("due_at") ?? "").trim();
  const descriptions = form.getAll("item_description");
  const units = form.getAll("item_unit_amount");
  const quantities = form.getAll("item_quantity");
  for (const [i, text] of descriptions.entries()) {
    const item = {
      description: text.trim(),
      unit_amount: (units[i] ?? "").trim(),
      quantity: (quantities[i] ?? "").trim(),
    };
    // A row's quantity starts at 1: a row is used once it has a description or a price.
    if (item.description !== "" || item.unit_amount !== "") values.items.push(item);
  }
  return values;
}

/**
 * The create-payment request the values stand for: empty fields left out, amounts typed as
 * "25" or "25.5" written with two decimals, a row's empty quantity 1. Anything else is passed
 * as typed, for the service to accept or refuse with the API's message.
 */
export function toRequest(values: NewPaymentValues): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  if (values.amount !== "") request.amount = twoDecimals(values.amount);
  for (const field of ["description", "reference", "invoice_number", "customer_name", "customer_email"] as const)
    if (values[field] !== "") request[field] = values[field];
  if (values.due_at !== "") request.due_at = values.due_at;
  if (values.items.length > 0) {
    request.line_items = values.items.map((item) => ({
      description: item.description,
      unit_amount: twoDecimals(item.unit_amount),
      quantity: item.quantity === "" ? 1 : /^\d{1,9}$/.test(item.quantity) ? Number(item.quantity) : item.quantity,
    }));
  }
  return request;
}

function twoDecimals(text: string): string {
  const match = /^(\d+)(?:\.(\d?))?$/.exec(text);
  return match ? `${match[1]}.${(match[2] ?? "").padEnd(2, "0")}` : text;
}

/** Where a validation message belongs: a field, an item row's column, or the form as a whole. */
export type ErrorPlace = { field: string } | { row: number; column: string } | { form: true };

/** Reads the place from the message's leading field path ("amount ...", "line_items[2].quantity ..."). */
export function placeOf(message: string): ErrorPlace {
  const item = /^line_items\[(\d+)\]\.(description|unit_amount|quantity)\b/.exec(message);
  if (item) return { row: Number(item[1]), column: item[2]! };
  const field = /^([a-z_]+)\b/.exec(message)?.[1];
  if (field === "line_items") return { field: "line_items" };
  if (field && (TEXT_FIELDS as readonly string[]).includes(field)) return { field };
  if (field === "due_at") return { field };
  return { form: true };
}

/** A one-time token per rendered form, sent back as the Idempotency-Key of the create. */
export const newNonce = (): string => randomBase62(24);
export const NONCE = /^[0-9A-Za-z]{24}$/;
/** The Idempotency-Key a form's nonce stands for, apart from any key an API client sends. */
export const formIdempotencyKey = (nonce: string): string => `dashboard-form:${nonce}`;
