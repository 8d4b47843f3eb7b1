/**
 * Lists and exact searches of the dashboard, on a real SQLite file and a real PostgreSQL database:
 * filters, keyset pages both ways, and each engine's plans.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Db, raw, type Sql, sql } from "../../src/db/engine.ts";
import { compilerFor } from "../../src/db/sql.ts";
import { createPaymentSearch, type PaymentFilter } from "../../src/payments/search.ts";
import { createSearchStore } from "../../src/payments/search-store.ts";
import { createPaymentStore, type NewPaymentRow, type PaymentStatus } from "../../src/payments/store.ts";
import { insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const T0 = Date.parse("2031-05-01T00:00:00.000Z");
const MINUTE = 60_000;
const STATUSES: PaymentStatus[] = ["pending", "confirmed", "underpaid", "failed", "expired"];

let opened: TestStore;
let db: Db;
let search: ReturnType<typeof createPaymentSearch>;
/** Alice's payments, oldest first: one a minute, statuses in turn, some with search fields. */
const alice: NewPaymentRow[] = [];
let bobPayment: NewPaymentRow;
const newestFirst = (rows: NewPaymentRow[]) => rows.map((r) => r.id).reverse();
const ids = async (filter: PaymentFilter, cursor = {}, limit = 100) =>
  (await search.page("acct_alice", filter, cursor, limit)).rows.map((r) => r.id);

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    opened = await openTestStore(engine);
    db = opened.db;
    alice.length = 0;
    const store = createPaymentStore(db);
    await insertAccount(db, "acct_alice");
    await insertAccount(db, "acct_bob");
    for (let i = 0; i < 40; i++) {
      alice.push(
        await insertPayment(
          store,
          paymentRow("acct_alice", T0 + i * MINUTE, {
            status: STATUSES[i % STATUSES.length],
            reference: i % 7 === 3 ? "order-3" : `order-${i}`,
            invoice_number: i === 7 ? "INV-0007" : null,
            customer_email: i === 11 || i === 12 ? (i === 11 ? "Ann@Example.com" : "ann@example.com") : null,
          }),
        ),
      );
    }
    // Two payments in the same millisecond: seq decides their order.
    alice.push(await insertPayment(store, paymentRow("acct_alice", T0 + 40 * MINUTE, { reference: "same-ms" })));
    alice.push(await insertPayment(store, paymentRow("acct_alice", T0 + 40 * MINUTE, { reference: "same-ms" })));
    bobPayment = await insertPayment(store, paymentRow("acct_bob", T0 + 5 * MINUTE, { reference: "order-3" }));
    search = createPaymentSearch({ store: createSearchStore(db), clock: { now: () => T0 } });
  });
  afterAll(() => opened?.close());

  describe("filters and search", () => {
    test("no filter: every payment of the account, newest first; same-millisecond ones in creation order reversed", async () => {
      expect(await ids({})).toEqual(newestFirst(alice));
      expect(await ids({})).not.toContain(bobPayment.id);
    });

    test("status", async () => {
      expect(await ids({ status: "failed" })).toEqual(newestFirst(alice.filter((r) => r.status === "failed")));
      expect(await ids({ status: "settling" })).toEqual([]);
    });

    test("created from (inclusive) and to (exclusive), alone and with a status", async () => {
      const from = T0 + 10 * MINUTE;
      const to = T0 + 20 * MINUTE;
      const inRange = alice.filter((r) => r.created_at >= from && r.created_at < to);
      expect(inRange).toHaveLength(10);
      expect(await ids({ createdGte: from, createdLt: to })).toEqual(newestFirst(inRange));
      expect(await ids({ createdGte: from, createdLt: to, status: "confirmed" })).toEqual(
        newestFirst(inRange.filter((r) => r.status === "confirmed")),
      );
      expect(await ids({ createdGte: to, createdLt: from })).toEqual([]);
    });

    test("search by reference, invoice number, customer email (any case) and exact id", async () => {
      expect(await ids({ search: "order-3" })).toEqual(newestFirst(alice.filter((r) => r.reference === "order-3")));
      expect(await ids({ search: "INV-0007" })).toEqual([alice[7]!.id]);
      expect(await ids({ search: "ANN@example.COM" })).toEqual([alice[12]!.id, alice[11]!.id]);
      expect(await ids({ search: alice[20]!.id })).toEqual([alice[20]!.id]);
    });

    test("a search is exact, scoped to the account, and combines with the other filters", async () => {
      expect(await ids({ search: "order" })).toEqual([]);
      expect(await ids({ search: "inv-0007" })).toEqual([]); // references and invoice numbers keep their case
      expect(await ids({ search: bobPayment.id })).toEqual([]);
      const order3 = alice.filter((r) => r.reference === "order-3");
      expect(await ids({ search: "order-3", status: order3[1]!.status })).toEqual([order3[1]!.id]);
      expect(await ids({ search: "order-3", createdGte: order3[2]!.created_at })).toEqual(newestFirst(order3.slice(2)));
      expect(await ids({ search: alice[20]!.id, status: "settling" })).toEqual([]);
    });
  });

  describe("keyset pages", () => {
    test("Older pages walk the whole list once; Newer pages walk back to the start", async () => {
      const filter = { createdGte: T0 + 2 * MINUTE };
      const expected = newestFirst(alice.filter((r) => r.created_at >= filter.createdGte));
      const forward: string[][] = [];
      let page = await search.page("acct_alice", filter, {}, 7);
      expect(page.newer).toBeNull();
      forward.push(page.rows.map((r) => r.id));
      while (page.older) {
        page = await search.page("acct_alice", filter, { before: page.older }, 7);
        forward.push(page.rows.map((r) => r.id));
      }
      expect(forward.flat()).toEqual(expected);
      expect(forward.at(-1)!.length).toBe(expected.length % 7 || 7);

      const backward: string[][] = [forward.at(-1)!];
      while (page.newer) {
        page = await search.page("acct_alice", filter, { after: page.newer }, 7);
        backward.unshift(page.rows.map((r) => r.id));
      }
      // Going back ends on a full first page, exactly the rows the first page showed.
      expect(backward[0]).toEqual(forward[0]!);
      expect(backward.flat()).toEqual(expected.slice(0, backward.flat().length));
      expect(new Set(backward.flat()).size).toBe(expected.length);
    });

    test("the two payments of one millisecond are split across pages without loss", async () => {
      const first = await search.page("acct_alice", {}, {}, 1);
      const second = await search.page("acct_alice", {}, { before: first.older! }, 1);
      expect([...first.rows, ...second.rows].map((r) => r.id)).toEqual(newestFirst(alice.slice(-2)));
      expect((await search.page("acct_alice", {}, { after: second.rows[0]!.id }, 1)).rows.map((r) => r.id)).toEqual([
        alice.at(-1)!.id,
      ]);
    });

    test("a filtered page's links appear only when there is something on that side", async () => {
      const failed = newestFirst(alice.filter((r) => r.status === "failed"));
      const first = await search.page("acct_alice", { status: "failed" }, {}, failed.length);
      expect(first.older).toBeNull();
      expect(first.newer).toBeNull();
      const tail = await search.page("acct_alice", { status: "failed" }, { before: failed[0]! }, 100);
      expect(tail.rows.map((r) => r.id)).toEqual(failed.slice(1));
      expect(tail.newer).toBe(failed[1]!);
      expect(tail.older).toBeNull();
    });

    test("a cursor from another account, or unknown, is refused naming the parameter", async () => {
      await expect(search.page("acct_alice", {}, { before: bobPayment.id })).rejects.toThrow(
        `before: no payment ${bobPayment.id}`,
      );
      await expect(search.page("acct_alice", {}, { after: `0x${"0".repeat(64)}` })).rejects.toThrow(
        /^after: no payment/,
      );
    });
  });

  /**
   * Every SQL text the store runs, with every variant of the list run once so all are seen: as the
   * engine prepares it, with its own placeholders (the plans below are of the statement, not of
   * one set of values).
   */
  async function preparedStatements(): Promise<string[]> {
    const placeholders = compilerFor(engine === "postgres" ? (n) => `$${n}` : () => "?");
    const prepared = new Set<string>();
    const spy = new Proxy(db, {
      get(target, prop) {
        if (prop === "get" || prop === "all" || prop === "run")
          return (query: Sql, ...rest: unknown[]) => {
            prepared.add(placeholders(query).text);
            return (Reflect.get(target, prop, target) as (...args: unknown[]) => unknown).call(target, query, ...rest);
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const store = createSearchStore(spy);
    const spied = createPaymentSearch({ store, clock: { now: () => T0 } });
    for (const status of [undefined, "failed"] as const)
      for (const q of [undefined, "order-3", alice[0]!.id]) {
        const filter = { status, search: q };
        await spied.page("acct_alice", filter, {}, 2);
        await spied.page("acct_alice", filter, { after: alice[0]!.id }, 2);
        await Array.fromAsync(spied.exportBatches("acct_alice", filter));
      }
    await spied.home("acct_alice");
    expect(prepared.size).toBeGreaterThanOrEqual(12 + 3);
    return [...prepared];
  }

  // Each engine's own plans: SQLite's for the INDEXED BY hints the store gives it; PostgreSQL's
  // with scans and sorts switched off, so that a node it still uses (EXPLAIN marks it "Disabled")
  // is one no index can replace, whatever a small table's statistics would make it prefer.
  if (engine === "sqlite")
    describe("query plans", () => {
      test("no statement scans the payments table or sorts it: each is answered from an index in order", async () => {
        const plans: Array<{ sql: string; plan: string[] }> = [];
        for (const text of await preparedStatements()) {
          // Unbound placeholders read as NULL: the plan is the statement's, whatever the values.
          const rows = await db.all<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${raw(text)}`);
          plans.push({ sql: text, plan: rows.map((r) => r.detail) });
        }
        for (const { sql, plan } of plans) {
          // A sort of one payment's own transfers for group_concat is fine; a sort of the list is not.
          const bad = plan.filter((line) =>
            /^SCAN (payments|transfers|settlements|settled_daily|payment_status_counts)\b|TEMP B-TREE FOR (ORDER|GROUP|DISTINCT)/.test(
              line,
            ),
          );
          expect({ sql, bad }).toEqual({ sql, bad: [] });
        }
        // The check sees real plans: the list statements do search the payments indexes.
        expect(
          plans
            .flatMap((p) => p.plan)
            .filter((l) => /SEARCH payments USING (COVERING )?INDEX payments_account_/.test(l)).length,
        ).toBeGreaterThan(10);
      });
    });

  if (engine === "postgres")
    describe("query plans", () => {
      test("no statement scans the payments table or sorts it: each is answered from an index in order", async () => {
        const prepared = await preparedStatements();
        // One transaction: the settings are a connection's, and the pool has several.
        await db.transaction(async () => {
          for (const setting of ["enable_seqscan", "enable_bitmapscan", "enable_sort"])
            await db.exec(`SET ${setting} = off`);
          try {
            const plans: Array<{ sql: string; plan: string[] }> = [];
            for (const text of prepared) {
              const rows = await db.all<{ "QUERY PLAN": string }>(sql`EXPLAIN (GENERIC_PLAN, COSTS OFF) ${raw(text)}`);
              plans.push({ sql: text, plan: rows.map((r) => r["QUERY PLAN"]) });
            }
            for (const { sql, plan } of plans) {
              const bad = plan.filter((line) => /Disabled: true|Seq Scan/.test(line));
              expect({ sql, bad }).toEqual({ sql, bad: [] });
            }
            // The check sees real plans: the list statements walk the payments indexes, a search's merged.
            const lines = plans.flatMap((p) => p.plan);
            expect(
              lines.filter((l) => /Index Scan (Backward )?using payments_account_/.test(l)).length,
            ).toBeGreaterThan(10);
            expect(lines.filter((l) => /Merge Append/.test(l)).length).toBeGreaterThan(0);
          } finally {
            for (const setting of ["enable_seqscan", "enable_bitmapscan", "enable_sort"])
              await db.exec(`RESET ${setting}`);
          }
        });
      });
    });
});
