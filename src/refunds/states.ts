import type { RefundStatus } from "./store.ts";

/**
 * The refund state machine, the one place that decides a refund's status (docs/refunds.md).
 *
 *   awaiting_address ──address given──▶ awaiting_payment ──transfer counted──▶ succeeded
 *          │                                   │
 *          └────────────canceled───────────────┴──▶ canceled
 *
 * A refund created with the merchant's `refund_address` starts at awaiting_payment. Canceling is
 * refused once a transfer for it is seen on chain: the money may already be on its way.
 */
export type RefundEvent = "address_given" | "transfer_counted" | "canceled";

const RULES: Record<RefundEvent, { from: readonly RefundStatus[]; to: RefundStatus }> = {
  address_given: { from: ["awaiting_address"], to: "awaiting_payment" },
  transfer_counted: { from: ["awaiting_payment"], to: "succeeded" },
  canceled: { from: ["awaiting_address", "awaiting_payment"], to: "canceled" },
};

/** The status `event` moves a refund in `from` to, or null when it does not apply there. */
export function nextRefundStatus(from: RefundStatus, event: RefundEvent): RefundStatus | null {
  const rule = RULES[event];
  return rule.from.includes(from) ? rule.to : null;
}

/** The event each status is announced with when a refund enters it. */
export const REFUND_EVENT_TYPES = {
  awaiting_payment: "refund.payable",
  succeeded: "refund.succeeded",
  canceled: "refund.canceled",
} as const satisfies Partial<Record<RefundStatus, string>>;
