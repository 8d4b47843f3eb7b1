/**
 * The home page's figures on a real SQLite file and a real PostgreSQL database: settled money per UTC day with the fee each
 * settlement took, the 7 and 30 day windows at their edges, counts by status, what needs attention.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/engine.ts";
import { createPaymentSearch } from "../../src/payments/search.ts";
import { createSearchStore } from "../../src/payments/search-store.ts";
import { createPaymentStore, type NewPaymentRow, type PaymentStore } from "../../src/payments/store.ts";
import { insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const DAY = 86_400_000;
/** "Today" for these tests: 2031-06-30, UTC; the clock reads noon. */
const TODAY = Date.parse("2031-06-30T00:00:00.000Z");
const NOON = TODAY + DAY / 2;

let opened: TestStore;
let db: Db;
let payments: PaymentStore;
let now = NOON;
let search: ReturnType<typeof createPaymentSearch>;
/** A confirmed payment of `accountId` at `feeBps`, settled in one sweep of `amount` at `at`. */
async function settled(amount: bigint, at: number, feeBps: number, accountId: string) {
  const row = await insertPayment(
    payments,
    paymentRow(accountId, at - 60_000, { status: "confirmed", amount, amount_received: amount, fee_bps: feeBps }),
  );
  await payments.recordSettled(row.id, amount, at);
  return row;
}

let accounts = 0;

/**
 * A shop of its own (fee 1.5%) with one sweep in each place the windows care about, so every test
 * starts from the same figures whatever ran before it: today 1.000001 USDC and 333 micro more on the
 * same payment; yesterday's last millisecond; the oldest day of the 7 and the day before it; the
 * oldest day of the 30 and the day before it.
 */
