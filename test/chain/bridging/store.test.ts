/**
 * The bridges store's SQL on both engines (a real SQLite file, a real PostgreSQL database): which
 * payments need a bridge, which bridge a mint belongs to, what a settlement sweeps, and the
 * payments the settler must leave alone.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type BridgeStore, createBridgeStore } from "../../../src/chain/bridging/store.ts";
import { type ChainStore, createChainStore } from "../../../src/chain/store.ts";
import {
  ANY_LATE_FUNDS,
  createPaymentStore,
  insertAccount,
  insertPayment,
  paymentRow,
} from "../../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../../support/store-engines.ts";

const SOURCE = 31338;
let store: TestStore | undefined;
let bridges: BridgeStore;
let chain: ChainStore;
let payments: ReturnType<typeof createPaymentStore>;
let paymentId: string;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

let log = 0;
/** A transfer to the payment on `chainId`, credited unless said otherwise. */
async function transfer(chainId: number, amount: bigint, credited = true) {
  await chain.insertTransfer({
    chain_id: chainId,
    tx_hash: `0x${(++log).toString(16).padStart(64, "0")}`,
    log_index: 0,
    payment_id: paymentId,
    from_address: "0x1",
    amount,
    block_number: log,
    block_hash: "0xb",
    credited_at: credited ? 1 : null,
    created_at: 1,
  });
  if (credited) await payments.addReceived(paymentId, amount, 1);
}

const open = (id: string) => bridges.create({ id, payment_id: paymentId, chain_id: SOURCE, now: 1 });

