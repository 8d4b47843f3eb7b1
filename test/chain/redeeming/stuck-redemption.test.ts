/**
 * A receiveMessage that waits unmined is replaced with higher fees, as stuck settlements are.
 * The settlement anvil stops automining so the redemption sits in the mempool; the in-process
 * server's injected clock then passes the stuck threshold, and the next block's base fee is set
 * above what the first transaction offered, so only the replacement can land.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Hex, keccak256, serializeTransaction, toHex } from "viem";
import { attestedBurn, type CrossChainStack, startCrossChainStack } from "../../support/crosschain.ts";
import type { Stack } from "../../support/stack.ts";
import { usdc } from "../../support/test-chain.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
let stack: Stack;

beforeAll(async () => {
  x = await startCrossChainStack({ attestationDelayMs: 0 });
  stack = x.stack;
}, 30_000);

/** Pays the payment cross-chain with mining paused; waits for the redemption and its replacement. */
async function stuckThenReplaced(amount: string) {
  const { anvil, publicClient } = x.chain;
  const payment = await stack.createPayment({ amount });
  await anvil.rpc("evm_setAutomine", [false]);
  const { burnTxHash } = await x.payCrossChain(payment.id, "fast");
  const sent = await waitFor(
    async () => (await x.burns(payment.id)).find((r) => r.state === "redeeming" && r.redeem_tx_hash !== null),
    15_000,
    "the redemption to be sent",
  );
  // The hash is recorded before the broadcast (so a crash cannot lose it): wait for the node to have it.
  const first = await waitFor(
    () => publicClient.getTransaction({ hash: sent.redeem_tx_hash as Hex }),
    10_000,
    "the redemption to reach the node",
  );
  expect(first.blockNumber).toBeNull(); // held by the node, not mined

  stack.clock.advance(31_000); // past the 30 s after which a held transaction counts as stuck
  const replaced = await waitFor(
    async () => (await x.burns(payment.id)).find((r) => r.redeem_tx_hash !== sent.redeem_tx_hash),
    15_000,
    "a replacement",
  );
  const second = await waitFor(
    () => publicClient.getTransaction({ hash: replaced.redeem_tx_hash as Hex }),
    10_000,
    "the replacement to reach the node",
  );
  return { payment, burnTxHash, first, second };
}

afterAll(async () => {
  await x?.chain.anvil.rpc("evm_setAutomine", [true]).catch(() => {});
  await x?.stop();
});

test("a redemption stuck on its fee is replaced with higher fees on the same nonce and minted exactly once", async () => {
  const { anvil, publicClient } = x.chain;
  const { payment, burnTxHash, first, second } = await stuckThenReplaced("15.00");
  expect(second.nonce).toBe(first.nonce);
  expect(second.input).toBe(first.input);
  expect(second.maxFeePerGas!).toBeGreaterThanOrEqual((first.maxFeePerGas! * 115n) / 100n);
  expect(second.maxPriorityFeePerGas!).toBeGreaterThanOrEqual((first.maxPriorityFeePerGas! * 115n) / 100n);

  // A base fee the first transaction cannot pay, the replacement can.
  await anvil.rpc("anvil_setNextBlockBaseFeePerGas", [toHex((first.maxFeePerGas! * 11n) / 10n)]);
  await stack.mine(1);
  expect((await publicClient.getTransactionReceipt({ hash: second.hash })).status).toBe("success");
  expect(await publicClient.getTransactionReceipt({ hash: first.hash }).catch(() => null)).toBeNull();
  await anvil.rpc("evm_setAutomine", [true]);

  const row = await x.waitBurn(payment.id, "redeemed", 20_000);
  expect(row.redeem_tx_hash).toBe(second.hash);
  const [message] = await x.attested(burnTxHash);
  const { amount: burned, feeExecuted, nonce } = attestedBurn(message!.message);
  expect(await x.messagesReceived(nonce)).toEqual([{ nonce, transactionHash: second.hash }]);
  expect(await x.mintsTo(payment.deposit_address)).toEqual([burned - feeExecuted]);
  const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 20_000 });
  expect(usdc(confirmed.amount_received)).toBe(burned - feeExecuted);
  // Nothing else was sent that could mint a second time.
  await stack.mine(2);
  expect(await x.messagesReceived(nonce)).toHaveLength(1);
}, 60_000);

test("the replaced transaction lands after all: the burn counts as redeemed, nothing is sent again", async () => {
  const { anvil, publicClient } = x.chain;
  const { payment, burnTxHash, first, second } = await stuckThenReplaced("4.00");
  // The node loses the replacement and gets the first one back (another node still had it).
  await anvil.rpc("anvil_dropTransaction", [second.hash]);
  const raw = serializeTransaction(
    {
      chainId: first.chainId!,
      type: "eip1559",
      nonce: first.nonce,
      to: first.to!,
      data: first.input,
      gas: first.gas,
      value: first.value,
      maxFeePerGas: first.maxFeePerGas!,
      maxPriorityFeePerGas: first.maxPriorityFeePerGas!,
      accessList: first.accessList,
    },
    { r: first.r, s: first.s, yParity: first.yParity! },
  );
  expect(keccak256(raw)).toBe(first.hash);
  await publicClient.sendRawTransaction({ serializedTransaction: raw });
  await stack.mine(1);
  expect((await publicClient.getTransactionReceipt({ hash: first.hash })).status).toBe("success");
  await anvil.rpc("evm_setAutomine", [true]);

  const row = await x.waitBurn(payment.id, "redeemed", 20_000);
  // The row's hash was the replacement's, which never landed: it shows none rather than that one.
  expect(row.redeem_tx_hash).toBeNull();
  const [message] = await x.attested(burnTxHash);
  const { amount: burned, feeExecuted, nonce } = attestedBurn(message!.message);
  expect(await x.messagesReceived(nonce)).toEqual([{ nonce, transactionHash: first.hash }]);
  await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 20_000 });
  expect(await x.mintsTo(payment.deposit_address)).toEqual([burned - feeExecuted]);
}, 60_000);
