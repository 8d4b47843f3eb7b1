/**
 * The payments store's own reads and writes on a real SQLite file and a real PostgreSQL database:
 * the API list and its filters, what the settler sweeps next, the counts by status the metrics
 * read, and amounts past 2^53 kept exact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createChainStore } from "../../src/chain/store.ts";
import { INT64_MAX } from "../../src/db/int64.ts";
import { createPaymentLinkStore } from "../../src/payment-links/store.ts";
import { createPaymentStore, type NewPaymentRow, type PaymentStore } from "../../src/payments/store.ts";
import { ANY_LATE_FUNDS, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const T0 = Date.parse("2031-03-01T00:00:00.000Z");
const MINUTE = 60_000;

describe.each(ENGINES)("%s", (engine) => {
  let opened: TestStore;
  let store: PaymentStore;
  let shops = 0;

  beforeAll(async () => {
    opened = await openTestStore(engine);
    store = createPaymentStore(opened.db);
  });
  afterAll(() => opened?.close());

  const newShop = () => insertAccount(opened.db, `acct_store${++shops}`);
  const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

  test("insert answers the payment exactly as a read of it finds it, defaults included", async () => {
    const shop = await newShop();
    for (const fields of [
      {},
      { amount_received: 5n, due_at: T0 + MINUTE, metadata: '{"a":1}', speed: "fast" as const },
    ]) {
      const inserted = await store.insert(paymentRow(shop, T0, fields));
      expect(inserted).toEqual((await store.findById(inserted!.id))!);
    }
  });

  test("list: newest first, one row past the limit, each filter alone and with the cursor", async () => {
    const shop = await newShop();
    const link = "plink_storetest";
    await createPaymentLinkStore(opened.db).insert({
      id: link,
      account_id: shop,
      description: null,
      amount: 1_000_000n,
      line_items: null,
      min_amount: null,
      max_amount: null,
      success_url: null,
      metadata: null,
      active: true,
      created_at: T0,
      updated_at: T0,
    });
    const rows: NewPaymentRow[] = [];
    for (const i of [0, 1, 2, 3, 4]) {
      rows.push(
        await insertPayment(
          store,
          paymentRow(shop, T0 + i * MINUTE, {
            status: i % 2 === 0 ? "pending" : "expired",
            payment_link: i === 3 ? link : null,
          }),
        ),
      );
    }
    await insertPayment(store, paymentRow(await newShop(), T0)); // another account's
    const newestFirst = ids(rows).reverse();

    const all = await store.list({ accountId: shop, limit: 10 });
    expect(ids(all)).toEqual(newestFirst);
    expect(ids(await store.list({ accountId: shop, limit: 2 }))).toEqual(newestFirst.slice(0, 3));
    const cursor = all[1]!.seq;
    expect(ids(await store.list({ accountId: shop, limit: 10, beforeSeq: cursor }))).toEqual(newestFirst.slice(2));
    expect(ids(await store.list({ accountId: shop, limit: 10, status: "expired" }))).toEqual([
      rows[3]!.id,
      rows[1]!.id,
    ]);
    expect(
      ids(await store.list({ accountId: shop, limit: 10, createdGte: T0 + MINUTE, createdLt: T0 + 3 * MINUTE })),
    ).toEqual([rows[2]!.id, rows[1]!.id]);
    expect(ids(await store.list({ accountId: shop, limit: 10, paymentLink: link }))).toEqual([rows[3]!.id]);
    expect(ids(await store.list({ accountId: shop, limit: 10, status: "pending", beforeSeq: all[0]!.seq }))).toEqual([
      rows[2]!.id,
      rows[0]!.id,
    ]);
  });

  test("awaiting settlement: funded, topped up or settling payments, and a failed one only once its retry is due", async () => {
    const shop = await newShop();
    const at = (i: number) => T0 + i * MINUTE;
    const funded = await insertPayment(store, paymentRow(shop, at(0), { amount_received: 25_000_000n }));
    await insertPayment(store, paymentRow(shop, at(1), { amount_received: 1n })); // underfunded: nothing to sweep yet
    const toppedUp = await insertPayment(
      store,
      paymentRow(shop, at(2), { status: "confirmed", amount_received: 26_000_000n }),
    );
    const swept = await insertPayment(
      store,
      paymentRow(shop, at(3), { status: "confirmed", amount_received: 25_000_000n }),
    );
    await store.recordSettled(swept.id, 25_000_000n, at(3));
    const settling = await insertPayment(
      store,
      paymentRow(shop, at(4), { status: "settling", amount_received: 25_000_000n }),
    );
    const failed = await insertPayment(
      store,
      paymentRow(shop, at(5), { status: "failed", amount_received: 25_000_000n }),
    );
    await store.recordSettleFailure(failed.id, at(60), at(5));

    const before = (await store.awaitingSettlement(at(59), ANY_LATE_FUNDS)).map((row) => row.id);
    expect(before).toEqual(expect.arrayContaining([funded.id, toppedUp.id, settling.id]));
    expect(before.filter((id) => [swept.id, failed.id].includes(id))).toEqual([]);
    expect((await store.awaitingSettlement(at(60), ANY_LATE_FUNDS)).map((row) => row.id)).toContain(failed.id);
    // Counted whether or not a retry is due; the swept and the underfunded are not.
    expect(await store.countUnswept()).toBe(before.length + 1);
    expect(typeof (await store.countUnswept())).toBe("number");
  });

  test("late funds of a confirmed payment: swept from the floor up, and at most the daily number of times", async () => {
    const shop = await newShop();
    const at = (i: number) => T0 + i * MINUTE;
    const lateFunds = { floor: 100_000n, perDay: 2 };
    const confirmedWith = async (late: bigint, i: number) => {
      const row = await insertPayment(
        store,
        paymentRow(shop, at(i), { status: "confirmed", amount_received: 25_000_000n + late }),
      );
      await store.recordSettled(row.id, 25_000_000n, at(i));
      return row.id;
    };
    const dust = await confirmedWith(99_999n, 0);
    const worth = await confirmedWith(100_000n, 1);
    const busy = await confirmedWith(5_000_000n, 2);
    const chain = createChainStore(opened.db);
    // Two sweeps of `busy`, mined: sent at(10) and at(11).
    for (const i of [0, 1]) {
      const id = await chain.insertSettlement({
        payment_id: busy,
        nonce: 9_000 + i,
        tx_hash: `0x${"ab".repeat(31)}${i.toString(16).padStart(2, "0")}`,
        raw_tx: "0x00",
        max_fee: "1",
        priority_fee: "1",
        now: at(10 + i),
      });
      await chain.finishSettlement(id, "mined", { amount: 0n, fee: 0n }, 1, `0x${"ab".repeat(32)}`, at(10 + i));
    }
    const due = async (now: number) =>
      ids(await store.awaitingSettlement(now, lateFunds)).filter((id) => [dust, worth, busy].includes(id));

    // Two sweeps of `busy` within the last day: its late funds wait; dust below the floor waits for ever.
    expect(await due(at(20))).toEqual([worth]);
    expect(await due(at(10) + 86_400_000 - 1)).toEqual([worth]);
    // A day after the first, one sweep is left in the window: `busy` is swept again.
    expect(await due(at(10) + 86_400_000)).toEqual([worth, busy]);
    // Unbounded, all three would go.
    expect(
      ids(await store.awaitingSettlement(at(20), ANY_LATE_FUNDS)).filter((id) => [dust, worth, busy].includes(id)),
    ).toEqual([dust, worth, busy]);
  });

  test("counts by status over every account are integers, summed across accounts", async () => {
    const counted = await store.countByStatus();
    const a = await newShop();
    const b = await newShop();
    await insertPayment(store, paymentRow(a, T0, { status: "underpaid" }));
    await insertPayment(store, paymentRow(b, T0, { status: "underpaid" }));
    const after = await store.countByStatus();
    expect(after.get("underpaid")).toBe((counted.get("underpaid") ?? 0) + 2);
    expect(typeof after.get("underpaid")).toBe("number");
  });

  test("amounts past 2^53 are stored and summed exactly, and a settled sum saturates at 2^63 - 1", async () => {
    const shop = await newShop();
    const amount = 2n ** 62n + 1n;
    const row = await insertPayment(
      store,
      paymentRow(shop, T0, { amount, amount_received: amount, status: "confirmed" }),
    );
    await store.addReceived(row.id, 2n, T0 + 1);
    const read = (await store.findById(row.id))!;
    expect(read.amount).toBe(amount);
    expect(read.amount_received).toBe(amount + 2n);
    await store.recordSettled(row.id, amount, T0 + 2);
    await store.recordSettled(row.id, amount, T0 + 3);
    expect((await store.findById(row.id))!.amount_settled).toBe(INT64_MAX);
  });
});
