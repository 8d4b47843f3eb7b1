/**
 * How often a delivery is sent: once to a healthy endpoint, again on the schedule after a failure
 * or a timeout, later when Retry-After says so, and once more on a merchant's retry. Setup:
 * test/support/webhook-delivery.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isErrorBody, type TestServer } from "../support/server.ts";
import { waitFor, webhookWorkerRanSince } from "../support/wait.ts";
import {
  deliveries,
  delivery,
  deliveryRig,
  expectSigned,
  HOLD_MS,
  type Hook,
  ISO_MS,
  lastHit,
  ok,
  register,
  SCHEDULE,
  sendTest,
  sequence,
  settled,
  startDeliveryServer,
  status,
  TIMEOUT_MS,
} from "../support/webhook-delivery.ts";

const rig = deliveryRig();
const { merchant, newHook, hang, pastFirstRetry } = rig;

describe("exactly once to a healthy endpoint", () => {
  // A server that waits 30 s for an answer: this receiver shares the test's process, and on a
  // loaded machine one of twenty sends at once went unanswered past the 1.5 s of the rig's, which
  // is a timeout and a retry (retried below), not a healthy endpoint.
  let patient: TestServer;
  beforeAll(async () => {
    patient = await startDeliveryServer(30_000);
  });
  afterAll(() => patient?.stop());

  test("twenty events arrive once each and are never sent again", async () => {
    const m = await merchant("Healthy", patient);
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    const sent = await Promise.all(Array.from({ length: 20 }, () => sendTest(m, endpoint)));
    await waitFor(() => hook.hits.length >= 20, 5_000, "twenty deliveries");
    // Past the whole retry schedule: a second copy would have been sent by now.
    await webhookWorkerRanSince(patient.running, lastHit(hook) + 1.1 * (SCHEDULE[1] + SCHEDULE[2] + SCHEDULE[3]));
    expect(hook.hits).toHaveLength(20);
    expect(new Set(hook.hits.map((h) => h.id))).toEqual(new Set(sent.map((s) => s.eventId)));
    for (const hit of hook.hits) expectSigned(hit, endpoint.secret);
    const list = await deliveries(m, endpoint);
    expect(list).toHaveLength(20);
    for (const d of list) expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
  });
});

describe("retries", () => {
  test("after a 500: the same webhook-id and body on every attempt, each attempt listed", async () => {
    const m = await merchant("Flaky");
    const hook = newHook(sequence(status(500), status(500), ok));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);

    expect(hook.hits).toHaveLength(3);
    expect(hook.hits.map((h) => h.id)).toEqual([sent.eventId, sent.eventId, sent.eventId]);
    expect(new Set(hook.hits.map((h) => h.body)).size).toBe(1);
    for (const hit of hook.hits) expectSigned(hit, endpoint.secret);
    // The schedule's gaps, less 10% jitter.
    expect(hook.hits[1]!.at - hook.hits[0]!.at).toBeGreaterThanOrEqual(0.9 * SCHEDULE[1] - 20);
    expect(hook.hits[2]!.at - hook.hits[1]!.at).toBeGreaterThanOrEqual(0.9 * SCHEDULE[2] - 20);

    expect(d).toMatchObject({ status: "succeeded", attempt_count: 3, next_attempt_at: null });
    const [third, second, first] = d.attempts; // newest first
    expect(first).toMatchObject({ response_status: 500, error: "HTTP 500" });
    expect(second).toMatchObject({ response_status: 500, error: "HTTP 500" });
    expect(third).toMatchObject({ response_status: 200, error: null, next_retry_at: null });
    for (const a of d.attempts) {
      expect(a.attempted_at).toMatch(ISO_MS);
      expect(Number.isInteger(a.duration_ms)).toBe(true);
    }
    // Each failed attempt says when the next one is due, and the next one was not early.
    expect(Date.parse(first.next_retry_at) - Date.parse(first.attempted_at)).toBeGreaterThanOrEqual(0.9 * SCHEDULE[1]);
    expect(Date.parse(second.next_retry_at) - Date.parse(second.attempted_at)).toBeGreaterThanOrEqual(
      0.9 * SCHEDULE[2],
    );
    expect(Date.parse(second.attempted_at)).toBeGreaterThanOrEqual(Date.parse(first.next_retry_at));
    expect(Date.parse(third.attempted_at)).toBeGreaterThanOrEqual(Date.parse(second.next_retry_at));
  });

  test("after a timeout: the hanging attempt is cut at the timeout and retried with the same webhook-id", async () => {
    const m = await merchant("Slow");
    const hook: Hook = newHook();
    hook.behave = sequence(
      hang(() => hook),
      ok,
    );
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);

    expect(hook.hits.map((h) => h.id)).toEqual([sent.eventId, sent.eventId]);
    expect(hook.hits[1]!.body).toBe(hook.hits[0]!.body);
    expect(hook.hits[1]!.at - hook.hits[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS + 0.9 * SCHEDULE[1] - 20);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 2 });
    const [second, first] = d.attempts;
    expect(first.response_status).toBeNull();
    expect(first.error).toBe(`no answer within ${TIMEOUT_MS / 1000} s`);
    expect(first.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    expect(first.duration_ms).toBeLessThan(HOLD_MS); // cut by the sender, not let go by the receiver
    expect(first.next_retry_at).toMatch(ISO_MS);
    expect(second).toMatchObject({ response_status: 200, error: null });
    await waitFor(() => hook.open === 0, 2_000, "the held request to be released (the sender hung up)");
  });

  test("an endpoint that always fails gets the whole schedule, then the delivery fails", async () => {
    const m = await merchant("Down");
    const hook = newHook(status(500));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length, next_attempt_at: null });
    expect(hook.hits).toHaveLength(SCHEDULE.length);
    expect(d.attempts[0].next_retry_at).toBeNull(); // the last one: nothing more is planned
    for (const a of d.attempts.slice(1)) expect(a.next_retry_at).toMatch(ISO_MS);
    await pastFirstRetry(lastHit(hook));
    expect(hook.hits).toHaveLength(SCHEDULE.length);
  });

  test("429 with Retry-After delays the next attempt by at least that much", async () => {
    const m = await merchant("Busy");
    const hook = newHook(sequence(status(429, { "retry-after": "2" }), ok));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const pending = await waitFor(
      async () => {
        const d = await delivery(m, endpoint, sent.deliveryId);
        return d?.attempt_count === 1 ? d : undefined;
      },
      5_000,
      "the first attempt",
    );
    expect(pending.status).toBe("pending");
    const [first] = pending.attempts;
    expect(first).toMatchObject({ response_status: 429, error: "HTTP 429" });
    const delay = Date.parse(first.next_retry_at) - Date.parse(first.attempted_at);
    expect(delay).toBeGreaterThanOrEqual(2_000); // not the schedule's 200 ms
    expect(delay).toBeLessThan(2_000 + TIMEOUT_MS);
    expect(pending.next_attempt_at).toBe(first.next_retry_at);

    const d = await settled(m, endpoint, sent.deliveryId, 5_000);
    expect(d.status).toBe("succeeded");
    expect(hook.hits.map((h) => h.id)).toEqual([sent.eventId, sent.eventId]);
    expect(hook.hits[1]!.at - hook.hits[0]!.at).toBeGreaterThanOrEqual(1_980);
  });

  test("503 with an HTTP-date Retry-After is honoured too", async () => {
    const m = await merchant("Maintenance");
    const hook = newHook(
      () =>
        new Response("down", { status: 503, headers: { "retry-after": new Date(Date.now() + 4_000).toUTCString() } }),
    );
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const pending = await waitFor(
      async () => {
        const d = await delivery(m, endpoint, sent.deliveryId);
        return d?.attempt_count === 1 ? d : undefined;
      },
      5_000,
      "the first attempt",
    );
    const [first] = pending.attempts;
    expect(first.response_status).toBe(503);
    // The date has one-second resolution, so up to a second of the four may be lost.
    expect(Date.parse(first.next_retry_at) - Date.parse(first.attempted_at)).toBeGreaterThanOrEqual(2_900);
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" })).status).toBe(200);
  });
});

describe("manual retry", () => {
  test("sends a succeeded delivery again, with the same webhook-id and body", async () => {
    const m = await merchant("Replay");
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    await settled(m, endpoint, sent.deliveryId);
    expect(hook.hits).toHaveLength(1);

    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${sent.deliveryId}/retry`, {
      method: "POST",
    });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id: sent.deliveryId, event_id: sent.eventId, status: "pending" });
    await waitFor(() => hook.hits.length === 2, 5_000, "the manual retry to arrive");
    expect(hook.hits[1]!.id).toBe(sent.eventId);
    expect(hook.hits[1]!.body).toBe(hook.hits[0]!.body);
    expectSigned(hook.hits[1]!, endpoint.secret);
    const d = await waitFor(
      async () => {
        const found = await delivery(m, endpoint, sent.deliveryId);
        return found?.attempt_count === 2 && found.status === "succeeded" ? found : undefined;
      },
      5_000,
      "the retry to be recorded",
    );
    expect(d.attempts).toHaveLength(2);
  });

  test("revives a failed delivery once the receiver is fixed", async () => {
    const m = await merchant("Revived");
    const hook = newHook(status(500));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    expect((await settled(m, endpoint, sent.deliveryId)).status).toBe("failed");
    hook.behave = ok;
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${sent.deliveryId}/retry`, {
      method: "POST",
    });
    expect(res.status).toBe(202);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: SCHEDULE.length + 1 });
    expect(new Set(hook.hits.map((h) => h.id))).toEqual(new Set([sent.eventId]));
    expect(hook.hits).toHaveLength(SCHEDULE.length + 1);
  });

  test("an unknown delivery id is 404", async () => {
    const m = await merchant("Unknown");
    const endpoint = await register(m, newHook().url);
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/whd_doesnotexist/retry`, {
      method: "POST",
    });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});
