/**
 * The payment state machine (src/payments/states.ts) against DESIGN.md §5, row by row, then
 * exhaustively: every status x event x received-amount class, so an accidental extra
 * transition fails as surely as a missing one.
 */
import { describe, expect, test } from "bun:test";
import { type LifecycleEvent, nextStatus } from "../../src/payments/states.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../src/payments/store.ts";

const A = 25_000_000n; // the amount asked: 25.00
type Received = "zero" | "partial" | "exact" | "over";
const R: Record<Received, bigint> = { zero: 0n, partial: 10_000_000n, exact: A, over: A + 1n };
const EVENTS: readonly LifecycleEvent[] = [
  "credited",
  "settlement_submitted",
  "settlement_mined",
  "settlement_reverted",
  "window_closed",
];

// DESIGN.md §5, one line per row (and per "from" status in it).
const DESIGN_ROWS: Array<[PaymentStatus, LifecycleEvent, Received, PaymentStatus]> = [
  // pending, expired | 0 < R < A | underpaid
  ["pending", "credited", "partial", "underpaid"],
  ["expired", "credited", "partial", "underpaid"],
  // pending, underpaid, expired | R = A, settlement submitted | settling
  ["pending", "settlement_submitted", "exact", "settling"],
  ["underpaid", "settlement_submitted", "exact", "settling"],
  ["expired", "settlement_submitted", "exact", "settling"],
  // pending, underpaid, expired | R > A, settlement submitted | overpaid
  ["pending", "settlement_submitted", "over", "overpaid"],
  ["underpaid", "settlement_submitted", "over", "overpaid"],
  ["expired", "settlement_submitted", "over", "overpaid"],
  // pending | now >= expires_at, R = 0 | expired
  ["pending", "window_closed", "zero", "expired"],
  // settling, overpaid | settlement mined | confirmed
  ["settling", "settlement_mined", "exact", "confirmed"],
  ["overpaid", "settlement_mined", "over", "confirmed"],
  // settling, overpaid | settlement reverted (on chain) | failed
  ["settling", "settlement_reverted", "exact", "failed"],
  ["overpaid", "settlement_reverted", "over", "failed"],
  // ... or in simulation, before anything was sent
  ["pending", "settlement_reverted", "exact", "failed"],
  ["underpaid", "settlement_reverted", "exact", "failed"],
  ["expired", "settlement_reverted", "over", "failed"],
  // failed | settlement retried | settling / overpaid
  ["failed", "settlement_submitted", "exact", "settling"],
  ["failed", "settlement_submitted", "over", "overpaid"],
];

const NON_TRANSITIONS: Array<[string, PaymentStatus, LifecycleEvent, Received]> = [
  ["an underpaid payment never expires", "underpaid", "window_closed", "partial"],
  ["a pending payment with funds credited does not expire", "pending", "window_closed", "exact"],
  ["an expired payment does not expire again", "expired", "window_closed", "zero"],
  ["full payment waits for the settlement to change status", "pending", "credited", "exact"],
  ["overpayment waits for the settlement to change status", "pending", "credited", "over"],
  ["more partial funds keep it underpaid", "underpaid", "credited", "partial"],
  ["credits during settlement change nothing", "settling", "credited", "over"],
  ["credits to a failed payment change nothing", "failed", "credited", "over"],
  ["no settlement for less than the amount", "underpaid", "settlement_submitted", "partial"],
  ["a second submission while settling changes nothing", "settling", "settlement_submitted", "exact"],
  ["a simulation revert of an underpaid amount changes nothing", "underpaid", "settlement_reverted", "partial"],
  ["a mined settlement needs a settlement in flight", "pending", "settlement_mined", "exact"],
  ["a failed payment is not confirmed without a new settlement", "failed", "settlement_mined", "exact"],
];

describe("nextStatus", () => {
  test.each(DESIGN_ROWS)("%s + %s (R %s) -> %s", (from, event, received, to) => {
    expect(nextStatus(from, event, R[received], A)).toBe(to);
  });

  test.each(NON_TRANSITIONS)("%s", (_name, from, event, received) => {
    expect(nextStatus(from, event, R[received], A)).toBeNull();
  });

  test("confirmed is final: no event, whatever arrives, changes it", () => {
    for (const event of EVENTS) {
      for (const received of Object.values(R)) expect(nextStatus("confirmed", event, received, A)).toBeNull();
    }
  });

  test("every status x event x amount class is either a DESIGN row or no change", () => {
    const expected = new Map(DESIGN_ROWS.map(([from, event, received, to]) => [`${from} ${event} ${received}`, to]));
    // Rows that hold for any R (mined / reverted while in flight) or any R >= A (simulation revert).
    for (const from of ["settling", "overpaid"] as const) {
      for (const received of Object.keys(R) as Received[]) {
        expected.set(`${from} settlement_mined ${received}`, "confirmed");
        expected.set(`${from} settlement_reverted ${received}`, "failed");
      }
    }
    for (const from of ["pending", "underpaid", "expired"] as const) {
      expected.set(`${from} settlement_reverted exact`, "failed");
      expected.set(`${from} settlement_reverted over`, "failed");
    }
    const mismatches: string[] = [];
    for (const from of PAYMENT_STATUSES) {
      for (const event of EVENTS) {
        for (const received of Object.keys(R) as Received[]) {
          const want = expected.get(`${from} ${event} ${received}`) ?? null;
          const got = nextStatus(from, event, R[received], A);
          if (got !== want) mismatches.push(`${from} + ${event} (R ${received}): want ${want}, got ${got}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  test("the boundaries are exact to the micro-USDC", () => {
    expect(nextStatus("pending", "credited", 1n, A)).toBe("underpaid");
    expect(nextStatus("pending", "credited", A - 1n, A)).toBe("underpaid");
    expect(nextStatus("pending", "settlement_submitted", A - 1n, A)).toBeNull();
    expect(nextStatus("pending", "settlement_submitted", A, A)).toBe("settling");
    expect(nextStatus("pending", "settlement_submitted", A + 1n, A)).toBe("overpaid");
    expect(nextStatus("pending", "window_closed", 1n, A)).toBeNull();
    expect(nextStatus("pending", "settlement_reverted", A - 1n, A)).toBeNull();
  });
});

describe("a tolerance (a cross-chain burn's own fee margin)", () => {
  test("an excess up to it settles as settling; beyond it, overpaid; it never turns a shortfall into paid", () => {
    const A = 25_000_000n;
    expect(nextStatus("pending", "settlement_submitted", A + 625n, A, 625n)).toBe("settling");
    expect(nextStatus("pending", "settlement_submitted", A + 626n, A, 625n)).toBe("overpaid");
    expect(nextStatus("pending", "settlement_submitted", A + 1n, A)).toBe("overpaid");
    expect(nextStatus("pending", "settlement_submitted", A - 1n, A, 625n)).toBeNull();
    expect(nextStatus("failed", "settlement_submitted", A + 100n, A, 625n)).toBe("settling");
  });
});
