/**
 * One scenario per x402 route (see merchant-scenarios.ts): the per-payment endpoint paid for real
 * by an authorization signed as the official exact EVM client signs it, and the facilitator's
 * three routes with the stack's key.
 */
import { expect } from "bun:test";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { OperationKey } from "../support/openapi-document.ts";
import { TEST_PAYOUT, TEST_USDC } from "../support/server.ts";
import { randomAddress, usdc } from "../support/test-chain.ts";
import { facilitatorRequest, signAuthorization } from "../support/x402.ts";
import { callUntil, commonRefusals, INTERNAL, type Scenario, type World } from "./world.ts";

const NOT_MINED_IN_TIME = "the one payment this scenario pays is the GET's; the POST's answers are the same code";

/** PAYMENT-SIGNATURE for `payment`'s amount due, signed by a fresh wallet the chain's payer funds. */
async function paymentSignature(w: World, payment: { deposit_address: string; amount: string }) {
  const chain = w.stack.chain;
  const signer = privateKeyToAccount(generatePrivateKey());
  const value = usdc(payment.amount);
  await chain.pay(signer.address, value);
  const chainId = w.stack.config.chain.chainId;
  const signed = await signAuthorization({
    signer,
    chainId,
    usdc: chain.usdc,
    to: payment.deposit_address as never,
    value,
  });
  const body = facilitatorRequest({
    chainId,
    usdc: chain.usdc,
    payTo: payment.deposit_address as never,
    amount: value,
    signed,
  });
  return Buffer.from(JSON.stringify(body.paymentPayload)).toString("base64");
}

const payScenario = (op: OperationKey, paying: boolean): Scenario => ({
  async run(w) {
    const payment = await w.newPayment();
    const params = { id: payment.id };
    const required = await w.contract.call(op, { params });
    expect(required.status).toBe(402);
    expect(required.headers.get("payment-required")).toBeTruthy();
    const junk = { "PAYMENT-SIGNATURE": "bm90IGEgcGF5bG9hZA==" };
    expect((await w.contract.call(op, { params, headers: junk })).status).toBe(400);
    if (paying) {
      const headers = { "PAYMENT-SIGNATURE": await paymentSignature(w, payment) };
      const paid = await w.contract.call(op, { params, headers });
      expect(paid.status).toBe(200);
      expect(paid.headers.get("payment-response")).toBeTruthy();
      // Mined, confirming, not credited yet: on its way.
      expect((await w.contract.call(op, { params })).status).toBe(202);
    } else {
      // Nothing due: the public view, whatever is sent.
      const paid = await w.paid();
      const headers = { "PAYMENT-SIGNATURE": "bm90IGEgcGF5bG9hZA==" };
      expect((await w.contract.call(op, { params: { id: paid.id }, headers })).status).toBe(200);
    }
    // The chain out of reach (the token's domain cannot be read): 503 with Retry-After.
    const { server, paymentId } = w.chainless;
    expect((await w.contract.call(op, { baseUrl: server.url, params: { id: paymentId } })).status).toBe(503);
    await commonRefusals(w, op, { params });
    const own = { id: (await w.newPayment()).id };
    await callUntil(429, 2_000, () => w.contract.call(op, { params: own }));
  },
  unreachable: paying ? { 500: INTERNAL } : { 202: NOT_MINED_IN_TIME, 500: INTERNAL },
});

/** A well-formed request for a payTo the stack's account does not have: answered, isValid / success false. */
function strangerRequest(w: World) {
  const chainId = w.stack.config.chain.chainId;
  const signer = privateKeyToAccount(generatePrivateKey());
  return signAuthorization({ signer, chainId, usdc: w.stack.chain.usdc, to: randomAddress(), value: 1_000_000n }).then(
    (signed) =>
      facilitatorRequest({
        chainId,
        usdc: w.stack.chain.usdc,
        payTo: signed.authorization.to,
        amount: 1_000_000n,
        signed,
      }),
  );
}

const facilitatorScenario = (op: OperationKey, field: "isValid" | "success"): Scenario => ({
  async run(w) {
    const body = await strangerRequest(w);
    const answer = await w.contract.call(op, { key: w.key, body });
    expect(answer.status).toBe(200);
    expect(answer.json[field]).toBe(false);
    expect((await w.contract.call(op, { key: w.key, body: { x402Version: 2 } })).status).toBe(400);
    // The chainless server's own payout address, so the request reaches the chain, which is out of reach.
    const { server, account } = w.chainless;
    const signer = privateKeyToAccount(generatePrivateKey());
    const there = { chainId: 31337, usdc: TEST_USDC as Address, payTo: TEST_PAYOUT as Address, amount: 1_000_000n };
    const signed = await signAuthorization({ signer, ...there, to: there.payTo, value: there.amount });
    const unreachable = facilitatorRequest({ ...there, signed });
    const far = await w.contract.call(op, { baseUrl: server.url, key: account.apiKey, body: unreachable });
    expect(far.status).toBe(503);
    await commonRefusals(w, op, { key: w.key, body });
  },
  unreachable: { 500: INTERNAL },
});

export const X402_SCENARIOS: Record<OperationKey, Scenario> = {
  "GET /api/public/payments/{id}/x402": payScenario("GET /api/public/payments/{id}/x402", true),
  "POST /api/public/payments/{id}/x402": payScenario("POST /api/public/payments/{id}/x402", false),
  "POST /api/v1/x402/verify": facilitatorScenario("POST /api/v1/x402/verify", "isValid"),
  "POST /api/v1/x402/settle": facilitatorScenario("POST /api/v1/x402/settle", "success"),
  "GET /api/v1/x402/supported": {
    async run(w) {
      const op = "GET /api/v1/x402/supported";
      const answer = await w.contract.call(op, { key: w.key });
      expect(answer.status).toBe(200);
      expect(answer.json.kinds[0].scheme).toBe("exact");
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },
};
