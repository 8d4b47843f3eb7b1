/**
 * The relayer pays gas for every authorization it accepts, so how many are accepted is limited:
 * per payment and per client an hour (429 with Retry-After, in words). The relayer here has no
 * ETH, so nothing it signs is mined: every accepted authorization stays open and counts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey } from "viem/accounts";
import {
  AUTHORIZATIONS_PER_CLIENT_PER_HOUR,
  AUTHORIZATIONS_PER_PAYMENT_PER_HOUR,
} from "../../../src/chain/authorizations/limits.ts";
import { gaslessApi, gaslessPayer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;
let payer: Awaited<ReturnType<typeof gaslessPayer>>;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({
    chain,
    relayerKey: generatePrivateKey(),
    env: { STABLEGATE_SWEEP_FLOOR: "1.00", STABLEGATE_TRUSTED_PROXIES: "127.0.0.1/32" },
  });
  payer = await gaslessPayer(chain, usdc("1000.00"));
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

async function authorize(paymentId: string, client: string) {
  const api = gaslessApi(stack.url, client);
  return api.post(paymentId, await signOffer(await api.offer(paymentId), payer.key));
}

describe("limits on accepted authorizations", () => {
  test(`at most ${AUTHORIZATIONS_PER_PAYMENT_PER_HOUR} per payment an hour, whoever sends them`, async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    for (let i = 0; i < AUTHORIZATIONS_PER_PAYMENT_PER_HOUR; i++)
      expect((await authorize(payment.id, `203.0.113.${i + 1}`)).status).toBe(202);
    const refused = await authorize(payment.id, "203.0.113.99");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3_500);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(refused.json.error).toMatch(/This payment has had 3 signed payments in the last hour, the most allowed/);
    const rows = await stack.sql("SELECT id FROM authorizations WHERE payment_id = ?", payment.id);
    expect(rows).toHaveLength(AUTHORIZATIONS_PER_PAYMENT_PER_HOUR);
  });

  test(`at most ${AUTHORIZATIONS_PER_CLIENT_PER_HOUR} per client an hour, across payments; another client goes on`, async () => {
    const payments = await Promise.all([1, 2, 3, 4].map(() => stack.createPayment({ amount: "5.00" })));
    let sent = 0;
    for (const payment of payments)
      for (let i = 0; i < AUTHORIZATIONS_PER_PAYMENT_PER_HOUR && sent < AUTHORIZATIONS_PER_CLIENT_PER_HOUR; i++, sent++)
        expect((await authorize(payment.id, "192.0.2.7")).status).toBe(202);
    const last = payments[3]!;
    const refused = await authorize(last.id, "192.0.2.7");
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatch(/You have sent 10 signed payments in the last hour, the most allowed/);
    expect((await authorize(last.id, "192.0.2.8")).status).toBe(202);
  });
});
