/**
 * Reorgs after `confirmed` under the `fast` policy, on a real anvil (`anvil_reorg` replaces the
 * newest blocks with new ones holding the transactions it is given, as a chain reorg does: a
 * transaction left out is gone, neither mined nor pending). Checked against anvil 1.7.1: the
 * receipt and the transaction of a left-out hash both read null after the reorg, and the height
 * stays; the next block is what the watcher sees it by.
 */
import { expect, test } from "bun:test";
import type { Hex } from "viem";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { settlerRanSince } from "../../support/wait.ts";

const CONFIRMATIONS = 5;
const stack = useStack({ confirmations: CONFIRMATIONS });

/** A fast payment paid and confirmed: its transfer, its settlement and the raw transfer to replay. */
async function confirmedFast() {
  const payment = await stack.createPayment({ amount: "25.00", speed: "fast" });
  const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
  const raw = await stack.chain.anvil.rpc<Hex>("eth_getRawTransactionByHash", [txHash]);
  await stack.waitForStatus(payment.id, "confirmed", { mine: false });
  const [settlement] = await stack.sql<{ tx_hash: Hex; block_number: number }>(
    "SELECT tx_hash, block_number FROM settlements WHERE payment_id = ?",
    payment.id,
  );
  return { payment, txHash, raw, settlement: settlement! };
}

test("a reorg that drops the settlement but keeps the payer's transfer: recorded, announced, settled again", async () => {
  const payoutBefore = await stack.usdcBalance(stack.payout);
  const { payment, txHash, raw, settlement } = await confirmedFast();
  expect(await stack.usdcBalance(stack.payout)).toBe(payoutBefore + usdc("25.00"));

  // The transfer's block and the settlement's are replaced; the new first block holds the transfer again.
  await stack.chain.anvil.rpc("anvil_reorg", [2, [[raw, 0]]]);
  expect(
    await stack.chain.publicClient.getTransactionReceipt({ hash: settlement.tx_hash }).catch(() => null),
  ).toBeNull();
  expect(await stack.usdcBalance(stack.payout)).toBe(payoutBefore);
  await stack.mine(1);

  // The settlement left the chain: taken back from the record, announced, and sent again.
  const settled = await stack.waitFor(async () => {
    const rows = await stack.sql<{ state: string; tx_hash: Hex }>(
      "SELECT state, tx_hash FROM settlements WHERE payment_id = ? ORDER BY id",
      payment.id,
    );
    return rows.length === 2 && rows[1]!.state === "mined" ? rows : undefined;
  });
  expect(settled.map((r) => r.state)).toEqual(["reorged", "mined"]);
  expect(settled[1]!.tx_hash).not.toBe(settlement.tx_hash);
  expect(await stack.usdcBalance(stack.payout)).toBe(payoutBefore + usdc("25.00"));

  const after = await stack.getPayment(payment.id);
  expect(after).toMatchObject({ status: "confirmed", amount_received: "25.00" });
  // The payer's transfer is still credited, once, in its new block.
  expect(after.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: true })]);
  expect(await stack.events(payment.id)).toEqual([
    "payment.settling",
    "payment.confirmed",
    "payment.settlement_reversed",
  ]);
  expect(
    (await stack.sql("SELECT amount_settled FROM payments WHERE id = ?", payment.id)).map((r) =>
      String(r.amount_settled),
    ),
  ).toEqual([String(usdc("25.00"))]);
});

test("a reorg that takes the payer's transfer after confirmed: the record keeps it, and both reversals are announced", async () => {
  const payoutBefore = await stack.usdcBalance(stack.payout);
  const { payment, txHash } = await confirmedFast();

  await stack.chain.anvil.rpc("anvil_reorg", [2, []]);
  await stack.mine(1);

  const reversed = await stack.waitFor(async () => {
    const events = await stack.events(payment.id);
    return events.includes("payment.funds_reversed") && events.includes("payment.settlement_reversed")
      ? events
      : undefined;
  });
  expect(reversed.slice(0, 2)).toEqual(["payment.settling", "payment.confirmed"]);
  expect(reversed).toHaveLength(4);

  // `confirmed` stays (it is final); what was received and settled says what the chain now holds.
  const after = await stack.getPayment(payment.id);
  expect(after).toMatchObject({ status: "confirmed", amount_received: "0.00" });
  expect(after.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false, reversed: true })]);
  expect(await stack.sql("SELECT tx_hash FROM reversed_transfers WHERE payment_id = ?", payment.id)).toEqual([
    { tx_hash: txHash },
  ]);
  expect(await stack.sql("SELECT count(*) AS n FROM transfers WHERE payment_id = ?", payment.id)).toEqual([{ n: 0 }]);
  expect(await stack.usdcBalance(stack.payout)).toBe(payoutBefore);
  expect(
    (await stack.sql("SELECT amount_settled FROM payments WHERE id = ?", payment.id)).map((r) =>
      String(r.amount_settled),
    ),
  ).toEqual(["0"]);
  // Nothing is left to settle: a whole settlement round later, no new settlement was sent.
  await settlerRanSince(stack);
  expect(
    (await stack.sql<{ state: string }>("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).map(
      (r) => r.state,
    ),
  ).toEqual(["reorged"]);
});
