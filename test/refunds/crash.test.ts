/**
 * kill -9 of the shipped binary (dist/stablegate serve) between every step of a refund paid on a
 * real anvil, restarted each time on the same data dir: after it is created, after it is payable,
 * right after the merchant's transfer is mined, once the transfer is seen but before it counts,
 * and after it counted. Each kill changes nothing but time: the same refunds, ids and statuses
 * as before it, one event of each kind, and amount_refunded counted once.
 *
 * STABLEGATE_TEST_BINARY=<path of another build's dist/stablegate> runs the same against it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  createRefund,
  getRefund,
  merchantWallet,
  paidPayment,
  payRefund,
  waitForRefund,
  waitForSeen,
} from "../support/refunds-on-chain.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { usdc } from "../support/test-chain.ts";

const CONFIRMATIONS = 3;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ subprocess: true, binary: true, confirmations: CONFIRMATIONS });
}, 120_000);

afterAll(() => stack?.stop());

/** What a kill must not change about a refund. */
const kept = (refund: any) => ({
  id: refund.id,
  status: refund.status,
  amount: refund.amount,
  refund_address: refund.refund_address,
  // The server's port, and so its base URL, changes with each restart; the link's token must not.
  claim_path: new URL(refund.claim_url).pathname,
  payment_instructions: refund.payment_instructions,
  tx_hash: refund.tx_hash,
  block_number: refund.block_number,
});

/** kill -9, then a restart on the same data dir; the refunds read after it are as they were before. */
async function crashAndRestart(...refunds: any[]): Promise<void> {
  const before = await Promise.all(refunds.map((r) => getRefund(stack, r.id)));
  await stack.crash();
  await stack.restart();
  const after = await Promise.all(refunds.map((r) => getRefund(stack, r.id)));
  expect(after.map(kept)).toEqual(before.map(kept));
}

test("kill -9 between every step of a refund paid on chain: nothing lost, nothing doubled", async () => {
  const payment = await paidPayment(stack, "25.00");
  const refundEvents = async () => (await stack.events(payment.id)).filter((t) => t.startsWith("refund."));
  const refundRows = async () =>
    (
      await stack.sql<{ amount_refunded: number; refund_reserved: number }>(
        "SELECT amount_refunded, refund_reserved FROM payments WHERE id = ?",
        payment.id,
      )
    )[0];

  // Created, its address to come from the payer's claim link: the link survives the kill.
  const unclaimed = await createRefund(stack, payment.id, { amount: "2.00", refund_address: null });
  expect(unclaimed.status).toBe("awaiting_address");
  await crashAndRestart(unclaimed);

  // Created with the merchant's address: payable at once.
  const refund = await createRefund(stack, payment.id, { amount: "10.00" });
  expect(refund.status).toBe("awaiting_payment");
  await crashAndRestart(unclaimed, refund);
  expect(await refundEvents()).toEqual(["refund.created", "refund.created", "refund.payable"]);
  expect(await refundRows()).toEqual({ amount_refunded: 0, refund_reserved: Number(usdc("12.00")) });

  // The transfer mined, perhaps not yet seen: killed, it is found after the restart.
  const merchant = await merchantWallet(stack.chain, usdc("50.00"));
  const sent = await payRefund(stack.chain, merchant, refund);
  await stack.crash();
  await stack.restart();
  const seen = await waitForSeen(stack, refund.id);
  expect(seen).toMatchObject({
    status: "awaiting_payment",
    tx_hash: sent.hash,
    block_number: Number(sent.blockNumber),
  });

  // Seen, not yet at its depth: killed, the chain moves on while it is down, and it counts after.
  await crashAndRestart(unclaimed, refund);
  await stack.crash();
  await stack.mine(CONFIRMATIONS);
  await stack.restart();
  const succeeded = await waitForRefund(stack, refund.id, "succeeded");
  expect(succeeded).toMatchObject({ tx_hash: sent.hash, block_number: Number(sent.blockNumber) });

  // Counted: killed, then the watcher goes over the same blocks again and more.
  await crashAndRestart(unclaimed, refund);
  await stack.mine(CONFIRMATIONS + 2);
  await stack.waitScanned(await stack.chain.head(), { mine: false });
  expect(await getRefund(stack, refund.id)).toMatchObject({ status: "succeeded", tx_hash: sent.hash });
  expect(await getRefund(stack, unclaimed.id)).toMatchObject({ status: "awaiting_address", tx_hash: null });
  expect(await refundEvents()).toEqual(["refund.created", "refund.created", "refund.payable", "refund.succeeded"]);
  expect(await refundRows()).toEqual({
    amount_refunded: Number(usdc("10.00")),
    refund_reserved: Number(usdc("12.00")),
  });
  expect(await stack.getPayment(payment.id)).toMatchObject({
    status: "confirmed",
    amount_received: "25.00",
    amount_refunded: "10.00",
  });
  expect(await stack.usdcBalance(refund.refund_address)).toBe(usdc("10.00"));
});
