/**
 * The settlement chain's watcher pays refunds, on a real anvil with the real contracts and the
 * server in-process: which transfer pays which refund (exact amount, after it became payable,
 * first come first served), when it counts (the payment's speed policy), and what a reorg undoes.
 */
import { expect, test } from "bun:test";
import { useStack } from "../support/per-file.ts";
import {
  createRefund,
  getRefund,
  merchantWallet,
  paidPayment,
  payRefund,
  transferUsdc,
  waitForRefund,
  waitForSeen,
} from "../support/refunds-on-chain.ts";
import { randomAddress, usdc } from "../support/test-chain.ts";
import { watcherRanSince } from "../support/wait.ts";

const CONFIRMATIONS = 3;
/** anvil's finalized block trails the head by two epochs: 16 blocks, further than the watcher's rescan goes back (10). */
const SLOTS_IN_AN_EPOCH = 8;
const FINAL_LAG = 2 * SLOTS_IN_AN_EPOCH;
// Warnings kept: a test reads that the watcher rescanned after a reorg. The server talks to
// anvil through a tap, so that a reorg is one step for it (see `reorg`).
const stack = useStack({
  confirmations: CONFIRMATIONS,
  slotsInAnEpoch: SLOTS_IN_AN_EPOCH,
  logLevel: "warn",
  tapRpc: true,
});

const rescans = () => stack.logs().filter((l) => l.msg === "chain reorg below the cursor; rescanning").length;

/**
 * anvil_reorg of the newest `depth` blocks, leaving every transaction of theirs out, and a block
 * on top; the server sees the chain before it and after it, never the heights anvil passes
 * through (a watcher that read the head mid-reorg rescanned from there, deeper than the test meant).
 */
async function reorg(depth: number): Promise<void> {
  const before = rescans();
  await stack.tap!.atomically(() => stack.chain.anvil.rpc("anvil_reorg", [depth, []]));
  await stack.mine(1);
  await stack.waitFor(() => rescans() > before, 15_000, "the watcher to rescan after the reorg");
}

/** Waits until the watcher has scanned up to the head and then run a whole round: what it would do, it did. */
async function watcherCaughtUp(): Promise<void> {
  await stack.waitScanned(await stack.chain.head(), { mine: false });
  await watcherRanSince(stack);
}

test("a transfer of another amount pays nothing; the exact amount, from any wallet, pays it at the payment's depth", async () => {
  const payment = await paidPayment(stack, "25.00");
  const refund = await createRefund(stack, payment.id, { amount: "10.00", reason: "damaged" });
  expect(refund).toMatchObject({ status: "awaiting_payment", tx_hash: null });
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));

  await transferUsdc(stack.chain, merchant, refund.refund_address, usdc("9.999999"));
  await transferUsdc(stack.chain, merchant, refund.refund_address, usdc("10.000001"));
  await stack.mine(CONFIRMATIONS);
  await watcherCaughtUp();
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });

  const sent = await payRefund(stack.chain, merchant, refund);
  const seen = await waitForSeen(stack, refund.id);
  expect(seen).toMatchObject({
    status: "awaiting_payment",
    tx_hash: sent.hash,
    block_number: Number(sent.blockNumber),
  });

  // Standard speed: one block short of the depth it still waits, with its transfer seen.
  await stack.mine(CONFIRMATIONS - 1);
  await watcherCaughtUp();
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "awaiting_payment", tx_hash: sent.hash });
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("0.00");

  await stack.mine(1);
  const succeeded = await waitForRefund(stack, refund.id, "succeeded");
  expect(succeeded).toMatchObject({ tx_hash: sent.hash, block_number: Number(sent.blockNumber), amount: "10.00" });
  expect(succeeded.succeeded_at).not.toBeNull();
  const after = await stack.getPayment(payment.id);
  expect(after).toMatchObject({ status: "confirmed", amount_received: "25.00", amount_refunded: "10.00" });
  expect((await stack.events(payment.id)).filter((t) => t.startsWith("refund."))).toEqual([
    "refund.created",
    "refund.payable",
    "refund.succeeded",
  ]);
});

test("a transfer to the address made before the refund was payable does not pay it, even when a reorg makes the watcher read its block again", async () => {
  const payment = await paidPayment(stack, "25.00");
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));
  const address = randomAddress();
  const early = await transferUsdc(stack.chain, merchant, address, usdc("5.00"));
  await stack.waitScanned(early.blockNumber, { mine: false });
  const refund = await createRefund(stack, payment.id, { amount: "5.00", refund_address: address });

  // A reorg of the newest block sends the watcher back at least ten blocks: it reads the early
  // transfer's block again, now with the refund payable.
  // The newest block carries a transfer the reorg drops: an empty block mined again in the same
  // second as the one it replaces would have its hash, and there would be no reorg to see.
  await stack.mine(1);
  await transferUsdc(stack.chain, merchant, randomAddress(), 1n);
  await watcherCaughtUp();
  await reorg(1);
  await stack.mine(CONFIRMATIONS);
  await watcherCaughtUp();
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });

  const sent = await payRefund(stack.chain, merchant, refund);
  const succeeded = await waitForRefund(stack, refund.id, "succeeded", { mine: true });
  expect(succeeded.tx_hash).toBe(sent.hash);
  expect(succeeded.tx_hash).not.toBe(early.hash);
});