async function shopWithSweeps(): Promise<string> {
  const shop = `acct_shop${++accounts}`;
  await insertAccount(db, shop, 150);
  const row = await settled(1_000_001n, TODAY + 1, 150, shop);
  await payments.recordSettled(row.id, 333n, TODAY + 2);
  await settled(2_000_000n, TODAY - 1, 150, shop); // yesterday 23:59:59.999
  await settled(4_000_000n, TODAY - 6 * DAY, 150, shop); // the oldest day of the 7
  await settled(8_000_000n, TODAY - 6 * DAY - 1, 150, shop); // the day before: outside the 7, inside the 30
  await settled(16_000_000n, TODAY - 29 * DAY, 150, shop); // the oldest day of the 30
  await settled(32_000_000n, TODAY - 29 * DAY - 1, 150, shop); // outside every window
  await settled(64_000_000n, TODAY + 2, 150, "acct_other"); // another account's
  return shop;
}

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    opened = await openTestStore(engine);
    db = opened.db;
    payments = createPaymentStore(db);
    await insertAccount(db, "acct_other");
    search = createPaymentSearch({ store: createSearchStore(db), clock: { now: () => now } });
  });
  afterAll(() => opened?.close());

  describe("settled totals", () => {
    test("fee per settlement rounds down as the forwarder does, and fee + net = gross", async () => {
      // 1.000001 USDC at 1.5%: 15000.015 micro rounds down to 15000; a second sweep of 333 micro on
      // the same payment takes floor(4.995) = 4, not a share of one rounded total.
      await insertAccount(db, "acct_rounding", 150);
      const row = await settled(1_000_001n, TODAY + 1, 150, "acct_rounding");
      await payments.recordSettled(row.id, 333n, TODAY + 2);
      const stored = (await payments.findById(row.id))!;
      expect(stored.amount_settled).toBe(1_000_334n);
      expect(stored.fee_settled).toBe(15_004n);
      expect((await search.home("acct_rounding")).totals.today).toEqual({
        gross: 1_000_334n,
        fee: 15_004n,
        net: 985_330n,
      });
    });

    test("days are UTC days: the last millisecond of yesterday is not today; 7 and 30 days include today", async () => {
      const home = await search.home(await shopWithSweeps());
      expect(home.today).toBe("2031-06-30");
      const fee = (gross: bigint) => (gross * 150n) / 10_000n;
      const today = { gross: 1_000_334n, fee: 15_004n, net: 985_330n };
      expect(home.totals.today).toEqual(today);
      // Each sweep here is a whole number of USDC, so its fee is exact: 2 USDC -> 0.03 and so on.
      const week = 2_000_000n + 4_000_000n;
      expect(home.totals.week).toEqual({
        gross: today.gross + week,
        fee: today.fee + fee(week),
        net: today.net + week - fee(week),
      });
      const month = week + 8_000_000n + 16_000_000n;
      expect(home.totals.month).toEqual({
        gross: today.gross + month,
        fee: today.fee + fee(month),
        net: today.net + month - fee(month),
      });

      expect(home.daily).toHaveLength(30);
      expect(home.daily[0]).toEqual({ day: "2031-06-01", gross: 16_000_000n });
      expect(home.daily[22]).toEqual({ day: "2031-06-23", gross: 8_000_000n });
      expect(home.daily[23]).toEqual({ day: "2031-06-24", gross: 4_000_000n });
      expect(home.daily[28]).toEqual({ day: "2031-06-29", gross: 2_000_000n });
      expect(home.daily[29]).toEqual({ day: "2031-06-30", gross: 1_000_334n });
      expect(home.daily.filter((d) => d.gross === 0n)).toHaveLength(25);
    });

    test("at midnight the window moves: yesterday's figures are no longer today's", async () => {
      const shop = await shopWithSweeps();
      now = TODAY + DAY; // 2031-07-01 00:00:00.000
      try {
        const home = await search.home(shop);
        expect(home.today).toBe("2031-07-01");
        expect(home.totals.today).toEqual({ gross: 0n, fee: 0n, net: 0n });
        expect(home.daily[28]).toEqual({ day: "2031-06-30", gross: 1_000_334n });
        // 2031-06-01 has left the 30 days.
        expect(home.totals.month.gross).toBe(1_000_334n + 2_000_000n + 4_000_000n + 8_000_000n);
      } finally {
        now = NOON;
      }
    });

    test("a sweep larger than a 64-bit column holds saturates instead of wrapping negative", async () => {
      await insertAccount(db, "acct_huge");
      const max = 2n ** 63n - 1n;
      const row = await insertPayment(payments, paymentRow("acct_huge", NOON, { status: "confirmed" }));
      await payments.recordSettled(row.id, max, NOON);
      await payments.recordSettled(row.id, 2n ** 64n, NOON);
      expect((await payments.findById(row.id))!.amount_settled).toBe(max);
      expect((await search.home("acct_huge")).totals.today.gross).toBe(max);
    });
  });

  describe("counts and attention", () => {
    test("counts every status of the account, zero for the ones it has none of", async () => {
      await insertAccount(db, "acct_counts");
      const statuses = ["pending", "pending", "underpaid", "failed", "confirmed", "expired", "expired", "expired"];
      for (const [i, status] of statuses.entries())
        await insertPayment(payments, paymentRow("acct_counts", NOON - i, { status: status as "pending" }));
      expect((await search.home("acct_counts")).counts).toEqual({
        pending: 2,
        settling: 0,
        confirmed: 1,
        underpaid: 1,
        overpaid: 0,
        expired: 3,
        failed: 1,
      });
    });

    test("counts follow every status change, made by the same compare-and-set the lifecycle uses", async () => {
      await insertAccount(db, "acct_moves");
      const row = await insertPayment(payments, paymentRow("acct_moves", NOON));
      expect((await search.home("acct_moves")).counts.pending).toBe(1);
      expect(await payments.updateStatus(row.id, "pending", "underpaid", NOON)).toBe(true);
      expect(await payments.updateStatus(row.id, "pending", "expired", NOON)).toBe(false); // not in that state: no change
      expect(await payments.updateStatus(row.id, "underpaid", "settling", NOON)).toBe(true);
      expect(await payments.updateStatus(row.id, "settling", "confirmed", NOON)).toBe(true);
      const { counts } = await search.home("acct_moves");
      expect(counts).toEqual({
        pending: 0,
        settling: 0,
        confirmed: 1,
        underpaid: 0,
        overpaid: 0,
        expired: 0,
        failed: 0,
      });
    });

    test("needs attention: underpaid and failed payments, newest first, ten shown and a flag for more", async () => {
      await insertAccount(db, "acct_attention");
      const rows: NewPaymentRow[] = [];
      for (let i = 0; i < 12; i++) {
        rows.push(
          await insertPayment(
            payments,
            paymentRow("acct_attention", NOON - 12 * DAY + i * DAY, { status: i % 2 ? "failed" : "underpaid" }),
          ),
        );
      }
      await insertPayment(payments, paymentRow("acct_attention", NOON, { status: "pending" }));
      await insertPayment(payments, paymentRow("acct_other", NOON, { status: "failed" }));
      const home = await search.home("acct_attention");
      expect(home.attention.map((r) => r.id)).toEqual(
        rows
          .map((r) => r.id)
          .reverse()
          .slice(0, 10),
      );
      expect(home.moreAttention).toBe(true);
      await insertAccount(db, "acct_few");
      for (const i of [1, 2]) await insertPayment(payments, paymentRow("acct_few", NOON - i, { status: "failed" }));
      expect((await search.home("acct_few")).attention).toHaveLength(2);
      expect((await search.home("acct_few")).moreAttention).toBe(false);
    });
  });
});
