/**
 * One merchant's webhook ids mean nothing to another: every webhook route answers 404 and
 * nothing is sent or changed. Setup: test/support/webhook-delivery.ts.
 */
import { describe, expect, test } from "bun:test";
import { isErrorBody } from "../support/server.ts";
import { webhookWorkerRanSince } from "../support/wait.ts";
import { delivery, deliveryRig, register, sendTest, settled } from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook } = rig;

describe("another account's webhook ids", () => {
  test("are 404 on every webhook route, and nothing is sent or changed", async () => {
    const alice = await merchant("Alice");
    const mallory = await merchant("Mallory");
    const aliceHook = newHook();
    const aliceEndpoint = await register(alice, aliceHook.url);
    const sent = await sendTest(alice, aliceEndpoint);
    await settled(alice, aliceEndpoint, sent.deliveryId);
    const malloryEndpoint = await register(mallory, newHook().url);

    const as = mallory.api;
    const attempts = [
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/deliveries`),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${malloryEndpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/test`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}`, { method: "DELETE" }),
      as(`/api/v1/events/${sent.eventId}`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(isErrorBody(res.json)).toBe(true);
    }
    const list = await mallory.api("/api/v1/webhook_endpoints");
    expect(list.json.data.map((e: { id: string }) => e.id)).toEqual([malloryEndpoint.id]);

    await webhookWorkerRanSince(rig.server.running);
    expect(aliceHook.hits).toHaveLength(1);
    const d = await delivery(alice, aliceEndpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
    expect((await alice.api("/api/v1/webhook_endpoints")).json.data.map((e: { id: string }) => e.id)).toEqual([
      aliceEndpoint.id,
    ]);
  });
});