test("two payable refunds with the same address and amount are paid first come, first served: one transfer each", async () => {
  const payment = await paidPayment(stack, "25.00");
  const address = randomAddress();
  const first = await createRefund(stack, payment.id, { amount: "5.00", refund_address: address });
  const second = await createRefund(stack, payment.id, { amount: "5.00", refund_address: address });
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));

  const one = await payRefund(stack.chain, merchant, second);
  expect((await waitForRefund(stack, first.id, "succeeded", { mine: true })).tx_hash).toBe(one.hash);
  await watcherCaughtUp();
  expect(await getRefund(stack, second.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("5.00");

  const two = await payRefund(stack.chain, merchant, second);
  expect((await waitForRefund(stack, second.id, "succeeded", { mine: true })).tx_hash).toBe(two.hash);
  expect((await getRefund(stack, first.id)).tx_hash).toBe(one.hash);
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("10.00");
});

test("a reorg that removes a seen transfer before it counts puts the refund back to waiting; a later transfer pays it", async () => {
  const payment = await paidPayment(stack, "25.00");
  const refund = await createRefund(stack, payment.id, { amount: "7.50" });
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));

  const dropped = await payRefund(stack.chain, merchant, refund);
  expect((await waitForSeen(stack, refund.id)).tx_hash).toBe(dropped.hash);
  // Its block is replaced by an empty one: the transfer is gone, neither mined nor pending.
  await stack.chain.anvil.rpc("anvil_reorg", [1, []]);
  expect(await stack.chain.publicClient.getTransactionReceipt({ hash: dropped.hash }).catch(() => null)).toBeNull();
  await stack.mine(1);
  const waiting = await stack.waitFor(
    async () => {
      const r = await getRefund(stack, refund.id);
      return r.tx_hash === null ? r : undefined;
    },
    15_000,
    "the reorged transfer to be forgotten",
  );
  expect(waiting).toMatchObject({ status: "awaiting_payment", block_number: null });
  await stack.mine(CONFIRMATIONS + 1);
  await watcherCaughtUp();
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("0.00");

  const paid = await payRefund(stack.chain, merchant, refund);
  const succeeded = await waitForRefund(stack, refund.id, "succeeded", { mine: true });
  expect(succeeded).toMatchObject({ tx_hash: paid.hash, block_number: Number(paid.blockNumber) });
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("7.50");
  expect((await stack.events(payment.id)).filter((t) => t === "refund.succeeded")).toHaveLength(1);
});

test("under the fast policy a refund succeeds in the round that sees its transfer, and a rescan of its block pays no other refund", async () => {
  const payment = await paidPayment(stack, "25.00", { speed: "fast" });
  const address = randomAddress();
  const first = await createRefund(stack, payment.id, { amount: "3.00", refund_address: address });
  const second = await createRefund(stack, payment.id, { amount: "3.00", refund_address: address });
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));
  const sent = await payRefund(stack.chain, merchant, first);
  expect((await waitForRefund(stack, first.id, "succeeded")).tx_hash).toBe(sent.hash);

  // A reorg of a later block: the rescan reads the transfer again, with the second refund (payable
  // before it, same address and amount) still waiting. It paid a refund already: it pays no other,
  // and the watcher goes on.
  // The newest block carries a transfer the reorg drops: an empty block mined again in the same
  // second as the one it replaces would have its hash, and there would be no reorg to see.
  await stack.mine(1);
  await transferUsdc(stack.chain, merchant, randomAddress(), 1n);
  await watcherCaughtUp();
  await reorg(1);
  await stack.mine(CONFIRMATIONS);
  await watcherCaughtUp();
  expect(await getRefund(stack, second.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });
  expect(await getRefund(stack, first.id)).toMatchObject({ status: "succeeded", tx_hash: sent.hash });
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("3.00");
  expect((await stack.events(payment.id)).filter((t) => t === "refund.succeeded")).toHaveLength(1);
});

test("a reorg deeper than the watcher's rescan that took a seen transfer: found when the policy would count its block, and the refund waits again", async () => {
  const payment = await stack.createPayment({ amount: "25.00", speed: "final" });
  await stack.pay(payment.deposit_address, usdc("25.00"));
  await stack.mine(FINAL_LAG);
  await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
  const refund = await createRefund(stack, payment.id, { amount: "4.00" });
  const merchant = await merchantWallet(stack.chain, usdc("100.00"));
  const dropped = await payRefund(stack.chain, merchant, refund);
  await waitForSeen(stack, refund.id);

  // The transfer's block and the twelve above it are replaced: the watcher's rescan goes back ten
  // blocks, not as far as the transfer's, so the refund still shows it.
  await stack.mine(12);
  await watcherCaughtUp();
  await reorg(13);
  expect(await stack.chain.publicClient.getTransactionReceipt({ hash: dropped.hash }).catch(() => null)).toBeNull();
  await watcherCaughtUp();
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "awaiting_payment", tx_hash: dropped.hash });

  // Once `final` would count its block, the block's hash is looked at: not the chain's any more.
  await stack.mine(FINAL_LAG);
  const waiting = await stack.waitFor(
    async () => {
      const r = await getRefund(stack, refund.id);
      return r.tx_hash === null ? r : undefined;
    },
    15_000,
    "the transfer the reorg took to be forgotten",
  );
  expect(waiting.status).toBe("awaiting_payment");
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("0.00");

  const paid = await payRefund(stack.chain, merchant, refund);
  const succeeded = await waitForRefund(stack, refund.id, "succeeded", { mine: true, timeoutMs: 30_000 });
  expect(succeeded.tx_hash).toBe(paid.hash);
  expect((await stack.getPayment(payment.id)).amount_refunded).toBe("4.00");
});
