/**
 * The relayer pays gas for every authorization it accepts, so how many are accepted is limited:
 * one on its way per payment at a time (each pays the whole amount due: a second would pay twice),
 * and per payment and per client an hour (429 with Retry-After, in words).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import {
  AUTHORIZATIONS_PER_CLIENT_PER_HOUR,
  AUTHORIZATIONS_PER_PAYMENT_PER_HOUR,
} from "../../../src/chain/authorizations/limits.ts";
import { gaslessApi, gaslessPayer, relayerTransaction, signOffer, spendFirst } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
/** Its relayer has no ETH: nothing it signs is mined, so every accepted authorization stays on its way. */
let stuck: Stack;
/** Its relayer pays; the chain's automine is switched off where a test decides what is mined. */
let paying: Stack;
let payer: Awaited<ReturnType<typeof gaslessPayer>>;
const env = { STABLEGATE_SWEEP_FLOOR: "1.00", STABLEGATE_TRUSTED_PROXIES: "127.0.0.1/32" };

beforeAll(async () => {
  chain = await startChain();
  stuck = await startStack({ chain, relayerKey: generatePrivateKey(), env });
  paying = await startStack({ chain, relayerKey: await chain.fundedKey(), env });
  payer = await gaslessPayer(chain, usdc("1000.00"));
});
afterAll(async () => {
  await stuck?.stop();
  await paying?.stop();
  await chain?.stop();
});

async function authorize(stack: Stack, paymentId: string, client: string, key: Hex = payer.key) {
  const api = gaslessApi(stack.url, client);
  const offer = await api.offer(paymentId);
  if (!offer.typed_data) throw new Error(`not offered: ${offer.reason}`);
  return api.post(paymentId, await signOffer(offer, key));
}

describe("limits on accepted authorizations", () => {
  test("one on its way per payment: a second is refused (409) and not offered", async () => {
    const payment = await stuck.createPayment({ amount: "5.00" });
    expect((await authorize(stuck, payment.id, "203.0.113.1")).status).toBe(202);
    const api = gaslessApi(stuck.url, "203.0.113.2");
    const offer = await api.offer(payment.id);
    expect(offer).toMatchObject({ available: false, typed_data: null });
    expect(offer.reason).toMatch(/already on its way/);
    // A page that signed before the first was posted: a new nonce, the same terms.
    const first = await gaslessApi(stuck.url).offer((await stuck.createPayment({ amount: "5.00" })).id);
    const second = await signOffer(
      {
        ...first,
        typed_data: { ...first.typed_data!, message: { ...first.typed_data!.message, to: payment.deposit_address } },
      },
      payer.key,
    );
    const refused = await api.post(payment.id, second);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatch(/^A payment by signature for this payment is already on its way/);
    expect(await stuck.sql("SELECT id FROM authorizations WHERE payment_id = ?", payment.id)).toHaveLength(1);
  });

  test(`at most ${AUTHORIZATIONS_PER_CLIENT_PER_HOUR} per client an hour, across payments; another client goes on`, async () => {
    const payments = await Promise.all(
      Array.from({ length: AUTHORIZATIONS_PER_CLIENT_PER_HOUR + 1 }, () => stuck.createPayment({ amount: "5.00" })),
    );
    for (const payment of payments.slice(0, AUTHORIZATIONS_PER_CLIENT_PER_HOUR))
      expect((await authorize(stuck, payment.id, "192.0.2.7")).status).toBe(202);
    const last = payments.at(-1)!;
    const refused = await authorize(stuck, last.id, "192.0.2.7");
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatch(/You have sent 10 signed payments in the last hour, the most allowed/);
    expect((await authorize(stuck, last.id, "192.0.2.8")).status).toBe(202);
  });

  test(`at most ${AUTHORIZATIONS_PER_PAYMENT_PER_HOUR} per payment an hour, failed ones included`, async () => {
    const payment = await paying.createPayment({ amount: "5.00" });
    // Each attempt fails: the payer's funds leave before the relayer's transaction is mined.
    for (let i = 0; i < AUTHORIZATIONS_PER_PAYMENT_PER_HOUR; i++) {
      const spender = await gaslessPayer(chain, usdc("5.00"));
      await chain.setBalance(spender.address, 10n ** 18n);
      await chain.anvil.rpc("evm_setAutomine", [false]);
      let id: string;
      try {
        const res = await authorize(paying, payment.id, `198.51.100.${i + 1}`, spender.key);
        expect(res.status).toBe(202);
        id = res.json.authorization.id;
        await relayerTransaction(paying, chain, id);
        await spendFirst(chain, spender.key, usdc("5.00"));
        await chain.mine(1);
      } finally {
        await chain.anvil.rpc("evm_setAutomine", [true]);
      }
      await paying.waitFor(async () => {
        const [row] = await paying.sql<{ status: string }>("SELECT status FROM authorizations WHERE id = ?", id);
        return row?.status === "failed";
      });
    }
    const refused = await authorize(paying, payment.id, "198.51.100.99");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3_500);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(refused.json.error).toMatch(/This payment has had 3 signed payments in the last hour, the most allowed/);
    expect(await paying.sql("SELECT id FROM authorizations WHERE payment_id = ?", payment.id)).toHaveLength(
      AUTHORIZATIONS_PER_PAYMENT_PER_HOUR,
    );
  }, 60_000);
});
