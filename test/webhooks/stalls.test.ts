/**
 * Receivers that hang or fall behind hold up no one else: neither a healthy endpoint of the same
 * account nor another merchant's endpoint. Setup: test/support/webhook-delivery.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import type { TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";
import {
  deliveryRig,
  type Hook,
  type Merchant,
  register,
  sendTest,
  startDeliveryServer,
} from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook, hang } = rig;

describe("receivers that misbehave", () => {
  describe("while hanging sends hold their slots", () => {
    // A server that waits a minute for an answer: as long as no hanging send has been let go,
    // whatever else arrived got past them, however slow the machine.
    const PATIENT_MS = 60_000;
    let patient: TestServer;
    beforeAll(async () => {
      patient = await startDeliveryServer(PATIENT_MS);
    });
    afterAll(async () => {
      rig.releaseHeld();
      await patient?.stop();
    });

    /** A hook that holds every request for the whole test, and a healthy one, both registered for `m`. */
    async function slowAndFast(m: Merchant) {
      const slow: Hook = newHook();
      slow.behave = hang(() => slow, PATIENT_MS);
      const fast = newHook();
      return { slow, fast, slowEndpoint: await register(m, slow.url), fastEndpoint: await register(m, fast.url) };
    }

    test("a receiver that hangs does not stall a healthy endpoint of the same account", async () => {
      const m = await merchant("Mixed", patient);
      const { slow, fast, slowEndpoint, fastEndpoint } = await slowAndFast(m);
      // More hanging sends than the worker has slots in all (32), let alone per endpoint.
      for (let i = 0; i < 40; i++) await sendTest(m, slowEndpoint);
      await waitFor(() => slow.open >= 4, 10_000, "the hanging sends to be in flight");

      const sent = await Promise.all(Array.from({ length: 5 }, () => sendTest(m, fastEndpoint)));
      await waitFor(() => fast.hits.length === 5, 10_000, "the healthy endpoint's events");
      // All arrived while every hanging send still held its slot.
      expect(slow.open).toBe(slow.hits.length);
      expect(new Set(fast.hits.map((h) => h.id))).toEqual(new Set(sent.map((s) => s.eventId)));
      await m.api(`/api/v1/webhook_endpoints/${slowEndpoint.id}`, { method: "DELETE" });
      rig.releaseHeld();
    });

    test("a hanging receiver with a long backlog does not stall a healthy endpoint of the same account", async () => {
      // More queued for the hanging endpoint than the worker reads in one go (4 x 32 due rows),
      // and all of it older than the healthy endpoint's events. (bench/webhooks.ts --hanging
      // measures how long the healthy endpoint waits.)
      const m = await merchant("Backlog", patient);
      const { slow, fast, slowEndpoint, fastEndpoint } = await slowAndFast(m);
      for (let i = 0; i < 200; i += 50) await Promise.all(Array.from({ length: 50 }, () => sendTest(m, slowEndpoint)));
      await waitFor(() => slow.open >= 4, 10_000, "the hanging sends to be in flight");

      const sent = await Promise.all(Array.from({ length: 5 }, () => sendTest(m, fastEndpoint)));
      await waitFor(() => fast.hits.length === 5, 10_000, "the healthy endpoint's events");
      expect(slow.open).toBe(slow.hits.length);
      expect(new Set(fast.hits.map((h) => h.id))).toEqual(new Set(sent.map((s) => s.eventId)));
      await m.api(`/api/v1/webhook_endpoints/${slowEndpoint.id}`, { method: "DELETE" });
      rig.releaseHeld();
    }, 20_000);
  });

  test("one endpoint's backlog does not hold up another merchant's endpoint", async () => {
    const busy = await merchant("Busy");
    const quiet = await merchant("Quiet");
    const busyHook = newHook();
    const quietHook = newHook();
    await register(busy, busyHook.url);
    const quietEndpoint = await register(quiet, quietHook.url);
    // A burst of events through the outbox, as a batch of payment changes would write them.
    const events = createEventStore(rig.server.running.db, randomIds);
    const BURST = 1_500;
    await rig.server.running.db.transaction(async () => {
      for (let i = 0; i < BURST; i++) {
        const id = randomIds.prefixed("evt");
        const now = Date.now();
        await events.insert({
          id,
          account_id: busy.accountId,
          type: "test",
          payment_id: null,
          payload: JSON.stringify({
            id,
            object: "event",
            type: "test",
            created_at: new Date(now).toISOString(),
            data: {},
          }),
          created_at: now,
        });
      }
    });
    await waitFor(() => busyHook.hits.length > 0, 5_000, "the burst to start arriving");

    const sent = await sendTest(quiet, quietEndpoint);
    await waitFor(() => quietHook.hits.length === 1, 30_000, "the quiet merchant's event");
    const busyDoneAt = busyHook.hits.length;
    await waitFor(() => busyHook.hits.length === BURST, 60_000, "the burst to finish");
    expect(quietHook.hits[0]!.id).toBe(sent.eventId);
    expect(busyDoneAt).toBeLessThan(BURST); // it did not wait for the burst to drain
  }, 90_000);
});
