/**
 * The relayer signs recoveries and settlements on the settlement chain with one key: a nonce
 * stored for a recovery (signed, maybe never seen by the node) is never handed to a settlement.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { privateKeyToAccount } from "viem/accounts";
import { ANVIL_KEY_2 } from "../../support/anvil.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain });
}, 30_000);

afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

test("a settlement is signed past the highest nonce stored for a recovery on the settlement chain", async () => {
  const payment = await stack.createPayment({ amount: "1.00" });
  const relayer = privateKeyToAccount(ANVIL_KEY_2).address;
  const pending = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: "pending" });
  // A recovery signed at a nonce the node has not seen (sent before a crash, then evicted, say).
  const stored = pending + 3;
  await stack.sql(
    `INSERT INTO recoveries (id, payment_id, chain_id, token, decimals, payout_address, state, nonce,
       next_attempt_at, created_at, updated_at)
     VALUES ('rcv_nonceTest00000000000000', ?, ?, NULL, 18, ?, 'failed', ?, 0, 0, 0)`,
    payment.id,
    chain.anvil.chainId,
    stack.payout,
    stored,
  );

  await stack.pay(payment.deposit_address, usdc("1.00"));
  const settlement = await stack.mineUntil(
    async () =>
      (await stack.sql<{ nonce: number }>("SELECT nonce FROM settlements WHERE payment_id = ?", payment.id))[0],
    15_000,
    "the settlement signed",
  );
  expect(settlement.nonce).toBe(stored + 1);
}, 30_000);
