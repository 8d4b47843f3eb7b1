/**
 * A mined settlement is not yet a settled payment: the server waits for the configured
 * confirmations on the settlement's own block, as it does for the payer's transfer, because a
 * reorg can still drop a block that has fewer.
 */
import { expect, test } from "bun:test";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { settlerRanSince } from "../../support/wait.ts";

const CONFIRMATIONS = 3;
const stack = useStack({ confirmations: CONFIRMATIONS });

test("a mined settlement is confirmed only once its block has the configured confirmations", async () => {
  const { publicClient } = stack.chain;
  const payment = await stack.createPayment({ amount: "4.00" });
  await stack.pay(payment.deposit_address, usdc("4.00"));
  await stack.waitForStatus(payment.id, "settling", { mine: true });
  const hash = await stack.settlementSent(payment.id); // automine: in a block as it arrives
  const { blockNumber } = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });

  // One block short of the confirmations: a whole settler round sees the receipt and waits.
  const oneShort = blockNumber + BigInt(CONFIRMATIONS) - 1n;
  const head = await stack.chain.head();
  expect(head).toBeLessThanOrEqual(oneShort); // else this test would check nothing
  if (oneShort > head) await stack.mine(Number(oneShort - head));
  await settlerRanSince(stack);
  expect((await stack.getPayment(payment.id)).status).toBe("settling");
  expect(await stack.sql("SELECT state, block_number FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "submitted", block_number: null },
  ]);
  expect(await stack.events(payment.id)).toEqual(["payment.settling"]);

  // The block that completes them.
  await stack.mine(1);
  const confirmed = await stack.waitForStatus(payment.id, "confirmed");
  expect(confirmed.amount_received).toBe("4.00");
  expect(await stack.sql("SELECT state, block_number FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "mined", block_number: Number(blockNumber) },
  ]);
  expect(await stack.usdcBalance(stack.payout)).toBe(usdc("4.00"));
  expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
});
