import { isoMillis } from "../lib/clock.ts";
import { formatAmount } from "../lib/money.ts";
import { lineItemsView } from "../payments/view.ts";
import type { PaymentLinkRow } from "./store.ts";

/** Where a payer opens the link. */
export const linkUrl = (baseUrl: string, id: string): string => `${baseUrl}/l/${id}`;

const amountOrNull = (micro: bigint | null) => (micro === null ? null : formatAmount(micro));

/**
 * The payment link object, as create, retrieve, update and list return it. Built as a string
 * because `metadata` is spliced in as the exact text the merchant sent, as on payments.
 */
export function paymentLinkJson(row: PaymentLinkRow, baseUrl: string): string {
  const view = {
    id: row.id,
    object: "payment_link",
    url: linkUrl(baseUrl, row.id),
    active: row.active,
    amount: amountOrNull(row.amount),
    min_amount: amountOrNull(row.min_amount),
    max_amount: amountOrNull(row.max_amount),
    currency: "USDC",
    description: row.description,
    line_items: lineItemsView(row),
    success_url: row.success_url,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
  const json = JSON.stringify(view);
  return `${json.slice(0, -1)},"metadata":${row.metadata ?? "null"}}`;
}

/** The amount in words for pages: "25.00 USDC", or what the payer may choose. */
export function linkAmountText(row: PaymentLinkRow): string {
  if (row.amount !== null) return `${formatAmount(row.amount)} USDC`;
  const min = amountOrNull(row.min_amount);
  const max = amountOrNull(row.max_amount);
  if (min && max) return `Payer chooses, ${min} to ${max} USDC`;
  if (min) return `Payer chooses, at least ${min} USDC`;
  if (max) return `Payer chooses, at most ${max} USDC`;
  return "Payer chooses";
}
