/**
 * A node whose receipts lag its nonce count, as behind a load balancer: the relayer's nonce has
 * moved past a settlement while its receipt still reads as not found. The settler looks again
 * before deciding the nonce went to a transaction it never sent.
 */
import { expect, test } from "bun:test";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { waitFor } from "../../support/wait.ts";

const stack = useStack({ automine: false, tapRpc: true, logLevel: "debug" });

test("a receipt missing on the first look but there on the second: the settlement confirms, not taken for dropped", async () => {
  const payment = await stack.createPayment({ amount: "8.00" });
  await stack.pay(payment.deposit_address, usdc("8.00"), { wait: false });
  await stack.mine(3); // the transfer and its 2 confirmations; no block comes by itself
  await stack.waitForStatus(payment.id, "settling");
  const sent = await stack.settlementSent(payment.id);
  const settlement = await stack.chain.publicClient.getTransaction({ hash: sent });
  expect(settlement.blockNumber).toBeNull();

  stack.tap!.lagReceipt(sent, 1);
  // The settlement's block (the relayer's nonce moves on) is mined while the settler's rebroadcast
  // of it waits for its answer, so the settler's next look at it begins after the block: a look
  // begun before could meet the block between its receipt and its nonce, and spend its second
  // look on the one hidden receipt.
  await stack.tap!.onNextSendTo(settlement.to!, () => stack.mine(1));
  await waitFor(() => stack.tap!.receiptsHidden === 1, 10_000, "the settler to miss the receipt once");

  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.sql("SELECT state, tx_hash FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "mined", tx_hash: sent },
  ]);
  expect(stack.logs().filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
  expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
});
