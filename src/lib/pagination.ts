import { ValidationError } from "./errors.ts";

/** `limit` of a list request: 1..100, default 10, as Stripe-style lists take it. */
export function parseLimit(text: string | null): number {
  if (text === null) return 10;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > 100) throw new ValidationError("limit must be a whole number from 1 to 100");
  return limit;
}
