import { ValidationError } from "../lib/errors.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import { parseIsoInstant } from "../lib/iso-time.ts";
import { MAX_SEARCH_LENGTH, type PageCursor, type PaymentFilter } from "../payments/search.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../payments/store.ts";

/** The payments page's filter form as typed, to show it again (and to keep it in links). */
export interface ListForm {
  status: string;
  from: string;
  to: string;
  q: string;
}

const DAY_MS = 86_400_000;

/** The form's fields from a query string; absent ones are empty. */
export function listForm(query: URLSearchParams): ListForm {
  const field = (name: string) => (query.get(name) ?? "").trim();
  return { status: field("status"), from: field("from"), to: field("to"), q: field("q") };
}

/**
 * The filter the form asks for: dates are whole UTC days, `to` included; an empty field filters
 * nothing. A field that breaks its rule is a ValidationError naming it.
 */
export function listFilter(form: ListForm): PaymentFilter {
  const filter: PaymentFilter = {};
  if (form.status) {
    if (!(PAYMENT_STATUSES as readonly string[]).includes(form.status))
      throw new ValidationError(`status must be one of ${PAYMENT_STATUSES.join(", ")}`);
    filter.status = form.status as PaymentStatus;
  }
  if (form.from) filter.createdGte = day("from", form.from);
  if (form.to) filter.createdLt = day("to", form.to) + DAY_MS;
  if (filter.createdGte !== undefined && filter.createdLt !== undefined && filter.createdLt <= filter.createdGte)
    throw new ValidationError("to must be on or after from");
  if (form.q) {
    if (form.q.length > MAX_SEARCH_LENGTH)
      throw new ValidationError(`q (search) must be at most ${MAX_SEARCH_LENGTH} characters`);
    filter.search = form.q;
  }
  return filter;
}

/** Which page: `before` or `after` a payment id, as the Older and Newer links carry them. */
export function listCursor(query: URLSearchParams): PageCursor {
  const before = query.get("before") ?? undefined;
  const after = query.get("after") ?? undefined;
  if (before !== undefined && after !== undefined) throw new ValidationError("give before or after, not both");
  for (const [name, value] of [
    ["before", before],
    ["after", after],
  ] as const)
    if (value !== undefined && !PAYMENT_ID.test(value)) throw new ValidationError(`${name} must be a payment id`);
  return { before, after };
}

/** The query string of `form` (empty fields left out) plus `extra`, for links that keep the filters. */
export function listQueryString(form: ListForm, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...form, ...extra })) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

function day(name: string, text: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? parseIsoInstant(text) : Number.NaN;
  if (Number.isNaN(ms)) throw new ValidationError(`${name} must be a date such as 2026-11-01`);
  return ms;
}
