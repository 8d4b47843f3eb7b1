/**
 * POST /api/public/payments/{id}/sync against a real chain: a payer's transaction hash records
 * its USDC transfers to the payment's deposit address (credited once confirmed, exactly once);
 * anything else is refused and writes nothing.
 */
import { describe, expect, test } from "bun:test";
import { toHex } from "viem";
import { ANVIL_KEY_3 } from "../../support/anvil.ts";
import { testTokenAbi, walletClientFor } from "../../support/chain.ts";
import { useStack } from "../../support/per-file.ts";
import { isErrorBody } from "../../support/server.ts";
import { randomAddress, usdc } from "../../support/test-chain.ts";

const stack = useStack({ confirmations: 2 });

const transferCount = async () => (await stack.sql<{ n: number }>("SELECT count(*) AS n FROM transfers"))[0]!.n;

describe("a matching transaction", () => {
  test("is recorded (200 with the public view), credited once confirmed, and only once however often it is synced", async () => {
    const before = await stack.usdcBalance(stack.payout);
    const payment = await stack.createPayment({ amount: "25.00" });
    const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));

    const first = await stack.sync(payment.id, txHash);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      id: payment.id,
      status: "pending",
      amount_received: null,
      amount_due: "25.00",
      deposit_address: payment.deposit_address,
    });
    expect(first.json.incoming_transfers).toEqual([
      expect.objectContaining({ tx_hash: txHash, amount: "25.00", confirmed: false }),
    ]);
    expect(first.json.metadata).toBeUndefined();

    const again = await stack.sync(payment.id, txHash);
    expect(again.status).toBe(200);
    expect(again.json.incoming_transfers).toHaveLength(1);
    expect(await stack.sql("SELECT credited_at FROM transfers WHERE payment_id = ?", payment.id)).toEqual([
      { credited_at: null },
    ]);

    await stack.mine(2); // now confirmed: the sync (or the watcher, whichever is first) credits it
    const credited = await stack.sync(payment.id, txHash);
    expect(credited.status).toBe(200);
    expect(credited.json.amount_received).toBe("25.00");

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.00");
    for (let i = 0; i < 3; i++) {
      const repeat = await stack.sync(payment.id, txHash);
      expect(repeat.status).toBe(200);
      expect(repeat.json.amount_received).toBe("25.00");
      expect(repeat.json.status).toBe("confirmed");
    }
    await stack.waitScanned(await stack.chain.head());
    expect((await stack.getPayment(payment.id)).amount_received).toBe("25.00");
    expect(await stack.sql("SELECT count(*) AS n FROM transfers WHERE payment_id = ?", payment.id)).toEqual([{ n: 1 }]);
    expect(await stack.allEvents(payment.id)).toEqual(["payment.funds_seen", "payment.settling", "payment.confirmed"]);
    expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.00"));
  });

  test("a transaction not mined yet answers 202 and records nothing; mined, it is credited", async () => {
    const { anvil } = stack.chain;
    const payment = await stack.createPayment({ amount: "25.00" });
    await anvil.rpc("evm_setAutomine", [false]);
    let txHash: `0x${string}`;
    try {
      txHash = await stack.pay(payment.deposit_address, usdc("25.00"), { wait: false });
      const pending = await stack.sync(payment.id, txHash);
      expect(pending.status).toBe(202);
      expect(pending.json).toMatchObject({
        id: payment.id,
        status: "pending",
        amount_received: null,
        incoming_transfers: [],
      });
      expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
      await stack.mine(1);
    } finally {
      await anvil.rpc("evm_setAutomine", [true]);
    }
    const mined = await stack.sync(payment.id, txHash);
    expect(mined.status).toBe(200);
    expect(mined.json.incoming_transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false })]);

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.00");
    expect(confirmed.transfers).toEqual([
      expect.objectContaining({ tx_hash: txHash, amount: "25.00", confirmed: true }),
    ]);
  });
});

describe("refused transactions write nothing", () => {
  test("a USDC transfer to another address: 422", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const txHash = await stack.pay(randomAddress(), usdc("25.00"));
    await stack.mine(2);
    const before = await transferCount();
    const res = await stack.sync(payment.id, txHash);
    expect(res.status).toBe(422);
    expect(isErrorBody(res.json)).toBe(true);
    expect(await transferCount()).toBe(before);
    expect((await stack.getPayment(payment.id)).amount_received).toBeNull();
  });

  test("another payment's transfer: 422 for this one, and that one is unaffected", async () => {
    const mine = await stack.createPayment({ amount: "25.00" });
    const theirs = await stack.createPayment({ amount: "3.00" });
    const txHash = await stack.pay(theirs.deposit_address, usdc("3.00"));
    const res = await stack.sync(mine.id, txHash);
    expect(res.status).toBe(422);
    expect(isErrorBody(res.json)).toBe(true);
    // Nothing for this payment; the watcher, scanning to the head, may record it for its own at any
    // moment, and only there.
    const recorded = await stack.sql<{ payment_id: string }>(
      "SELECT payment_id FROM transfers WHERE tx_hash = ?",
      txHash,
    );
    expect(recorded.filter((row) => row.payment_id !== theirs.id)).toEqual([]);
    expect(recorded.length).toBeLessThanOrEqual(1);
    expect((await stack.publicPayment(mine.id)).incoming_transfers).toEqual([]);
    await stack.waitForStatus(theirs.id, "confirmed", { mine: true });
    expect((await stack.getPayment(mine.id)).amount_received).toBeNull();
  });

  test("a reverted transaction: 422", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    // An account without USDC: the transfer reverts on chain (gas is given, so nothing simulates it first).
    const broke = walletClientFor(stack.chain.rpcUrl, ANVIL_KEY_3);
    const txHash = await broke.writeContract({
      address: stack.chain.usdc,
      abi: testTokenAbi,
      functionName: "transfer",
      args: [payment.deposit_address, usdc("25.00")],
      gas: 100_000n,
    });
    const receipt = await stack.chain.publicClient.waitForTransactionReceipt({ hash: txHash });
    expect(receipt.status).toBe("reverted");
    const before = await transferCount();
    const res = await stack.sync(payment.id, txHash);
    expect(res.status).toBe(422);
    expect(isErrorBody(res.json)).toBe(true);
    expect(await transferCount()).toBe(before);
  });

  test("an unknown hash: 202 with the unchanged view, since the node may still learn of it", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const before = await transferCount();
    const res = await stack.sync(payment.id, toHex(crypto.getRandomValues(new Uint8Array(32))));
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id: payment.id, status: "pending", amount_received: null });
    expect(await transferCount()).toBe(before);
  });

  test("a malformed hash or body: 400", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const before = await transferCount();
    for (const bad of [
      "0x1234",
      "not a hash",
      `0x${"g".repeat(64)}`,
      `${"ab".repeat(32)}`,
      `0x${"ab".repeat(33)}`,
      42,
      null,
    ]) {
      const res = await stack.sync(payment.id, bad);
      expect(res.status).toBe(400);
      expect(isErrorBody(res.json)).toBe(true);
    }
    for (const body of [{}, "{not json", { tx_hash: `0x${"ab".repeat(32)}`, extra: 1 }]) {
      const res = await stack.request(`/api/public/payments/${payment.id}/sync`, { body, auth: false });
      expect(res.status).toBe(400);
      expect(isErrorBody(res.json)).toBe(true);
    }
    expect(await transferCount()).toBe(before);
  });

  test("an unknown payment: 404", async () => {
    const txHash = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const res = await stack.sync(toHex(crypto.getRandomValues(new Uint8Array(32))), txHash);
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});
