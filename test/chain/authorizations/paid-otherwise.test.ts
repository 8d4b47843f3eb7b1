/**
 * A payment paid another way while its authorization waits: the relayer has no gas, so its signed
 * transferWithAuthorization is stored and refused by the node, and meanwhile the payment is paid
 * with a plain transfer (docs/gasless.md invites it). Once the relayer is funded, what it sends at
 * that nonce must not take the payer's USDC a second time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eip3009Abi } from "../../../src/chain/authorizations/token.ts";
import { gaslessApi, gaslessPayer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;
const relayerKey = generatePrivateKey();

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain, relayerKey, env: { STABLEGATE_SWEEP_FLOOR: "1.00" } });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

type Row = { status: string; failure_code: string | null; tx_hashes: string | null };

describe("paid another way while the authorization waits", () => {
  test("the stored authorization is not sent once the payment needs nothing more; the payer pays once", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const res = await api.post(payment.id, await signOffer(await api.offer(payment.id), payer.key));
    expect(res.status).toBe(202);
    const id = res.json.authorization.id;
    const row = async () =>
      (await stack.sql<Row>("SELECT status, failure_code, tx_hashes FROM authorizations WHERE id = ?", id))[0]!;
    await stack.waitFor(async () => (await row()).status === "submitted");

    // Paid with a plain transfer from elsewhere; the payment no longer waits for funds.
    await stack.pay(payment.deposit_address, usdc("10.00"));
    await stack.mineUntil(async () => (await stack.getPayment(payment.id)).amount_received === "10.00");

    await chain.setBalance(privateKeyToAccount(relayerKey).address, 10n ** 18n);
    const done = await stack.mineUntil(async () => {
      const now = await row();
      return now.status === "failed" || now.status === "succeeded" ? now : undefined;
    });
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(0);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));
    expect(done).toMatchObject({ status: "failed", failure_code: "canceled" });
    const view = await stack.publicPayment(payment.id);
    expect(view.authorizations[0].error).toBe(
      "This payment was paid another way before this authorization was sent; nothing was taken from the wallet",
    );
    // The relayer's nonce went to a transaction that moved nothing, and its settlement follows.
    const hashes = JSON.parse(done.tx_hashes!) as Hex[];
    expect(hashes.length).toBeGreaterThanOrEqual(2);
    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("10.00"));
  }, 90_000);
});