describe.each(ENGINES)("bridges store (%s)", (engine) => {
  beforeEach(async () => {
    store = await openTestStore(engine);
    const { db } = store;
    bridges = createBridgeStore(db);
    chain = createChainStore(db);
    payments = createPaymentStore(db);
    const account = await insertAccount(db, "acct_b");
    paymentId = (await insertPayment(payments, paymentRow(account, 0, { factory_version: 2, amount: 10_000_000n }))).id;
  });

  test("a payment needs a bridge for credited source transfers no bridge carries, once per burn in flight", async () => {
    await transfer(31337, 1_000_000n); // the settlement chain's: never bridged
    await transfer(SOURCE, 2_000_000n, false); // not credited yet
    expect(await bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([]);
    await transfer(SOURCE, 3_000_000n);
    expect(await bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([paymentId]);
    const first = await open("brg_1");
    // It carries the credited one only.
    expect((await chain.transfersForPayment(paymentId)).map((t) => t.bridge_id ?? null)).toEqual([
      null,
      null,
      first.id,
    ]);
    await transfer(SOURCE, 4_000_000n);
    // Credited while the first burn is in flight: waits for it (it may take these funds too).
    expect(await bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([]);
    await bridges.save({ ...first, state: "burned", amount: 7_000_000n }, 2);
    expect(await bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([paymentId]);
    expect(await bridges.totals(paymentId, SOURCE)).toEqual({ credited: 7_000_000n, burned: 7_000_000n });
  });

  test("a bridge only for funds worth one: from the floor up, needed to complete the payment, or burned already", async () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    const worth = () => bridges.unbridgedPayments(SOURCE, 10, lateFunds);
    await transfer(SOURCE, 50_000n); // a stranger's dust to a payment waiting for 10.00
    expect(await worth()).toEqual([]);
    await transfer(SOURCE, 49_999n);
    expect(await worth()).toEqual([]);
    await transfer(SOURCE, 1n); // together at the floor
    expect(await worth()).toEqual([paymentId]);
    const first = await open("brg_1");
    await bridges.save({ ...first, state: "minted", amount: 100_000n }, 2);

    // Paid in full on the settlement chain, with dust here: the payment has all it needs without
    // the dust, which stays, and its settlement does not wait for it.
    await transfer(SOURCE, 10n);
    expect(await worth()).toEqual([]);
    await transfer(31337, 9_900_000n);
    expect(await worth()).toEqual([]);
    expect((await payments.awaitingSettlement(10, lateFunds)).map((p) => p.id)).toEqual([paymentId]);
  });

  test("funds below the floor that the payment needs to be paid in full are bridged, and its settlement waits for them", async () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    await transfer(31337, 9_950_000n);
    await transfer(SOURCE, 50_000n); // the last 0.05 of 10.00, paid here
    expect(await bridges.unbridgedPayments(SOURCE, 10, lateFunds)).toEqual([paymentId]);
    expect((await payments.awaitingSettlement(10, lateFunds)).map((p) => p.id)).toEqual([]);
  });

  test("a finished payment's late funds here: at most the daily number of bridges, but always linked to a burn that took them", async () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    await payments.updateStatus(paymentId, "pending", "confirmed", 1);
    for (const [i, at] of [
      [1, 5],
      [2, 6],
    ] as const) {
      await transfer(SOURCE, 1_000_000n);
      const bridge = await bridges.create({ id: `brg_${i}`, payment_id: paymentId, chain_id: SOURCE, now: at });
      await bridges.save({ ...bridge, state: "minted", amount: 1_000_000n }, at);
    }
    await transfer(SOURCE, 1_000_000n);
    // Two bridges since the day began (created at 5 and 6): the third waits until the first is a day old.
    expect(await bridges.unbridgedPayments(SOURCE, 100, lateFunds)).toEqual([]);
    expect(await bridges.unbridgedPayments(SOURCE, 5 + 86_400_000, lateFunds)).toEqual([paymentId]);
    // Funds a burn already took (it burns the whole balance) are linked to it whatever the count.
    await bridges.save({ ...(await bridges.find("brg_2"))!, amount: 2_000_000n }, 7);
    expect(await bridges.unbridgedPayments(SOURCE, 100, lateFunds)).toEqual([paymentId]);
  });

  test("the settler leaves a payment alone while source funds are credited but unbridged, or a bridge is open", async () => {
    await payments.updateStatus(paymentId, "pending", "settling", 1);
    await transfer(SOURCE, 10_000_000n);
    expect((await payments.awaitingSettlement(1, ANY_LATE_FUNDS)).map((p) => p.id)).toEqual([]);
    const bridge = await open("brg_1");
    for (const state of ["credited", "burned", "attested"] as const) {
      await bridges.save({ ...bridge, state }, 2);
      expect((await payments.awaitingSettlement(1, ANY_LATE_FUNDS)).map((p) => p.id)).toEqual([]);
    }
    await bridges.save({ ...bridge, state: "minted", mint_block_number: 5, mint_log_index: 0 }, 2);
    expect((await payments.awaitingSettlement(1, ANY_LATE_FUNDS)).map((p) => p.id)).toEqual([paymentId]);
  });

  test("a mint is matched by its message nonce, else to the oldest open bridge of its amount, sent or not", async () => {
    await transfer(SOURCE, 10_000_000n);
    const first = await open("brg_1");
    const second = await bridges.create({ id: "brg_2", payment_id: paymentId, chain_id: SOURCE, now: 2 });
    // Neither sent yet, but anyone may call bridge() for the address: its mint is the oldest bridge's.
    expect((await bridges.forMint(paymentId, SOURCE, "0xn1", 5n))?.id).toBe("brg_1");
    await bridges.save({ ...first, tx_hash: "0xt1", state: "credited" }, 3);
    await bridges.save({ ...second, state: "burned", amount: 5n, message_nonce: "0xn2" }, 3);
    expect((await bridges.forMint(paymentId, SOURCE, "0xn2", 5n))?.id).toBe("brg_2");
    expect((await bridges.forMint(paymentId, SOURCE, "0xunknown", 5n))?.id).toBe("brg_1");
    // Another chain's mint is not this chain's bridge.
    expect(await bridges.forMint(paymentId, 1, "0xunknown", 5n)).toBeNull();
    expect(await bridges.forMint(paymentId, null, "0xunknown", 5n)).toBeNull();
  });

  test("a settlement sweeps the bridges minted at or before its block, not a later mint", async () => {
    const a = await open("brg_a");
    const b = await open("brg_b");
    await bridges.save({ ...a, state: "minted", mint_block_number: 10, mint_log_index: 3, mint_tx_hash: "0xm1" }, 2);
    await bridges.save({ ...b, state: "minted", mint_block_number: 12, mint_log_index: 0, mint_tx_hash: "0xm2" }, 2);
    expect(await bridges.newestMint(paymentId)).toEqual({ block: 12, log: 0 });
    expect(await bridges.markSettled(paymentId, 11, 3)).toBe(1);
    expect((await bridges.forPayment(paymentId)).map((r) => [r.id, r.state])).toEqual([
      ["brg_a", "settled"],
      ["brg_b", "minted"],
    ]);
    expect(await bridges.isMintRecorded("0xm2")).toBe(true);
    expect(await bridges.isMintRecorded("0xm3")).toBe(false);
  });

  test("the highest relayer nonce stored is per chain", async () => {
    expect(await bridges.maxNonce(SOURCE)).toBeNull();
    await bridges.save({ ...(await open("brg_1")), nonce: 7 }, 2);
    expect(await bridges.maxNonce(SOURCE)).toBe(7);
    expect(await bridges.maxNonce(1)).toBeNull();
  });
});
