/**
 * What the settlement loop does for itself and shows in /readyz: on a fresh chain it deploys the
 * deposit factories before anything can settle, and it reports the relayer's gas balance, read
 * again once a minute has passed on the injected clock.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Address, parseEther } from "viem";
import { factoryAddress } from "../../src/chain/contracts.ts";
import { factoryV3Address } from "../../src/chain/deposit-v3.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { settlerRanSince, waitFor } from "../support/wait.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain({ factory: false });
  stack = await startStack({ chain, relayerKey: await chain.fundedKey() });
});

afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

const settlement = async () => (await stack.readyz()).chain.settlement;

test("on a chain without the factory, the settler deploys it, /readyz says so, and payments settle through it", async () => {
  await waitFor(async () => (await settlement()).factory_ready === true, 15_000, "/readyz to report the factory ready");
  // Version 3 makes every new payment's address; version 1 is there for payments of older builds.
  for (const address of [factoryV3Address, factoryAddress])
    expect(await chain.publicClient.getCode({ address })).toMatch(/^0x[0-9a-f]{2,}$/);
  expect(await settlement()).toMatchObject({ factory: factoryAddress, factory_v3: factoryV3Address });

  const payment = await stack.createPayment({ amount: "6.00" });
  await stack.pay(payment.deposit_address, usdc("6.00"));
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.usdcBalance(stack.payout)).toBe(usdc("6.00"));
});

test("/readyz reports the relayer's gas balance, read again once a minute has passed", async () => {
  // Run first, the factories' deployment may still be spending the relayer's gas: wait it out.
  await waitFor(async () => (await settlement()).factory_ready === true, 15_000, "/readyz to report the factory ready");
  const relayer = (await settlement()).relayer as Address;
  stack.clock.advance(61_000);
  await settlerRanSince(stack);
  expect((await settlement()).gas_balance_wei).toBe(String(await chain.publicClient.getBalance({ address: relayer })));

  await chain.setBalance(relayer, parseEther("123"));
  stack.clock.advance(61_000);
  await settlerRanSince(stack);
  expect((await settlement()).gas_balance_wei).toBe(String(parseEther("123")));
});
