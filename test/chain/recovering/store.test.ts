/**
 * The recoveries store's SQL on both engines (a real SQLite file, a real PostgreSQL database):
 * a payment's requests, the one under way per token and chain, what is due, nonces, and what the
 * limits on requests count.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createRecoveryStore, type RecoveryStore } from "../../../src/chain/recovering/store.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../../support/store-engines.ts";

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const TOKEN = `0x${"aa".repeat(20)}`;

describe.each(ENGINES)("recoveries store (%s)", (engine) => {
  let recoveries: RecoveryStore;
  let payment: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    recoveries = createRecoveryStore(store.db);
    payment = (
      await insertPayment(createPaymentStore(store.db), paymentRow(await insertAccount(store.db, "acct_r"), 0))
    ).id;
  });
  const request = (id: string, chainId: number, token: string | null, now: number) =>
    recoveries.insert({
      id,
      payment_id: payment,
      chain_id: chainId,
      token,
      decimals: token === null ? 18 : 6,
      payout_address: "0xpayout",
      now,
    });

  test("a request is stored pending, listed newest first, and found as the one under way for its token", async () => {
    await request("rcv_1", 31337, TOKEN, 10);
    await request("rcv_2", 31337, null, 20);
    expect(await recoveries.findById("rcv_1")).toEqual({
      id: "rcv_1",
      payment_id: payment,
      chain_id: 31337,
      token: TOKEN,
      decimals: 6,
      payout_address: "0xpayout",
      state: "pending",
      amount_units: null,
      nonce: null,
      raw_tx: null,
      tx_hash: null,
      tx_hashes: null,
      sent_at: null,
      block_number: null,
      error: null,
      attempts: 0,
      next_attempt_at: 10,
      created_at: 10,
      updated_at: 10,
    });
    expect(await recoveries.findById("rcv_none")).toBeNull();
    expect((await recoveries.forPayment(payment)).map((r) => r.id)).toEqual(["rcv_2", "rcv_1"]);
    expect((await recoveries.openFor(payment, 31337, TOKEN))?.id).toBe("rcv_1");
    expect((await recoveries.openFor(payment, 31337, null))?.id).toBe("rcv_2"); // the native coin
    expect(await recoveries.openFor(payment, 1, TOKEN)).toBeNull();
  });

  test("a save moves a request on; finished ones are neither due nor under way, and every nonce signed counts", async () => {
    await request("rcv_1", 31337, TOKEN, 10);
    await request("rcv_2", 31337, null, 20);
    await request("rcv_3", 1, TOKEN, 30);
    expect(await recoveries.maxNonceOn(31337)).toBeNull();
    const first = (await recoveries.findById("rcv_1"))!;
    // A uint256 amount kept as its decimal string.
    const amount = (2n ** 200n).toString();
    await recoveries.save(
      { ...first, state: "failed", nonce: 8, amount_units: amount, tx_hashes: '["0x1"]', error: "reverted" },
      40,
    );
    await recoveries.save(
      { ...(await recoveries.findById("rcv_2"))!, state: "submitted", nonce: 5, next_attempt_at: 100 },
      40,
    );
    expect(await recoveries.findById("rcv_1")).toMatchObject({ state: "failed", amount_units: amount, updated_at: 40 });
    expect(await recoveries.openFor(payment, 31337, TOKEN)).toBeNull();
    expect((await recoveries.due(50)).map((r) => r.id)).toEqual(["rcv_3"]);
    expect((await recoveries.due(100)).map((r) => r.id)).toEqual(["rcv_3", "rcv_2"]);
    expect(await recoveries.maxNonceOn(31337)).toBe(8); // the failed one's nonce too
    expect(await recoveries.maxNonceOn(1)).toBeNull();
  });

  test("the limits count: the newest request of a payment's token on a chain, and an account's requests, since a time", async () => {
    const other = (
      await insertPayment(createPaymentStore(store!.db), paymentRow(await insertAccount(store!.db, "acct_o"), 0))
    ).id;
    await request("rcv_1", 31337, TOKEN, 10);
    await request("rcv_2", 31337, TOKEN, 30);
    await request("rcv_3", 31337, null, 20);
    await request("rcv_4", 1, TOKEN, 40);
    // Finished ones count as much as those under way.
    await recoveries.save({ ...(await recoveries.findById("rcv_2"))!, state: "failed", error: "reverted" }, 50);
    await recoveries.insert({
      id: "rcv_other",
      payment_id: other,
      chain_id: 31337,
      token: TOKEN,
      decimals: 6,
      payout_address: "0xpayout",
      now: 35,
    });

    expect(await recoveries.latestFor(payment, 31337, TOKEN, 0)).toBe(30);
    expect(await recoveries.latestFor(payment, 31337, TOKEN, 30)).toBeNull(); // after the time only
    expect(await recoveries.latestFor(payment, 31337, null, 0)).toBe(20);
    expect(await recoveries.latestFor(payment, 1, TOKEN, 0)).toBe(40);
    expect(await recoveries.latestFor(payment, 1, null, 0)).toBeNull();
    expect(await recoveries.latestFor(other, 31337, TOKEN, 0)).toBe(35);

    expect(await recoveries.askedByAccountSince("acct_r", 0)).toEqual([10, 20, 30, 40]);
    expect(await recoveries.askedByAccountSince("acct_r", 20)).toEqual([30, 40]);
    expect(await recoveries.askedByAccountSince("acct_o", 0)).toEqual([35]);
    expect(await recoveries.askedByAccountSince("acct_none", 0)).toEqual([]);
  });
});
