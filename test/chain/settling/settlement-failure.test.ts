/**
 * A settlement that reverts (USDC blocks the payout address) fails the payment, leaves the funds
 * at the deposit address, and is retried automatically once the cause is gone: the injected
 * clock jumps past the first retry (30 s) instead of the test sleeping.
 */
import { expect, test } from "bun:test";
import { factoryOf } from "../../../src/chain/deposit-terms.ts";
import { forwarderV3Address } from "../../../src/chain/deposit-v3.ts";
import { testTokenAbi, undeploy } from "../../support/chain.ts";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { settlerRanSince } from "../../support/wait.ts";

const stack = useStack();

async function setBlocked(address: string, blocked: boolean): Promise<void> {
  const { publicClient, deployer, usdc: token } = stack.chain;
  const hash = await deployer.writeContract({
    address: token,
    abi: testTokenAbi,
    functionName: "setBlocked",
    args: [address as `0x${string}`, blocked],
  });
  await publicClient.waitForTransactionReceipt({ hash });
}

test("a blocked payout fails the settlement; once unblocked, the retry within 60 s confirms it", async () => {
  const before = await stack.usdcBalance(stack.payout);
  await setBlocked(stack.payout, true);
  const payment = await stack.createPayment({ amount: "25.00" });
  await stack.pay(payment.deposit_address, usdc("25.00"));

  const failed = await stack.waitForStatus(payment.id, "failed", { mine: true });
  expect(failed.amount_received).toBe("25.00");
  expect(await stack.events(payment.id)).toEqual(["payment.failed"]);
  // Non-custodial: the funds wait at the deposit address, nothing reached the payout.
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(usdc("25.00"));
  expect(await stack.usdcBalance(stack.payout)).toBe(before);
  const [row] = await stack.sql<{ settle_attempts: number; settle_retry_at: number }>(
    "SELECT settle_attempts, settle_retry_at FROM payments WHERE id = ?",
    payment.id,
  );
  expect(row!.settle_attempts).toBe(1);
  expect(row!.settle_retry_at - stack.clock.now()).toBeLessThanOrEqual(60_000);

  // Nothing is retried before the retry is due, however many blocks pass.
  await stack.mine(5);
  await settlerRanSince(stack);
  expect((await stack.getPayment(payment.id)).status).toBe("failed");
  expect(await stack.events(payment.id)).toEqual(["payment.failed"]);
  // Not even tried: a retry against the still-blocked payout would fail again, unseen in the status.
  expect(await stack.sql("SELECT settle_attempts FROM payments WHERE id = ?", payment.id)).toEqual([
    { settle_attempts: 1 },
  ]);

  await setBlocked(stack.payout, false);
  stack.clock.advance(61_000);
  const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(confirmed.amount_received).toBe("25.00");
  expect(await stack.events(payment.id)).toEqual(["payment.failed", "payment.settling", "payment.confirmed"]);
  expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.00"));
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
  const [after] = await stack.sql<{ settle_attempts: number; settle_retry_at: number | null; amount_settled: number }>(
    "SELECT settle_attempts, settle_retry_at, amount_settled FROM payments WHERE id = ?",
    payment.id,
  );
  expect(after).toEqual({ settle_attempts: 0, settle_retry_at: null, amount_settled: Number(usdc("25.00")) });
});

test("a settlement that reverts on chain (not in simulation) fails the payment, then the retry confirms it", async () => {
  const { anvil, publicClient, deployer, usdc: token } = stack.chain;
  const before = await stack.usdcBalance(stack.payout);
  const payment = await stack.createPayment({ amount: "25.00" });
  await stack.pay(payment.deposit_address, usdc("25.00"));

  // Hold blocks back so the settlement waits in the mempool, simulated fine, not yet mined.
  await anvil.rpc("evm_setAutomine", [false]);
  try {
    await stack.mine(2);
    await stack.waitForStatus(payment.id, "settling");
    const sent = await stack.settlementSent(payment.id); // in the mempool
    // The payout gets blocked in the same block, ahead of the settlement (a higher tip goes first).
    const blockHash = await deployer.writeContract({
      address: token,
      abi: testTokenAbi,
      functionName: "setBlocked",
      args: [stack.payout, true],
      maxPriorityFeePerGas: 100_000_000_000n,
      maxFeePerGas: 200_000_000_000n,
    });
    await stack.mine(1);
    expect((await publicClient.getTransactionReceipt({ hash: blockHash })).status).toBe("success");
    expect((await publicClient.getTransactionReceipt({ hash: sent })).status).toBe("reverted");
  } finally {
    await anvil.rpc("evm_setAutomine", [true]);
  }

  const failed = await stack.waitForStatus(payment.id, "failed", { mine: true });
  expect(failed.amount_received).toBe("25.00");
  expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.failed"]);
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "reverted" },
  ]);
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(usdc("25.00"));

  await setBlocked(stack.payout, false);
  stack.clock.advance(61_000);
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.events(payment.id)).toEqual([
    "payment.settling",
    "payment.failed",
    "payment.settling",
    "payment.confirmed",
  ]);
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ? ORDER BY id", payment.id)).toEqual([
    { state: "reverted" },
    { state: "mined" },
  ]);
  expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.00"));
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
});

test("a settlement mined after a reorg took the factory's deployment fails, and the retry deploys the factory again", async () => {
  const { anvil, publicClient } = stack.chain;
  const payment = await stack.createPayment({ amount: "7.00" });
  await stack.pay(payment.deposit_address, usdc("7.00"));
  const [row] = await stack.sql<{ factory_version: 1 | 2 | 3 }>(
    "SELECT factory_version FROM payments WHERE id = ?",
    payment.id,
  );
  expect(row!.factory_version).toBe(3);
  const factory = factoryOf(row!);
  const implementation = forwarderV3Address;

  await anvil.rpc("evm_setAutomine", [false]);
  try {
    await stack.mine(2);
    await stack.waitForStatus(payment.id, "settling");
    const sent = await stack.settlementSent(payment.id);
    await undeploy(anvil, [factory, implementation]);
    await stack.mine(1);
    const receipt = await publicClient.getTransactionReceipt({ hash: sent });
    expect(receipt.status).toBe("success"); // a call to an address without code
    expect(receipt.logs).toEqual([]);
  } finally {
    await anvil.rpc("evm_setAutomine", [true]);
  }

  await stack.waitForStatus(payment.id, "failed", { mine: true });
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(usdc("7.00"));

  stack.clock.advance(61_000);
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await publicClient.getCode({ address: factory })).toMatch(/^0x[0-9a-f]{100,}$/);
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ? ORDER BY id", payment.id)).toEqual([
    { state: "reverted" },
    { state: "mined" },
  ]);
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
});
