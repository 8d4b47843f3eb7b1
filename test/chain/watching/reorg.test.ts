/**
 * Reorgs on a real anvil (evm_snapshot / evm_revert): a transfer seen before its confirmations
 * and then reorged away is never credited, and a watcher whose cursor block vanished rewinds
 * and still finds what the new chain holds.
 */
import { expect, test } from "bun:test";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";

const CONFIRMATIONS = 3;
const stack = useStack({ confirmations: CONFIRMATIONS });

test("a transfer reorged away before its confirmations is never credited and leaves the public view", async () => {
  const { anvil, publicClient } = stack.chain;
  const payment = await stack.createPayment({ amount: "25.00" });

  const snapshot = await anvil.snapshot();
  const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
  const { blockNumber } = await publicClient.getTransactionReceipt({ hash: txHash });
  await stack.mine(1); // 1 block on top: not yet the 3 confirmations

  const synced = await stack.sync(payment.id, txHash);
  expect(synced.status).toBe(200);
  expect(synced.json.status).toBe("pending");
  expect(synced.json.amount_received).toBeNull();
  expect(synced.json.incoming_transfers).toHaveLength(1);
  expect(synced.json.incoming_transfers[0]).toMatchObject({ tx_hash: txHash, amount: "25.00", confirmed: false });
  expect(await stack.sql("SELECT credited_at FROM transfers WHERE tx_hash = ?", txHash)).toEqual([
    { credited_at: null },
  ]);

  await anvil.revert(snapshot);
  expect(await publicClient.getTransactionReceipt({ hash: txHash }).catch(() => null)).toBeNull();
  await stack.mine(10);

  // The watcher scans the new chain past the old transfer's block and finds nothing there. Its
  // cursor alone cannot tell (before it sees the reorg it may stand past the block, on the old
  // chain): the transfer taken off the record can.
  await stack.waitScanned(blockNumber + 2n);
  await stack.waitFor(async () => (await stack.allEvents(payment.id)).includes("payment.funds_reversed") || undefined);
  const after = await stack.getPayment(payment.id);
  // The merchant's record keeps it, as reversed; nothing was ever credited.
  expect(after).toMatchObject({ status: "pending", amount_received: null });
  expect(after.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false, reversed: true })]);
  // The payer was told it arrived (seen, not counted yet), and then that it left the chain.
  expect(await stack.allEvents(payment.id)).toEqual(["payment.funds_seen", "payment.funds_reversed"]);
  expect(
    await stack.sql("SELECT tx_hash, credited_at FROM reversed_transfers WHERE payment_id = ?", payment.id),
  ).toEqual([{ tx_hash: txHash, credited_at: null }]);
  const view = await stack.publicPayment(payment.id);
  expect(view.incoming_transfers).toEqual([]);
  expect(view.amount_received).toBeNull();
  expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
});

test("when the watcher's cursor block is reorged away it rewinds and credits the new chain's transfer", async () => {
  const { anvil } = stack.chain;
  const payment = await stack.createPayment({ amount: "25.00" });
  const start = await stack.chain.head();

  const snapshot = await anvil.snapshot();
  await stack.mine(8);
  await stack.waitScanned(start + 8n - BigInt(CONFIRMATIONS), { mine: false });
  const stale = (
    await stack.sql<{ block_number: number; block_hash: string }>("SELECT block_number, block_hash FROM chain_cursor")
  )[0]!;

  // The chain the watcher followed is gone; the payment lands below its cursor on the new one.
  await anvil.revert(snapshot);
  const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
  const { blockNumber } = await stack.chain.publicClient.getTransactionReceipt({ hash: txHash });
  expect(blockNumber).toBeLessThan(BigInt(stale.block_number));

  const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(confirmed.amount_received).toBe("25.00");
  expect(confirmed.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, amount: "25.00", confirmed: true })]);
  expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
  const cursor = (
    await stack.sql<{ block_number: number; block_hash: string }>("SELECT block_number, block_hash FROM chain_cursor")
  )[0]!;
  const block = await stack.chain.publicClient.getBlock({ blockNumber: BigInt(cursor.block_number) });
  expect(cursor.block_hash).toBe(block.hash);
});
