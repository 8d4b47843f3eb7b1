/**
 * The chain store's SQL on both engines (a real SQLite file, a real PostgreSQL database):
 * transfers credited once, the watcher's cursor, and settlement transactions with their nonces.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type ChainStore, createChainStore, type TransferRow } from "../../src/chain/store.ts";
import { INT64_MAX } from "../../src/db/int64.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

describe.each(ENGINES)("chain store (%s)", (engine) => {
  let chain: ChainStore;
  let payment: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    chain = createChainStore(store.db);
    payment = (
      await insertPayment(createPaymentStore(store.db), paymentRow(await insertAccount(store.db, "acct_c"), 0))
    ).id;
  });
  const transfer = async (n: number, fields: Partial<TransferRow> = {}): Promise<TransferRow> => {
    const row: TransferRow = {
      chain_id: 31337,
      tx_hash: hash(n),
      log_index: 0,
      payment_id: payment,
      from_address: "0x1",
      amount: 1_000_000n,
      block_number: n,
      block_hash: hash(1000 + n),
      credited_at: null,
      created_at: 1,
      ...fields,
    };
    await chain.insertTransfer(row);
    return row;
  };

  test("a transfer keeps its int64 amount exact and is credited once; one that left the chain is kept apart", async () => {
    const big = await transfer(1, { amount: INT64_MAX, log_index: 3 });
    expect(await chain.findTransfer(hash(1), 3)).toEqual({ ...big, bridge_id: null });
    await expect(transfer(2, { amount: INT64_MAX + 1n })).rejects.toThrow(RangeError);
    expect(await chain.markCredited(hash(1), 3, 7, "0xb7", 9)).toBe(true);
    expect(await chain.markCredited(hash(1), 3, 8, "0xb8", 10)).toBe(false);
    expect(await chain.findTransfer(hash(1), 3)).toMatchObject({ credited_at: 9, block_number: 7, block_hash: "0xb7" });

    await transfer(5, { chain_id: 1 });
    await transfer(4);
    await transfer(6);
    // What a scan of blocks 4 to 6 on 31337 must find again: not the other chain's, not block 7's.
    expect((await chain.transfersBetween(31337, 4, 6)).map((t) => t.block_number)).toEqual([4, 6]);
    // Waiting for their payment's policy, up to the scanned block: not the credited one.
    expect((await chain.waitingOn(31337, 5)).map((t) => [t.block_number, t.speed])).toEqual([[4, "standard"]]);

    await chain.reverseTransfer(hash(4), 0, 20);
    await chain.reverseTransfer(hash(1), 3, 21);
    expect(await chain.findTransfer(hash(4), 0)).toBeNull();
    expect(
      (await chain.reversedForPayment(payment)).map((t) => [t.tx_hash, t.amount, t.credited_at, t.reversed_at]),
    ).toEqual([
      [hash(4), 1_000_000n, null, 20],
      [hash(1), INT64_MAX, 9, 21],
    ]);
    // The key is free again: the same transaction may land in a new block.
    await transfer(4, { block_number: 8 });
    await chain.moveTransfer(hash(4), 0, 9, "0xb9");
    // In block order.
    expect((await chain.transfersForPayment(payment)).map((t) => [t.chain_id, t.block_number])).toEqual([
      [1, 5],
      [31337, 6],
      [31337, 9],
    ]);
  });

  test("the cursor is one row per chain, moved by each scan", async () => {
    expect(await chain.cursor(1)).toBeNull();
    await chain.setCursor(1, 10, "0xa", 1);
    await chain.setCursor(2, 20, "0xb", 1);
    await chain.setCursor(1, 11, "0xc", 2);
    expect(await chain.cursor(1)).toEqual({ block_number: 11, block_hash: "0xc" });
    expect(await chain.cursor(2)).toEqual({ block_number: 20, block_hash: "0xb" });
  });

  test("settlements: open ones by nonce, replaced and finished; the highest nonce leaves dropped ones out", async () => {
    expect(await chain.maxNonce()).toBeNull();
    const signed = { payment_id: payment, raw_tx: "0xraw", max_fee: "100", priority_fee: "2", now: 5 };
    const second = await chain.insertSettlement({ ...signed, nonce: 4, tx_hash: "0xt4" });
    const first = await chain.insertSettlement({ ...signed, nonce: 3, tx_hash: "0xt3" });
    expect(first).toBeGreaterThan(second);
    expect((await chain.openSettlements()).map((s) => [s.id, s.nonce, s.tx_hashes])).toEqual([
      [first, 3, '["0xt3"]'],
      [second, 4, '["0xt4"]'],
    ]);
    await chain.replaceSettlement({ ...signed, id: first, tx_hash: "0xt3b", tx_hashes: ["0xt3", "0xt3b"], now: 6 });
    await chain.finishSettlement(first, "mined", { amount: INT64_MAX, fee: 5n }, 12, "0xt3b", 7);
    // too large to store: left null
    await chain.finishSettlement(second, "dropped", { amount: 2n ** 63n, fee: 2n ** 63n }, null, "0xt4", 7);
    expect(await chain.openSettlements()).toEqual([]);
    expect(await chain.settlementsForPayment(payment)).toEqual([
      {
        id: second,
        payment_id: payment,
        nonce: 4,
        state: "dropped",
        tx_hash: "0xt4",
        tx_hashes: '["0xt4"]',
        raw_tx: "0xraw",
        max_fee: "100",
        priority_fee: "2",
        amount: null,
        fee: null,
        block_number: null,
        submitted_at: 5,
        updated_at: 7,
      },
      {
        id: first,
        payment_id: payment,
        nonce: 3,
        state: "mined",
        tx_hash: "0xt3b",
        tx_hashes: '["0xt3","0xt3b"]',
        raw_tx: "0xraw",
        max_fee: "100",
        priority_fee: "2",
        amount: INT64_MAX,
        fee: 5n,
        block_number: 12,
        submitted_at: 6,
        updated_at: 7,
      },
    ]);
    expect(await chain.maxNonce()).toBe(3);
    // Young while a reorg may still take it: mined above the given block.
    expect(await chain.hasYoungSettlement(11)).toBe(true);
    expect((await chain.youngSettlements(11)).map((s) => s.id)).toEqual([first]);
    expect(await chain.hasYoungSettlement(12)).toBe(false);
    await chain.settlementMovedTo(first, 13, 8);
    expect((await chain.youngSettlements(12)).map((s) => s.block_number)).toEqual([13]);
    expect(await chain.settlementReorged(first, 9)).toBe(true);
    expect(await chain.settlementReorged(first, 9)).toBe(false);
    expect(await chain.hasYoungSettlement(0)).toBe(false);
  });

  test("a transaction that throws leaves nothing behind", async () => {
    await expect(
      chain.transaction(async () => {
        await chain.setCursor(1, 10, "0xa", 1);
        throw new Error("tick failed");
      }),
    ).rejects.toThrow("tick failed");
    expect(await chain.cursor(1)).toBeNull();
  });
});
