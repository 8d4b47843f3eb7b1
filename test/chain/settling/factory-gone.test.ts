/**
 * A settlement mined to a factory without code (a reorg took the factory's deployment) succeeds
 * without its Settled event. The round that finds it sends no other settlement before the
 * factory is deployed again: each would pay gas for a call that moves nothing.
 *
 * A settlement that confirms says nothing of the kind: the rounds after it leave the factories be.
 *
 * The tap holds the settler's first look at the mined settlement's receipt until a second
 * payment is credited, so that payment is due in the very round that finds the factory gone.
 */
import { expect, test } from "bun:test";
import { factoryOf } from "../../../src/chain/deposit-terms.ts";
import { forwarderV3Address } from "../../../src/chain/deposit-v3.ts";
import { undeploy } from "../../support/chain.ts";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { settlerRanSince } from "../../support/wait.ts";

const stack = useStack({ automine: false, tapRpc: true });

test("the round that finds the factory gone deploys it again before it sends the next settlement", async () => {
  // Fast: each settlement counts once it is in a block, so the first look at it decides.
  const first = await stack.createPayment({ amount: "7.00", speed: "fast" });
  const second = await stack.createPayment({ amount: "5.00", speed: "fast" });
  await stack.pay(first.deposit_address, usdc("7.00"), { wait: false });
  await stack.mine(1);
  await stack.waitForStatus(first.id, "settling");
  const sent = await stack.settlementSent(first.id); // in the mempool
  const [row] = await stack.sql<{ factory_version: 1 | 2 | 3 }>(
    "SELECT factory_version FROM payments WHERE id = ?",
    first.id,
  );
  const factory = factoryOf(row!);
  await undeploy(stack.chain.anvil, [factory, forwarderV3Address]);

  const held = stack.tap!.holdReceipt(sent, async () => {
    await stack.pay(second.deposit_address, usdc("5.00"), { wait: false });
    await stack.mine(1);
    await stack.waitFor(
      async () => (await stack.getPayment(second.id)).amount_received === "5.00",
      15_000,
      "the second payment to be credited",
    );
  });
  await stack.mine(1); // the first settlement, into the address without code
  await held;

  await stack.waitForStatus(first.id, "failed", { mine: true });
  const confirmed = await stack.waitForStatus(second.id, "confirmed", { mine: true });
  expect(confirmed.amount_received).toBe("5.00");
  expect(await stack.events(second.id)).toEqual(["payment.settling", "payment.confirmed"]);
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ?", second.id)).toEqual([
    { state: "mined" },
  ]);
  expect(await stack.usdcBalance(second.deposit_address)).toBe(0n);
  expect(await stack.chain.publicClient.getCode({ address: factory })).toMatch(/^0x[0-9a-f]{100,}$/);

  // The first payment's own retry, once due, settles through the factory deployed again.
  stack.clock.advance(61_000);
  await stack.waitForStatus(first.id, "confirmed", { mine: true });
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ? ORDER BY id", first.id)).toEqual([
    { state: "reverted" },
    { state: "mined" },
  ]);
  expect(await stack.usdcBalance(first.deposit_address)).toBe(0n);
});

test("a settlement that confirms leaves the factories be: no round after it looks for their code", async () => {
  const factories = [factoryOf({ factory_version: 1 }), factoryOf({ factory_version: 3 })].map((a) => a.toLowerCase());
  const looks = () =>
    stack.tap!.asked("eth_getCode").filter(([address]) => factories.includes(String(address).toLowerCase())).length;
  await settlerRanSince(stack); // the factories are in place: looked for at start, or deployed again
  const before = looks();

  const payment = await stack.createPayment({ amount: "3.00", speed: "fast" });
  await stack.pay(payment.deposit_address, usdc("3.00"), { wait: false });
  await stack.mine(1);
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  await settlerRanSince(stack);
  expect(looks()).toBe(before);
});
