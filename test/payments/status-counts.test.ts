/**
 * Payments per status as append-only deltas (migration 024, src/payments/status-count-store.ts):
 * a create appends a row rather than updating a shared one, a read adds the deltas to the folded
 * counts, and a fold moves them without losing one, even while creates commit around it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createStatusCountStore } from "../../src/payments/status-count-store.ts";
import { createPaymentStore, type PaymentStatus } from "../../src/payments/store.ts";
import { insertAccount, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

describe.each(ENGINES)("%s", (engine) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(() => store.close());

  const deltas = async () =>
    (await store.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payment_status_deltas`))!.n;

  test("creates and status changes append deltas; a fold moves them into the totals and every read stays the same", async () => {
    const { db } = store;
    const payments = createPaymentStore(db);
    const counts = createStatusCountStore(db);
    const account = await insertAccount(db, randomIds.prefixed("acct"));
    const other = await insertAccount(db, randomIds.prefixed("acct"));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await payments.insert(paymentRow(account, i)))!.id);
    await payments.insert(paymentRow(other, 0));
    await payments.updateStatus(ids[0]!, "pending", "expired", 10);
    await payments.updateStatus(ids[1]!, "pending", "confirmed", 10);

    const expected = new Map<PaymentStatus, number>([
      ["pending", 3],
      ["expired", 1],
      ["confirmed", 1],
    ]);
    expect(await counts.forAccount(account)).toEqual(expected);
    expect(await deltas()).toBeGreaterThan(0);
    // No shared row was touched by any of it: the totals are still empty for this account.
    expect(await db.all(sql`SELECT status FROM payment_status_counts WHERE account_id = ${account}`)).toEqual([]);

    while ((await counts.fold()) > 0);
    expect(await deltas()).toBe(0);
    expect(await counts.forAccount(account)).toEqual(expected);
    expect((await counts.forAccount(other)).get("pending")).toBe(1);

    // After a fold, new deltas add to the folded totals; a status that drops to zero is absent.
    await payments.updateStatus(ids[0]!, "expired", "failed", 20);
    const after = await counts.forAccount(account);
    expect(after.get("expired")).toBeUndefined();
    expect(after.get("failed")).toBe(1);
  });

  test("a fold while creates commit around it loses no delta", async () => {
    const { db } = store;
    const payments = createPaymentStore(db);
    const counts = createStatusCountStore(db);
    const account = await insertAccount(db, randomIds.prefixed("acct"));
    const creates = Array.from({ length: 60 }, (_, i) => payments.insert(paymentRow(account, i)));
    const folds = Array.from({ length: 10 }, () => counts.fold());
    await Promise.all([...creates, ...folds]);
    expect((await counts.forAccount(account)).get("pending")).toBe(60);
    while ((await counts.fold()) > 0);
    expect((await counts.forAccount(account)).get("pending")).toBe(60);
  });
});
