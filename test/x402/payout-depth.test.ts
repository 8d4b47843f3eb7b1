/**
 * A facilitator settlement straight to the payout address is held to the payment's speed
 * policy, as every other payment is (docs/speed.md): `/settle` answers success once the
 * transfer is mined (what x402 and the official middleware expect), the payment it makes is
 * `settling` then, and the facilitator's follower (src/x402/index.ts) confirms it only once the
 * chain has STABLEGATE_CONFIRMATIONS blocks on top of the transfer's. A reorg that takes the
 * transfer away leaves the payment settling, said in the log, until the transfer is found again
 * at depth. Real anvil (blocks mined with anvil_mine, reorgs with anvil_reorg), real server.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type Stack, startStack } from "../support/stack.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { facilitatorRequest, signAuthorization } from "../support/x402.ts";

const CONFIRMATIONS = 3;
let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  // Warnings kept: a test reads the follower's word on a transfer a reorg took away.
  stack = await startStack({ chain, confirmations: CONFIRMATIONS, feeRecipient: randomAddress(), logLevel: "warn" });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

/** Settles `amount` to the account's payout address from a fresh payer; the answer and the settlement's row. */
async function settleToPayout(amount: bigint) {
  const signer = privateKeyToAccount(generatePrivateKey());
  await chain.pay(signer.address, usdc("5.00"));
  const chainId = stack.config.chain.chainId;
  const signed = await signAuthorization({ signer, chainId, usdc: chain.usdc, to: stack.payout, value: amount });
  const res = await fetch(`${stack.url}/api/v1/x402/settle`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(facilitatorRequest({ chainId, usdc: chain.usdc, payTo: stack.payout, amount, signed })),
  });
  const answer = (await res.json()) as { success: boolean; transaction: Hex };
  expect(answer).toMatchObject({ success: true });
  const [row] = await stack.sql<{ payment_id: string; state: string; tx_hash: string }>(
    "SELECT payment_id, state, tx_hash FROM x402_settlements WHERE payer = ?",
    signer.address,
  );
  return { answer, row: row! };
}

/** Waits for two more rounds of the follower: one begun after now has then run whole. */
async function followerRan(): Promise<void> {
  const rounds = stack.activity().x402Rounds;
  await stack.waitFor(() => stack.activity().x402Rounds >= rounds + 2, 15_000, "two follower rounds");
}

const settled = async (paymentId: string) =>
  BigInt(
    (await stack.sql<{ amount_settled: number }>("SELECT amount_settled FROM payments WHERE id = ?", paymentId))[0]!
      .amount_settled,
  );

test("settling once /settle answers success; confirmed once the chain has the confirmations on top", async () => {
  const { answer, row } = await settleToPayout(usdc("1.50"));
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: answer.transaction });
  expect(row).toMatchObject({ state: "settling", tx_hash: answer.transaction });
  const made = await stack.getPayment(row.payment_id);
  expect(made).toMatchObject({ status: "settling", amount: "1.50", amount_received: "1.50" });
  expect(await stack.events(made.id)).toEqual(["payment.settling"]);

  // One block short of the confirmations: the follower looks, and it stays settling.
  await chain.mine(Number(receipt.blockNumber + BigInt(CONFIRMATIONS) - 1n - (await chain.head())));
  expect(await chain.head()).toBe(receipt.blockNumber + BigInt(CONFIRMATIONS) - 1n);
  await followerRan();
  expect((await stack.getPayment(made.id)).status).toBe("settling");
  expect(await settled(made.id)).toBe(0n);

  // The last one: confirmed, settled once with no fee, its events in order.
  await chain.mine(1);
  const confirmed = await stack.waitForStatus(made.id, "confirmed");
  expect(confirmed).toMatchObject({ amount_received: "1.50" });
  expect(await stack.events(made.id)).toEqual(["payment.settling", "payment.confirmed"]);
  await followerRan();
  expect(await settled(made.id)).toBe(usdc("1.50"));
  const [after] = await stack.sql<{ state: string }>(
    "SELECT state FROM x402_settlements WHERE payment_id = ?",
    made.id,
  );
  expect(after!.state).toBe("recorded");
  expect(await stack.events(made.id)).toEqual(["payment.settling", "payment.confirmed"]);
}, 60_000);

test("a reorg takes the transfer away: settling until the relayer's resend of it is at depth, said once at most", async () => {
  const { answer, row } = await settleToPayout(usdc("0.75"));
  const first = await chain.publicClient.getTransactionReceipt({ hash: answer.transaction });
  const warnings = () =>
    stack.logs().filter((l) => l.msg === "x402 settlement not on the chain as paid; its payment stays settling");
  const before = warnings().length;

  // The transfer's block is replaced by one without it. The relayer watches its transaction until
  // it is deep (src/chain/authorizations/submitter.ts) and sends the same one again; whether the
  // follower looks while it is missing depends on timing, so the test waits for the resend.
  await chain.anvil.rpc("anvil_reorg", [1, []]);
  const again = await stack.waitFor(
    async () => {
      await chain.mine(1);
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: answer.transaction }).catch(() => null);
      return receipt && receipt.blockHash !== first.blockHash ? receipt : null;
    },
    30_000,
    "the transfer mined again in a new block",
  );
  await followerRan();
  // Not deep enough yet at its new block, however deep the old one would have been by now.
  expect(await chain.head()).toBeLessThan(again.blockNumber + BigInt(CONFIRMATIONS));
  expect((await stack.getPayment(row.payment_id)).status).toBe("settling");
  expect(await settled(row.payment_id)).toBe(0n);

  await chain.mine(Math.max(0, Number(again.blockNumber + BigInt(CONFIRMATIONS) - (await chain.head()))));
  await stack.waitForStatus(row.payment_id, "confirmed");
  expect(await stack.events(row.payment_id)).toEqual(["payment.settling", "payment.confirmed"]);
  expect(await settled(row.payment_id)).toBe(usdc("0.75"));
  // Said once at most, however many rounds found it missing.
  expect(warnings().length).toBeLessThanOrEqual(before + 1);
}, 60_000);
