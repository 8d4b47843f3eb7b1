/**
 * An endpoint that goes away, answering 410 Gone or deleted by its merchant: what was queued for
 * it is canceled and nothing more is sent. Setup: test/support/webhook-delivery.ts.
 */
import { describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { isErrorBody } from "../support/server.ts";
import { waitFor, webhookWorkerRanSince } from "../support/wait.ts";
import {
  deliveries,
  delivery,
  deliveryRig,
  lastHit,
  register,
  sendTest,
  sequence,
  settled,
  status,
} from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook } = rig;

describe("410 Gone", () => {
  test("disables the endpoint, cancels what was queued for it, and nothing more is sent", async () => {
    const m = await merchant("Gone");
    // The first event is asked to come back in a minute; the second is answered 410.
    const hook = newHook(sequence(status(429, { "retry-after": "60" }), status(410)));
    const endpoint = await register(m, hook.url);
    const waiting = await sendTest(m, endpoint);
    await waitFor(async () => (await delivery(m, endpoint, waiting.deliveryId))?.attempt_count === 1, 5_000, "the 429");
    const gone = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, gone.deliveryId);

    expect(d).toMatchObject({ status: "failed", attempt_count: 1 });
    expect(d.attempts[0]).toMatchObject({ response_status: 410, next_retry_at: null });
    expect((await delivery(m, endpoint, waiting.deliveryId)).status).toBe("canceled");

    const list = await m.api("/api/v1/webhook_endpoints");
    expect(list.json.data.find((e: { id: string }) => e.id === endpoint.id).status).toBe("disabled");

    const test410 = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" });
    expect(test410.status).toBe(400);
    expect(isErrorBody(test410.json)).toBe(true);
    const retry = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${gone.deliveryId}/retry`, {
      method: "POST",
    });
    expect(retry.status).toBe(400);

    // A payment event of this account is not queued for the disabled endpoint.
    const payment = await m.api("/api/v1/payments", { body: { amount: "1.00" } });
    expect(payment.status).toBe(201);
    await waitFor(
      async () => (await m.api(`/api/v1/payments/${payment.json.id}`)).json.status === "expired",
      5_000,
      "the payment to expire",
    );
    // The event and its deliveries are written with the expiry: they are due by now.
    await webhookWorkerRanSince(rig.server.running);
    expect(hook.hits).toHaveLength(2);
    expect(await deliveries(m, endpoint)).toHaveLength(2);
  });
});

describe("deleting an endpoint", () => {
  test("cancels its pending deliveries; nothing more arrives", async () => {
    const m = await merchant("Deleter");
    const hook = newHook(status(429, { "retry-after": "1" }));
    const endpoint = await register(m, hook.url);
    const a = await sendTest(m, endpoint);
    const b = await sendTest(m, endpoint);
    await waitFor(() => hook.hits.length === 2, 5_000, "both first attempts");
    await waitFor(
      async () => (await deliveries(m, endpoint)).every((d) => d.attempt_count === 1),
      5_000,
      "both attempts recorded",
    );
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);

    const states = await rig.server.running.db.all<{ id: string; state: string; next_attempt_at: number | null }>(
      sql`SELECT id, state, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`,
    );
    expect(states.map((s) => s.id).sort()).toEqual([a.deliveryId, b.deliveryId].sort());
    for (const s of states) expect(s).toMatchObject({ state: "canceled", next_attempt_at: null });
    await webhookWorkerRanSince(rig.server.running, lastHit(hook) + 1_000); // past the Retry-After
    expect(hook.hits).toHaveLength(2);
    // The deleted endpoint is gone from every route.
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries`)).status).toBe(404);
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" })).status).toBe(404);
  });
});
