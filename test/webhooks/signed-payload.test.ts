/**
 * What a merchant's endpoint receives: the Standard Webhooks headers and signature, the event
 * payload, and the delivery the API records for it. Setup: test/support/webhook-delivery.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { waitFor } from "../support/wait.ts";
import {
  deliveryRig,
  type Endpoint,
  type Hook,
  ISO_MS,
  type Merchant,
  manualSignature,
  register,
  sendTest,
  settled,
  TIMEOUT_MS,
} from "../support/webhook-delivery.ts";

const { merchant, newHook } = deliveryRig();

describe("a test event to a healthy endpoint", () => {
  let m: Merchant;
  let endpoint: Endpoint;
  let hook: Hook;
  let sent: { eventId: string; deliveryId: string };
  let sentAt: number;

  beforeAll(async () => {
    m = await merchant("Signed");
    hook = newHook();
    endpoint = await register(m, hook.url);
    sentAt = Date.now();
    sent = await sendTest(m, endpoint);
    await waitFor(() => hook.hits.length === 1, 5_000, "the test event to arrive");
  });

  test("carries webhook-id, webhook-timestamp and webhook-signature; webhook-id is the event id", () => {
    const { headers } = hook.hits[0]!;
    expect(headers["webhook-id"]).toBe(sent.eventId);
    expect(sent.eventId).toMatch(/^evt_[0-9A-Za-z]+$/);
    expect(headers["webhook-timestamp"]).toMatch(/^\d+$/);
    const ts = Number(headers["webhook-timestamp"]);
    expect(ts).toBeGreaterThanOrEqual(Math.floor(sentAt / 1000) - 1);
    expect(ts).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["content-length"]).toBe(String(Buffer.byteLength(hook.hits[0]!.body)));
  });

  test("the signature verifies with the standardwebhooks package and by hand", () => {
    const hit = hook.hits[0]!;
    const verified = new Webhook(endpoint.secret).verify(hit.body, hit.headers);
    expect(verified).toEqual(JSON.parse(hit.body));
    expect(hit.headers["webhook-signature"]).toBe(
      manualSignature(endpoint.secret, hit.id, hit.headers["webhook-timestamp"]!, hit.body),
    );
  });

  test("a changed body, id or timestamp, or another endpoint's secret, fails verification", async () => {
    const hit = hook.hits[0]!;
    const wh = new Webhook(endpoint.secret);
    expect(() => wh.verify(hit.body.replace('"test"', '"tesT"'), hit.headers)).toThrow();
    expect(() => wh.verify(hit.body, { ...hit.headers, "webhook-id": `${hit.id}x` })).toThrow();
    expect(() =>
      wh.verify(hit.body, {
        ...hit.headers,
        "webhook-timestamp": String(Number(hit.headers["webhook-timestamp"]) + 1),
      }),
    ).toThrow();
    const other = await register(m, newHook().url);
    expect(other.secret).not.toBe(endpoint.secret);
    expect(() => new Webhook(other.secret).verify(hit.body, hit.headers)).toThrow();
  });

  test("the payload is {id, object, type, created_at, data}", () => {
    const payload = JSON.parse(hook.hits[0]!.body);
    expect(Object.keys(payload)).toEqual(["id", "object", "type", "created_at", "data"]);
    expect(payload.id).toBe(sent.eventId);
    expect(payload.object).toBe("event");
    expect(payload.type).toBe("test");
    expect(payload.created_at).toMatch(ISO_MS);
    expect(Date.parse(payload.created_at)).toBeGreaterThanOrEqual(sentAt - 1);
    expect(typeof payload.data).toBe("object");
  });

  test("the delivery is recorded as one successful attempt with its details", async () => {
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_id: sent.eventId,
      event_type: "test",
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
    });
    expect(d.attempts).toHaveLength(1);
    const [a] = d.attempts;
    expect(Object.keys(a).sort()).toEqual(["attempted_at", "duration_ms", "error", "next_retry_at", "response_status"]);
    expect(a.attempted_at).toMatch(ISO_MS);
    expect(a.response_status).toBe(200);
    expect(a.error).toBeNull();
    expect(a.next_retry_at).toBeNull();
    expect(Number.isInteger(a.duration_ms)).toBe(true);
    expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    expect(a.duration_ms).toBeLessThan(TIMEOUT_MS);
  });
});
