/**
 * One scenario per refund operation (see merchant-scenarios.ts), on the payment paid in full on
 * anvil: each refund here is small, so they all fit under what it received.
 */
import { expect } from "bun:test";
import { claimIdempotencyKey } from "../support/idempotency-rows.ts";
import type { OperationKey } from "../support/openapi-document.ts";
import { randomAddress } from "../support/test-chain.ts";
import {
  commonRefusals,
  freshIdempotencyKey,
  INTERNAL,
  idempotencyConflicts,
  type Scenario,
  unknownLike,
  type World,
} from "./world.ts";

/** A refund of one cent of the paid payment, waiting for its address unless one is given. */
async function newRefund(w: World, body: Record<string, unknown> = {}): Promise<any> {
  const paid = await w.paid();
  const res = await w.contract.call("POST /api/v1/payments/{id}/refunds", {
    key: w.key,
    params: { id: paid.id },
    body: { amount: "0.01", ...body },
  });
  expect(res.status).toBe(201);
  return res.json;
}

export const REFUND_SCENARIOS: Record<OperationKey, Scenario> = {
  "POST /api/v1/payments/{id}/refunds": {
    async run(w) {
      const op = "POST /api/v1/payments/{id}/refunds";
      const params = { id: (await w.paid()).id };
      const body = { amount: "0.01", reason: "One bag returned", metadata: { rma: "1042-1" } };
      expect((await w.contract.call(op, { key: w.key, params, body })).status).toBe(201);
      // With the payer's address already known: payable at once, with its payment instructions.
      const payable = await w.contract.call(op, {
        key: w.key,
        params,
        body: { amount: "0.01", refund_address: randomAddress() },
      });
      expect({ status: payable.status, instructions: payable.json.payment_instructions !== null }).toEqual({
        status: 201,
        instructions: true,
      });
      expect((await w.contract.call(op, { key: w.key, params, body: { amount: "1" } })).status).toBe(400);
      // More than the payment received: refused by the cap, not by the schema.
      expect((await w.contract.call(op, { key: w.key, params, body: { amount: "900.00" } })).status).toBe(400);
      await idempotencyConflicts(w, op, { key: w.key, params, body: { amount: "0.01" } }, { amount: "0.02" });
      await commonRefusals(w, op, { key: w.key, params, body: { amount: "0.01" } });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/payments/{id}/refunds": {
    async run(w) {
      const op = "GET /api/v1/payments/{id}/refunds";
      const refund = await newRefund(w);
      const params = { id: refund.payment };
      const first = await w.contract.call(op, { key: w.key, params, query: { limit: "1" } });
      expect({ status: first.status, ids: first.json.data.map((r: any) => r.id) }).toEqual({
        status: 200,
        ids: [refund.id],
      });
      const everyFilter = {
        starting_after: refund.id,
        status: "awaiting_address",
        "created[gte]": "2020-01-01",
        "created[lt]": "2100-01-01T00:00:00Z",
      };
      expect((await w.contract.call(op, { key: w.key, params, query: everyFilter })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, params, query: { status: "lost" } })).status).toBe(400);
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/refunds": {
    async run(w) {
      const op = "GET /api/v1/refunds";
      const refund = await newRefund(w);
      const first = await w.contract.call(op, { key: w.key, query: { limit: "1" } });
      expect({ status: first.status, ids: first.json.data.map((r: any) => r.id) }).toEqual({
        status: 200,
        ids: [refund.id],
      });
      const everyFilter = {
        starting_after: refund.id,
        payment: refund.payment,
        status: "awaiting_address",
        "created[gte]": "2020-01-01",
        "created[lt]": "2100-01-01T00:00:00Z",
      };
      expect((await w.contract.call(op, { key: w.key, query: everyFilter })).status).toBe(200);
      expect((await w.contract.call(op, { key: w.key, query: { limit: "101" } })).status).toBe(400);
      const unknown = await w.contract.call(op, { key: w.key, query: { payment: unknownLike(refund.payment) } });
      expect(unknown.status).toBe(404);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/refunds.csv": {
    async run(w) {
      const op = "GET /api/v1/refunds.csv";
      const refund = await newRefund(w);
      const query = {
        payment: refund.payment,
        status: "awaiting_address",
        "created[gte]": "2020-01-01",
        "created[lt]": "2100-01-01",
      };
      const csv = await w.contract.call(op, { key: w.key, query });
      expect(csv.status).toBe(200);
      expect(csv.text).toContain(refund.id);
      expect((await w.contract.call(op, { key: w.key, query: { status: "lost" } })).status).toBe(400);
      const unknown = await w.contract.call(op, { key: w.key, query: { payment: unknownLike(refund.payment) } });
      expect(unknown.status).toBe(404);
      await commonRefusals(w, op, { key: w.key });
    },
    unreachable: { 500: INTERNAL },
  },

  "GET /api/v1/refunds/{id}": {
    async run(w) {
      const op = "GET /api/v1/refunds/{id}";
      const params = { id: (await newRefund(w, { refund_address: randomAddress() })).id };
      const res = await w.contract.call(op, { key: w.key, params });
      expect({ status: res.status, state: res.json.status }).toEqual({ status: 200, state: "awaiting_payment" });
      await commonRefusals(w, op, { key: w.key, params });
    },
    unreachable: { 500: INTERNAL },
  },

  "POST /api/v1/refunds/{id}/cancel": {
    async run(w) {
      const op = "POST /api/v1/refunds/{id}/cancel";
      const [one, two] = [await newRefund(w), await newRefund(w, { refund_address: randomAddress() })];
      const key = freshIdempotencyKey();
      const canceled = await w.contract.call(op, {
        key: w.key,
        params: { id: one.id },
        headers: { "idempotency-key": key },
      });
      expect({ status: canceled.status, state: canceled.json.status }).toEqual({ status: 200, state: "canceled" });
      const replay = await w.contract.call(op, {
        key: w.key,
        params: { id: one.id },
        headers: { "idempotency-key": key },
      });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      // The key names what it canceled: the same key on another refund is another request.
      const reused = await w.contract.call(op, {
        key: w.key,
        params: { id: two.id },
        headers: { "idempotency-key": key },
      });
      expect(reused.status).toBe(422);
      const inFlight = freshIdempotencyKey();
      await claimIdempotencyKey(w.stack.env, w.stack.accountId, inFlight);
      const busy = await w.contract.call(op, {
        key: w.key,
        params: { id: two.id },
        headers: { "idempotency-key": inFlight },
      });
      expect(busy.status).toBe(409);
      const badKey = { "idempotency-key": "k".repeat(256) };
      expect((await w.contract.call(op, { key: w.key, params: { id: two.id }, headers: badKey })).status).toBe(400);
      // Canceled already: the refund's state refuses it.
      const again = await w.contract.call(op, { key: w.key, params: { id: one.id } });
      expect({ status: again.status, error: again.json.error }).toEqual({
        status: 409,
        error: `refund ${one.id} has been canceled already`,
      });
      await commonRefusals(w, op, { key: w.key, params: { id: two.id } });
    },
    unreachable: { 500: INTERNAL },
  },
};
