/**
 * One scenario per merchant operation: a success and each refusal the operation can give, every
 * answer checked against the document by `contract.call`. `unreachable` names the declared
 * statuses no scenario can bring about here, and why (the coverage test holds the two lists to
 * the document).
 */
import { expect } from "bun:test";
import type { OperationKey } from "../support/openapi-document.ts";
import { rawApi, toApiResponse } from "../support/server.ts";
import { randomAddress } from "../support/test-chain.ts";
import {
  callUntil,
  commonRefusals,
  goneEndpoint,
  INTERNAL,
  idempotencyConflicts,
  received,
  type Scenario,
} from "./world.ts";

export const MERCHANT_SCENARIOS: Record<OperationKey, Scenario> = {
  "POST /api/v1/payments": {
    async run(w) {
      const op = "POST /api/v1/payments";
      const body = {
        line_items: [{ description: "Espresso beans 1kg", unit_amount: "12.50", quantity: 2 }],
        description: "Order #1042",
        reference: "1042",
        customer_email: "ana@example.com",
        customer_name: "Ana",
        invoice_number: "INV-1042",
        due_at: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
        success_url: "https://shop.example.com/thanks",
        metadata: { order_id: "1042", note: "grind: fine" },
      };
      const created = await w.contract.call(op, { key: w.key, body });
      expect(created.status).toBe(201);
      const bad = await w.contract.call(op, { key: w.key, body: { amount: "30.00", line_items: body.line_items } });
      expect(bad.status).toBe(400);
      await idempotencyConflicts(w, op, { key: w.key, body: { amount: "4.00" } }, { amount: "5.00" });
      await commonRefusals(w, op, { key: w.key, body: { amount: "1.00" } });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payments": {
    async run(w) {
      const op = "GET /api/v1/payments";
      const query = { limit: "2", status: "pending", "created[gte]": "2020-01-01" };
      const list = await w.contract.call(op, { key: w.key, query });
      expect(list.status).toBe(200);
      expect(list.json.data.length).toBeGreaterThan(0);
      // Every other parameter it takes, in one accepted request.
      const everyFilter = {
        starting_after: list.json.data[0].id,
        "created[lt]": "2100-01-01T00:00:00Z",
        payment_link: w.owned.link.id,
      };
      expect((await w.contract.call(op, { key: w.key, query: everyFilter })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, query: { limit: "0" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payments/{id}": {
    async run(w) {
      const op = "GET /api/v1/payments/{id}";
      const params = { id: w.owned.payment.id };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(200);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payments.csv": {
    async run(w) {
      const op = "GET /api/v1/payments.csv";
      const query = {
        status: "pending",
        "created[gte]": "2020-01-01",
        "created[lt]": "2100-01-01",
        q: w.owned.payment.id,
      };
      const csv = await w.contract.call(op, { key: w.key, query });
      expect(csv.status).toBe(200);
      expect(csv.text).toContain(w.owned.payment.id);
      expect((await w.contract.call(op, { key: w.key, query: { status: "lost" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/payments/{id}/recover": {
    async run(w) {
      const op = "POST /api/v1/payments/{id}/recover";
      const chain = w.stack.config.chain.name;
      // Native coin sent to a deposit address by mistake: the recovery is real (202), then named again (200).
      const payment = await w.newPayment();
      await w.stack.chain.setBalance(payment.deposit_address, 10n ** 15n);
      const params = { id: payment.id };
      expect((await w.contract.call(op, { key: w.key, params, body: { chain } })).status).toBe(202);
      expect((await w.contract.call(op, { key: w.key, params, body: { chain, token: null } })).status).toBe(200);
      await idempotencyConflicts(
        w,
        op,
        { key: w.key, params, body: { chain } },
        {
          chain,
          token: randomAddress(),
        },
      );
      const nothing = await w.contract.call(op, { key: w.key, params: { id: w.owned.payment.id }, body: { chain } });
      expect(nothing.status).toBe(422);
      expect((await w.contract.call(op, { key: w.key, params, body: { chain: "atlantis" } })).status).toBe(400);
      const { server, account, paymentId } = w.chainless;
      const down = await w.contract.call(op, {
        baseUrl: server.url,
        key: account.apiKey,
        params: { id: paymentId },
        body: { chain: server.config.chain.name },
      });
      expect(down.status).toBe(503);
      await commonRefusals(w, op, { key: w.key, params, body: { chain } });
      // Once it is done, the same coin of the same payment within 24 hours: 429 with Retry-After.
      await w.stack.mineUntil(
        async () =>
          (await w.contract.call("GET /api/v1/payments/{id}/recoveries", { key: w.key, params })).json.data[0]
            ?.state === "succeeded",
        30_000,
        "the recovery to be mined",
      );
      await w.stack.chain.setBalance(payment.deposit_address, 10n ** 15n);
      expect((await w.contract.call(op, { key: w.key, params, body: { chain } })).status).toBe(429);
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payments/{id}/recoveries": {
    async run(w) {
      const op = "GET /api/v1/payments/{id}/recoveries";
      const payment = await w.newPayment();
      await w.stack.chain.setBalance(payment.deposit_address, 10n ** 15n);
      const chain = w.stack.config.chain.name;
      const params = { id: payment.id };
      await w.contract.call("POST /api/v1/payments/{id}/recover", { key: w.key, params, body: { chain } });
      const list = await w.contract.call(op, { key: w.key, params });
      expect({ status: list.status, count: list.json.data.length }).toEqual({ status: 200, count: 1 });
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/recoveries/{id}": {
    async run(w) {
      const op = "GET /api/v1/recoveries/{id}";
      const payment = await w.newPayment();
      await w.stack.chain.setBalance(payment.deposit_address, 10n ** 15n);
      const chain = w.stack.config.chain.name;
      const asked = await w.contract.call("POST /api/v1/payments/{id}/recover", {
        key: w.key,
        params: { id: payment.id },
        body: { chain },
      });
      const params = { id: asked.json.id };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(200);
      // And once the recoverer has moved it on chain, in its later states too.
      await w.stack.mineUntil(
        async () => {
          const res = await w.contract.call(op, { key: w.key, params });
          return res.json.state !== "pending" && res.json.state !== "sent" ? res : undefined;
        },
        30_000,
        "the recovery to be mined",
      );
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/webhook_endpoints": {
    async run(w) {
      const op = "POST /api/v1/webhook_endpoints";
      const url = `${w.receiver.url}?created=1`;
      expect((await w.contract.call(op, { key: w.key, body: { url } })).status).toBe(201);
      expect((await w.contract.call(op, { key: w.key, body: { url: "ftp://hooks.example.com/x" } })).status).toBe(400);
      await idempotencyConflicts(w, op, { key: w.key, body: { url: `${w.receiver.url}?replayed=1` } }, { url });
      await commonRefusals(w, op, { key: w.key, body: { url } });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/webhook_endpoints": {
    async run(w) {
      const op = "GET /api/v1/webhook_endpoints";
      expect((await w.contract.call(op, { key: w.key })).status).toBe(200);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "DELETE /api/v1/webhook_endpoints/{id}": {
    async run(w) {
      const op = "DELETE /api/v1/webhook_endpoints/{id}";
      const created = await w.contract.call("POST /api/v1/webhook_endpoints", {
        key: w.key,
        body: { url: `${w.receiver.url}?deleted=1` },
      });
      const params = { id: created.json.id };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(404);
      await commonRefusals(w, op, { key: w.key, params: { id: w.owned.endpoint.id } });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/webhook_endpoints/{id}/deliveries": {
    async run(w) {
      const op = "GET /api/v1/webhook_endpoints/{id}/deliveries";
      const params = { id: w.owned.endpoint.id };
      // After the delivery's attempt, so the attempts' shape is checked too.
      await received(w, (body) => body.id === w.owned.eventId, "the owned test event");
      const list = await w.stack.waitFor(
        async () => {
          const res = await w.contract.call(op, { key: w.key, params });
          return res.json.data.some((d: any) => d.attempts.length > 0) ? res : undefined;
        },
        15_000,
        "an attempt on record",
      );
      expect(list.status).toBe(200);
      const next = { limit: "1", starting_after: list.json.data[0].id };
      expect((await w.contract.call(op, { key: w.key, params, query: next })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, params, query: { limit: "1000" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/webhook_endpoints/{id}/deliveries/{delivery_id}/retry": {
    async run(w) {
      const op = "POST /api/v1/webhook_endpoints/{id}/deliveries/{delivery_id}/retry";
      const owned = await w.fresh();
      const params = { id: owned.endpoint.id, delivery_id: owned.deliveryId };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(202);
      await commonRefusals(w, op, { key: w.key, params });
      const gone = await goneEndpoint(w);
      const disabled = { id: gone.endpointId, delivery_id: gone.deliveryId };
      expect((await w.contract.call(op, { key: w.key, params: disabled })).status).toBe(400);
      // The endpoint's allowance of retries used up.
      const limited = await callUntil(429, 1_000, () => w.contract.call(op, { key: w.key, params }));
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/webhook_endpoints/{id}/test": {
    async run(w) {
      const op = "POST /api/v1/webhook_endpoints/{id}/test";
      const owned = await w.fresh();
      const params = { id: owned.endpoint.id };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(202);
      await commonRefusals(w, op, { key: w.key, params });
      const gone = await goneEndpoint(w);
      expect((await w.contract.call(op, { key: w.key, params: { id: gone.endpointId } })).status).toBe(400);
      const limited = await callUntil(429, 100, () => w.contract.call(op, { key: w.key, params }));
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/payment_links": {
    async run(w) {
      const op = "POST /api/v1/payment_links";
      const body = { amount: "9.00", description: "Beans", metadata: { sku: "b-1" } };
      expect((await w.contract.call(op, { key: w.key, body })).status).toBe(201);
      expect((await w.contract.call(op, { key: w.key, body: { amount: "9" } })).status).toBe(400);
      await idempotencyConflicts(w, op, { key: w.key, body: { amount: "2.00" } }, { amount: "3.00" });
      await commonRefusals(w, op, { key: w.key, body });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payment_links": {
    async run(w) {
      const op = "GET /api/v1/payment_links";
      const first = await w.contract.call(op, { key: w.key, query: { limit: "1" } });
      expect(first.status).toBe(200);
      const next = { limit: "5", starting_after: first.json.data[0].id };
      expect((await w.contract.call(op, { key: w.key, query: next })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, query: { limit: "x" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payment_links/{id}": {
    async run(w) {
      const op = "GET /api/v1/payment_links/{id}";
      const params = { id: w.owned.link.id };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(200);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/payment_links/{id}": {
    async run(w) {
      const op = "POST /api/v1/payment_links/{id}";
      const link = await w.contract.call("POST /api/v1/payment_links", { key: w.key, body: { amount: "3.00" } });
      const params = { id: link.json.id };
      expect((await w.contract.call(op, { key: w.key, params, body: { active: false } })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, params, body: { active: "no" } })).status).toBe(400);
      await idempotencyConflicts(w, op, { key: w.key, params, body: { active: true } }, { active: false });
      await commonRefusals(w, op, { key: w.key, params, body: { active: true } });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/events": {
    async run(w) {
      const op = "GET /api/v1/events";
      const page = await w.contract.call(op, { key: w.key, query: { limit: "100" } });
      expect(page.status).toBe(200);
      const query = { type: "test", starting_after: page.json.data[0].id, limit: "3" };
      expect((await w.contract.call(op, { key: w.key, query })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, query: { type: "payment.lost" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/events/stream": {
    async run(w) {
      const op = "GET /api/v1/events/stream";
      const open = await w.contract.call(op, { key: w.key, query: { after: w.owned.eventId }, streams: true });
      expect(open.status).toBe(200);
      // EventSource resumes with Last-Event-ID instead of `after`.
      const resumed = { key: w.key, headers: { "last-event-id": w.owned.eventId }, streams: true };
      expect((await w.contract.call(op, resumed)).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, headers: { "last-event-id": "nope" } })).status).toBe(400);
      expect((await w.contract.call(op, { key: w.key, query: { after: "evt_nope" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key, streams: true });
      // An account holds a few streams at once: the one past them is refused.
      const held: Response[] = [];
      try {
        for (let i = 0; i < 20; i++) {
          const res = await rawApi(w.stack.url, w.key)("/api/v1/events/stream");
          if (res.status === 200) held.push(res);
          else {
            expect(w.contract.check(op, await toApiResponse(res)).status).toBe(429);
            break;
          }
        }
      } finally {
        for (const res of held) await res.body?.cancel();
      }
      expect(w.contract.exercised(op)).toContain(429);
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/events/{id}": {
    async run(w) {
      const op = "GET /api/v1/events/{id}";
      const params = { id: w.owned.eventId };
      expect((await w.contract.call(op, { key: w.key, params })).status).toBe(200);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },
};
