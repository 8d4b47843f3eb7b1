/**
 * One transfer recorded by several at once (the watcher on one replica, payers' /sync on others,
 * each in its own transaction on a database they share) is credited exactly once, whether it is
 * new to all of them or already recorded and waiting for its confirmations.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createChainStore } from "../../../src/chain/store.ts";
import { createLedger, type ObservedTransfer } from "../../../src/chain/watching/ledger.ts";
import { createEventStore } from "../../../src/events/store.ts";
import { systemClock } from "../../../src/lib/clock.ts";
import { randomIds } from "../../../src/lib/ids.ts";
import { createLifecycle } from "../../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../../src/payments/store.ts";
import { insertAccount, paymentRow } from "../../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../../support/store-engines.ts";

const RECORDERS = 12;

describe.each(ENGINES)("%s", (engine) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(() => store.close());

  /** A replica's ledger: its own stores and lifecycle over the shared database. */
  function replica() {
    const { db } = store;
    const payments = createPaymentStore(db);
    const chain = createChainStore(db);
    const lifecycle = createLifecycle({
      payments,
      chain,
      events: createEventStore(db, randomIds),
      clock: systemClock,
      ids: randomIds,
      view: { baseUrl: "https://pay.example.test", chainName: "base" },
    });
    return createLedger({ chain, payments, lifecycle, clock: systemClock });
  }

  async function newPayment(): Promise<{ id: string; deposit: string }> {
    const account = await insertAccount(store.db, randomIds.prefixed("acct"));
    const row = paymentRow(account, Date.now());
    await createPaymentStore(store.db).insert(row);
    return { id: row.id, deposit: row.deposit_address };
  }

  const transfer = (to: string): ObservedTransfer => ({
    chainId: 31337,
    txHash: `0x${crypto.randomUUID().replaceAll("-", "").padEnd(64, "0")}`,
    logIndex: 0,
    from: "0x2222222222222222222222222222222222222222",
    to,
    amount: 5_000_000n,
    blockNumber: 10,
    blockHash: `0x${"cd".repeat(32)}`,
  });

  const received = async (id: string) => (await createPaymentStore(store.db).findById(id))!.amount_received;

  test("a new transfer recorded by many at once is credited once", async () => {
    const payment = await newPayment();
    const seen = transfer(payment.deposit);
    const credits = await Promise.all(
      Array.from({ length: RECORDERS }, () => store.db.transaction(() => replica().record(seen, () => true))),
    );
    expect(credits.filter(Boolean)).toHaveLength(1);
    expect(await received(payment.id)).toBe(5_000_000n);
  });

  test("a recorded transfer that many find confirmed at once is credited once", async () => {
    const payment = await newPayment();
    const seen = transfer(payment.deposit);
    // Seen first with too few confirmations: recorded, not credited.
    expect(await store.db.transaction(() => replica().record(seen, () => false))).toBe(false);
    const credits = await Promise.all(
      Array.from({ length: RECORDERS }, () => store.db.transaction(() => replica().record(seen, () => true))),
    );
    expect(credits.filter(Boolean)).toHaveLength(1);
    expect(await received(payment.id)).toBe(5_000_000n);
  });
});
