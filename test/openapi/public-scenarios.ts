/**
 * One scenario per public and operations route (see merchant-scenarios.ts). The public limiter
 * counts per payment, so each 429 is brought about on a payment of its own.
 */
import { expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { gaslessPayer, type Offer, signOffer } from "../support/gasless.ts";
import type { OperationKey } from "../support/openapi-document.ts";
import { randomAddress } from "../support/test-chain.ts";
import { callUntil, commonRefusals, INTERNAL, type Scenario, type World } from "./world.ts";

const randomHash = () => `0x${randomBytes(32).toString("hex")}`;
const NO_SECOND_CHAIN =
  "needs cross-chain funding: a second anvil and the attestation service, and this file runs one anvil";

/** A payment of its own, so a scenario can use up its rate limit. */
const ownPayment = async (w: World): Promise<string> => (await w.newPayment()).id;

export const PUBLIC_SCENARIOS: Record<OperationKey, Scenario> = {
  "GET /api/public/payments/{id}": {
    async run(w) {
      const op = "GET /api/public/payments/{id}";
      const params = { id: await ownPayment(w) };
      expect((await w.contract.call(op, { params })).status).toBe(200);
      await commonRefusals(w, op, { params });
      const limited = await callUntil(429, 2_000, () => w.contract.call(op, { params }));
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/public/payments/{id}/qr": {
    async run(w) {
      const op = "GET /api/public/payments/{id}/qr";
      const params = { id: await ownPayment(w) };
      expect((await w.contract.call(op, { params })).status).toBe(200);
      expect((await w.contract.call(op, { params, query: { format: "eip681" } })).status).toBe(200);
      const chain = w.stack.config.chain.name;
      expect((await w.contract.call(op, { params, query: { format: "eip681", chain } })).status).toBe(200);
      expect((await w.contract.call(op, { params, query: { format: "eip681", chain: "atlantis" } })).status).toBe(400);
      expect((await w.contract.call(op, { params, query: { format: "png" } })).status).toBe(400);
      await commonRefusals(w, op, { params });
      await callUntil(429, 2_000, () => w.contract.call(op, { params }));
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/public/payments/{id}/sync": {
    async run(w) {
      const op = "POST /api/public/payments/{id}/sync";
      const paid = await w.paid();
      const chain = w.stack.config.chain.name;
      const mined = await w.contract.call(op, { params: { id: paid.id }, body: { tx_hash: paid.txHash, chain } });
      expect(mined.status).toBe(200);
      const params = { id: await ownPayment(w) };
      expect((await w.contract.call(op, { params, body: { tx_hash: randomHash() } })).status).toBe(202);
      // Mined, but paying someone else.
      const elsewhere = await w.stack.pay(randomAddress(), 1n);
      expect((await w.contract.call(op, { params, body: { tx_hash: elsewhere } })).status).toBe(422);
      expect((await w.contract.call(op, { params, body: { tx_hash: "0x12" } })).status).toBe(400);
      const { server, paymentId } = w.chainless;
      const down = await w.contract.call(op, {
        baseUrl: server.url,
        params: { id: paymentId },
        body: { tx_hash: randomHash() },
      });
      expect(down.status).toBe(503);
      await commonRefusals(w, op, { params, body: { tx_hash: randomHash() } });
      await callUntil(429, 200, () => w.contract.call(op, { params, body: { tx_hash: randomHash() } }));
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/public/payments/{id}/cross-chain": {
    async run(w) {
      const op = "GET /api/public/payments/{id}/cross-chain";
      const params = { id: await ownPayment(w) };
      expect((await w.contract.call(op, { params })).status).toBe(200);
      expect((await w.contract.call(op, { params, query: { chain: "atlantis" } })).status).toBe(400);
      await commonRefusals(w, op, { params });
      await callUntil(429, 200, () => w.contract.call(op, { params, query: { chain: "atlantis" } }));
    },
    unreachable: { 500: INTERNAL, 503: NO_SECOND_CHAIN },
    unsentParameters: { "query chain": `a quote is accepted only for a configured source chain: ${NO_SECOND_CHAIN}` },
  },

  "POST /api/public/payments/{id}/cross-chain": {
    async run(w) {
      const op = "POST /api/public/payments/{id}/cross-chain";
      const params = { id: await ownPayment(w) };
      const body = { chain: "atlantis", tx_hash: randomHash() };
      expect((await w.contract.call(op, { params, body })).status).toBe(400);
      await commonRefusals(w, op, { params, body });
      await callUntil(429, 200, () => w.contract.call(op, { params, body }));
    },
    unreachable: { 500: INTERNAL, 202: NO_SECOND_CHAIN, 422: NO_SECOND_CHAIN, 503: NO_SECOND_CHAIN },
    unsentParameters: { "path id": `no burn is accepted without a source chain: ${NO_SECOND_CHAIN}` },
  },

  "GET /api/public/payments/{id}/authorization": {
    async run(w) {
      const op = "GET /api/public/payments/{id}/authorization";
      const params = { id: await ownPayment(w) };
      const offer = await w.contract.call(op, { params });
      expect(offer.status).toBe(200);
      expect(offer.json).toMatchObject({ available: true, reason: null });
      const { server, paymentId } = w.chainless;
      expect((await w.contract.call(op, { baseUrl: server.url, params: { id: paymentId } })).status).toBe(503);
      await commonRefusals(w, op, { params });
      await callUntil(429, 2_000, () => w.contract.call(op, { params }));
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/public/payments/{id}/authorization": {
    async run(w) {
      const op = "POST /api/public/payments/{id}/authorization";
      const params = { id: await ownPayment(w) };
      const offer = (await w.contract.call("GET /api/public/payments/{id}/authorization", { params })).json as Offer;
      const payer = await gaslessPayer(w.stack.chain, 10_000_000n);
      const accepted = await w.contract.call(op, { params, body: await signOffer(offer, payer.key) });
      expect(accepted.status).toBe(202);
      const stranger = await gaslessPayer(w.stack.chain, 0n);
      const forged = await signOffer(offer, stranger.key, { from: payer.address });
      expect((await w.contract.call(op, { params, body: forged })).status).toBe(400);
      const { server, paymentId } = w.chainless;
      expect((await w.contract.call(op, { baseUrl: server.url, params: { id: paymentId }, body: forged })).status).toBe(
        503,
      );
      await commonRefusals(w, op, { params, body: forged });
      await callUntil(429, 200, () => w.contract.call(op, { params, body: forged }));
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /healthz": {
    async run(w) {
      expect((await w.contract.call("GET /healthz")).status).toBe(200);
      await commonRefusals(w, "GET /healthz", {});
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /readyz": {
    async run(w) {
      const open = await w.contract.call("GET /readyz");
      expect({ status: open.status, json: open.json }).toEqual({ status: 200, json: { status: "ready" } });
      const details = await w.contract.call("GET /readyz", { key: w.stack.env.STABLEGATE_METRICS_TOKEN });
      expect(details.status).toBe(200);
      expect(details.json).toMatchObject({ status: "ready", store: "ok", leases: [{ name: "chain" }] });
      expect((await w.contract.call("GET /readyz", { key: w.stack.apiKey })).status).toBe(401);
      await commonRefusals(w, "GET /readyz", {});
    },
    unreachable: {
      500: INTERNAL,
      503: "the store unavailable to a running server, which a test cannot bring about from outside",
    },
  },

  "GET /openapi.json": {
    async run(w) {
      expect((await w.contract.call("GET /openapi.json")).status).toBe(200);
      await commonRefusals(w, "GET /openapi.json", {});
    },
    unreachable: { 500: INTERNAL },
  },
};
