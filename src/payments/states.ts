import type { PaymentStatus } from "./store.ts";

/**
 * The payment state machine, the one place that decides status changes (DESIGN.md §5).
 * R = credited (confirmed) amount received, A = amount asked.
 *
 *   pending ──0<R<A──▶ underpaid ──R≥A, settle sent──▶ settling (R=A) / overpaid (R>A)
 *      │                                               ├─ mined ─▶ confirmed
 *      │                                               └─ reverted ─▶ failed
 *      │                                                               └─ retry sent ─▶ settling / overpaid
 *      └─expires_at, R=0─▶ expired ──late funds──▶ (as pending)
 *
 * An excess up to a cross-chain burn's fee margin counts as R=A (see `nextStatus`).
 *
 * `confirmed` is final: later funds are credited and swept without a status change, and funds a
 * reorg takes back after it are announced (payment.funds_reversed) without one either.
 * Before it, a reorg that takes funds back returns the payment to what R now says: pending with
 * nothing left, underpaid with less than A.
 */
export type LifecycleEvent =
  | "credited"
  | "settlement_submitted"
  | "settlement_mined"
  | "settlement_reverted"
  | "window_closed"
  /** A reorg took credited funds back (src/chain/watching/ledger.ts): R is already the smaller figure. */
  | "funds_reversed";

interface Rule {
  from: readonly PaymentStatus[];
  on: LifecycleEvent;
  /** `tolerance`: an excess over the amount that still counts as paid exactly (see nextStatus). */
  when: (received: bigint, amount: bigint, tolerance: bigint) => boolean;
  to: PaymentStatus;
}

const always = () => true;

/** The statuses in which a payment waits for funds: the payer may still pay it. */
export const AWAITING_FUNDS: readonly PaymentStatus[] = ["pending", "underpaid", "expired"];

export const TRANSITIONS: readonly Rule[] = [
  { from: ["pending", "expired"], on: "credited", when: (r, a) => r > 0n && r < a, to: "underpaid" },
  {
    from: ["pending", "underpaid", "expired", "failed"],
    on: "settlement_submitted",
    when: (r, a, t) => r >= a && r - a <= t,
    to: "settling",
  },
  {
    from: ["pending", "underpaid", "expired", "failed"],
    on: "settlement_submitted",
    when: (r, a, t) => r - a > t,
    to: "overpaid",
  },
  { from: ["pending"], on: "window_closed", when: (r) => r === 0n, to: "expired" },
  { from: ["settling", "overpaid"], on: "settlement_mined", when: always, to: "confirmed" },
  { from: ["settling", "overpaid"], on: "settlement_reverted", when: always, to: "failed" },
  {
    from: ["underpaid", "settling", "overpaid", "failed"],
    on: "funds_reversed",
    when: (r) => r === 0n,
    to: "pending",
  },
  {
    from: ["settling", "overpaid", "failed"],
    on: "funds_reversed",
    when: (r, a) => r > 0n && r < a,
    to: "underpaid",
  },
  // A settlement that fails its simulation is never sent; the payment is failed all the same.
  { from: ["pending", "underpaid", "expired"], on: "settlement_reverted", when: (r, a) => r >= a, to: "failed" },
];

/**
 * The status `event` moves a payment to, or null when the event changes nothing. `tolerance`
 * is an excess the service itself caused (a cross-chain burn's fee margin): up to it, R > A
 * settles as `settling`, not `overpaid`.
 */
export function nextStatus(
  status: PaymentStatus,
  event: LifecycleEvent,
  received: bigint,
  amount: bigint,
  tolerance = 0n,
): PaymentStatus | null {
  const rule = TRANSITIONS.find(
    (r) => r.on === event && r.from.includes(status) && r.when(received, amount, tolerance),
  );
  return rule && rule.to !== status ? rule.to : null;
}
