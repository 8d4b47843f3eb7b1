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

afterEach(() => {
  store?.close();
  store = undefined;
});

let log = 0;
/** A transfer to the payment on `chainId`, credited unless said otherwise. */
function transfer(chainId: number, amount: bigint, credited = true) {
  chain.insertTransfer({
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
  if (credited) payments.addReceived(paymentId, amount, 1);
}

const open = (id: string) => bridges.create({ id, payment_id: paymentId, chain_id: SOURCE, now: 1 });

describe.each(ENGINES)("bridges store (%s)", (engine) => {
  beforeEach(async () => {
    store = await openTestStore(engine);
    const { db } = store;
    bridges = createBridgeStore(db);
    chain = createChainStore(db);
    payments = createPaymentStore(db);
    const account = insertAccount(db, "acct_b");
    paymentId = insertPayment(payments, paymentRow(account, 0, { factory_version: 2, amount: 10_000_000n })).id;
  });

  test("a payment needs a bridge for credited source transfers no bridge carries, once per burn in flight", () => {
    transfer(31337, 1_000_000n); // the settlement chain's: never bridged
    transfer(SOURCE, 2_000_000n, false); // not credited yet
    expect(bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([]);
    transfer(SOURCE, 3_000_000n);
    expect(bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([paymentId]);
    const first = open("brg_1");
    // It carries the credited one only.
    expect(chain.transfersForPayment(paymentId).map((t) => t.bridge_id ?? null)).toEqual([null, null, first.id]);
    transfer(SOURCE, 4_000_000n);
    // Credited while the first burn is in flight: waits for it (it may take these funds too).
    expect(bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([]);
    bridges.save({ ...first, state: "burned", amount: 7_000_000n }, 2);
    expect(bridges.unbridgedPayments(SOURCE, 1, ANY_LATE_FUNDS)).toEqual([paymentId]);
    expect(bridges.totals(paymentId, SOURCE)).toEqual({ credited: 7_000_000n, burned: 7_000_000n });
  });

  test("a bridge only for funds worth one: from the floor up, needed to complete the payment, or burned already", () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    const worth = () => bridges.unbridgedPayments(SOURCE, 10, lateFunds);
    transfer(SOURCE, 50_000n); // a stranger's dust to a payment waiting for 10.00
    expect(worth()).toEqual([]);
    transfer(SOURCE, 49_999n);
    expect(worth()).toEqual([]);
    transfer(SOURCE, 1n); // together at the floor
    expect(worth()).toEqual([paymentId]);
    const first = open("brg_1");
    bridges.save({ ...first, state: "minted", amount: 100_000n }, 2);

    // Paid in full on the settlement chain, with dust here: the payment has all it needs without
    // the dust, which stays, and its settlement does not wait for it.
    transfer(SOURCE, 10n);
    expect(worth()).toEqual([]);
    transfer(31337, 9_900_000n);
    expect(worth()).toEqual([]);
    expect(payments.awaitingSettlement(10, lateFunds).map((p) => p.id)).toEqual([paymentId]);
  });

  test("funds below the floor that the payment needs to be paid in full are bridged, and its settlement waits for them", () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    transfer(31337, 9_950_000n);
    transfer(SOURCE, 50_000n); // the last 0.05 of 10.00, paid here
    expect(bridges.unbridgedPayments(SOURCE, 10, lateFunds)).toEqual([paymentId]);
    expect(payments.awaitingSettlement(10, lateFunds).map((p) => p.id)).toEqual([]);
  });

  test("a finished payment's late funds here: at most the daily number of bridges, but always linked to a burn that took them", () => {
    const lateFunds = { floor: 100_000n, perDay: 2 };
    payments.updateStatus(paymentId, "pending", "confirmed", 1);
    for (const [i, at] of [
      [1, 5],
      [2, 6],
    ] as const) {
      transfer(SOURCE, 1_000_000n);
      const bridge = bridges.create({ id: `brg_${i}`, payment_id: paymentId, chain_id: SOURCE, now: at });
      bridges.save({ ...bridge, state: "minted", amount: 1_000_000n }, at);
    }
    transfer(SOURCE, 1_000_000n);
    // Two bridges since the day began (created at 5 and 6): the third waits until the first is a day old.
    expect(bridges.unbridgedPayments(SOURCE, 100, lateFunds)).toEqual([]);
    expect(bridges.unbridgedPayments(SOURCE, 5 + 86_400_000, lateFunds)).toEqual([paymentId]);
    // Funds a burn already took (it burns the whole balance) are linked to it whatever the count.
    bridges.save({ ...bridges.find("brg_2")!, amount: 2_000_000n }, 7);
    expect(bridges.unbridgedPayments(SOURCE, 100, lateFunds)).toEqual([paymentId]);
  });

  test("the settler leaves a payment alone while source funds are credited but unbridged, or a bridge is open", () => {
    payments.updateStatus(paymentId, "pending", "settling", 1);
    transfer(SOURCE, 10_000_000n);
    expect(payments.awaitingSettlement(1, ANY_LATE_FUNDS).map((p) => p.id)).toEqual([]);
    const bridge = open("brg_1");
    for (const state of ["credited", "burned", "attested"] as const) {
      bridges.save({ ...bridge, state }, 2);
      expect(payments.awaitingSettlement(1, ANY_LATE_FUNDS).map((p) => p.id)).toEqual([]);
    }
    bridges.save({ ...bridge, state: "minted", mint_block_number: 5, mint_log_index: 0 }, 2);
    expect(payments.awaitingSettlement(1, ANY_LATE_FUNDS).map((p) => p.id)).toEqual([paymentId]);
  });

  test("a mint is matched by its message nonce, else to the oldest open bridge of its amount, sent or not", () => {
    transfer(SOURCE, 10_000_000n);
    const first = open("brg_1");
    const second = bridges.create({ id: "brg_2", payment_id: paymentId, chain_id: SOURCE, now: 2 });
    // Neither sent yet, but anyone may call bridge() for the address: its mint is the oldest bridge's.
    expect(bridges.forMint(paymentId, SOURCE, "0xn1", 5n)?.id).toBe("brg_1");
    bridges.save({ ...first, tx_hash: "0xt1", state: "credited" }, 3);
    bridges.save({ ...second, state: "burned", amount: 5n, message_nonce: "0xn2" }, 3);
    expect(bridges.forMint(paymentId, SOURCE, "0xn2", 5n)?.id).toBe("brg_2");
    expect(bridges.forMint(paymentId, SOURCE, "0xunknown", 5n)?.id).toBe("brg_1");
    // Another chain's mint is not this chain's bridge.
    expect(bridges.forMint(paymentId, 1, "0xunknown", 5n)).toBeNull();
    expect(bridges.forMint(paymentId, null, "0xunknown", 5n)).toBeNull();
  });

  test("a settlement sweeps the bridges minted at or before its block, not a later mint", () => {
    const a = open("brg_a");
    const b = open("brg_b");
    bridges.save({ ...a, state: "minted", mint_block_number: 10, mint_log_index: 3, mint_tx_hash: "0xm1" }, 2);
    bridges.save({ ...b, state: "minted", mint_block_number: 12, mint_log_index: 0, mint_tx_hash: "0xm2" }, 2);
    expect(bridges.newestMint(paymentId)).toEqual({ block: 12, log: 0 });
    expect(bridges.markSettled(paymentId, 11, 3)).toBe(1);
    expect(bridges.forPayment(paymentId).map((r) => [r.id, r.state])).toEqual([
      ["brg_a", "settled"],
      ["brg_b", "minted"],
    ]);
    expect(bridges.isMintRecorded("0xm2")).toBe(true);
    expect(bridges.isMintRecorded("0xm3")).toBe(false);
  });

  test("the highest relayer nonce stored is per chain", () => {
    expect(bridges.maxNonce(SOURCE)).toBeNull();
    bridges.save({ ...open("brg_1"), nonce: 7 }, 2);
    expect(bridges.maxNonce(SOURCE)).toBe(7);
    expect(bridges.maxNonce(1)).toBeNull();
  });
});
