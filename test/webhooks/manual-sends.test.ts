/**
 * The two calls that make the server send on a merchant's request, `test` and a delivery's
 * `retry`: what they answer, and how often they may be called.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RateLimit } from "../../src/rate-limits/index.ts";
import { WEBHOOK_LIMITS } from "../../src/webhooks/routes.ts";
import { createTestClock } from "../support/clock.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Api, type ApiResponse, api, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let server: TestServer;
let receiver: Receiver;
/** Moved forward instead of waiting for a Retry-After. */
const clock = createTestClock();

beforeAll(async () => {
  receiver = startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 }, { clock });
});

afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

async function merchantWithEndpoint(name: string): Promise<{ call: Api; endpointId: string }> {
  const call = api(server.url, (await server.createAccount(name)).apiKey);
  const created = await call("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
  expect(created.status).toBe(201);
  return { call, endpointId: created.json.id };
}

describe("POST .../deliveries/{id}/retry", () => {
  test("answers the delivery exactly as the list shows it, event_type included", async () => {
    const { call, endpointId } = await merchantWithEndpoint("Retrier");
    const deliveries = `/api/v1/webhook_endpoints/${endpointId}/deliveries`;
    // One test ping and one payment event, each delivered once.
    expect((await call(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" })).status).toBe(202);
    expect((await call("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(201);
    const listed = await waitFor(
      async () => {
        const data = (await call(deliveries)).json.data as Array<{ id: string; status: string; event_type: string }>;
        return data.length === 2 && data.every((d) => d.status === "succeeded") ? data : undefined;
      },
      10_000,
      "both deliveries to succeed",
    );
    expect(listed.map((d) => d.event_type).sort()).toEqual(["payment.expired", "test"]);
    // The payment an event is about, for reconciling; a test ping is about none.
    const paymentId = (await call("/api/v1/payments")).json.data[0].id;
    expect(Object.fromEntries(listed.map((d) => [d.event_type, (d as { payment_id?: unknown }).payment_id]))).toEqual({
      "payment.expired": paymentId,
      test: null,
    });

    for (const before of listed) {
      const retried = await call(`${deliveries}/${before.id}/retry`, { method: "POST" });
      expect(retried.status).toBe(202);
      expect(retried.json.event_type).toBe(before.event_type);
      // The worker may already be sending it again, so only what a retry cannot change is compared.
      const { status, attempt_count, next_attempt_at, attempts, ...fixed } = retried.json;
      expect(Object.keys(fixed).sort()).toEqual([
        "created_at",
        "endpoint_id",
        "event_id",
        "event_type",
        "id",
        "object",
        "payment_id",
      ]);
      expect(before).toMatchObject(fixed);
    }
  });
});

describe("throttling", () => {
  const sendTest = (call: Api, endpointId: string) =>
    call(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" });
  const deliveryCount = async (call: Api, endpointId: string) =>
    (await call(`/api/v1/webhook_endpoints/${endpointId}/deliveries?limit=100`)).json.data.length as number;

  /**
   * Calls until the first refusal. At least the burst is accepted, and at most what the limit
   * gave back in the (real) time the calls took on top of it.
   */
  async function untilRefused(send: () => Promise<ApiResponse>, limit: RateLimit) {
    const started = clock.now();
    let accepted = 0;
    while (accepted < 10 * limit.burst) {
      const res = await send();
      if (res.status !== 202) {
        expect(accepted).toBeGreaterThanOrEqual(limit.burst);
        expect(accepted).toBeLessThanOrEqual(
          limit.burst + Math.ceil(((clock.now() - started) / 1_000) * limit.perSecond),
        );
        expect(res.status).toBe(429);
        return { accepted, refused: res };
      }
      accepted++;
    }
    throw new Error(`${accepted} calls in a row were accepted`);
  }

  test("test: a burst per endpoint, then 429 with Retry-After; a refused call queues nothing; others are unaffected", async () => {
    const { call, endpointId } = await merchantWithEndpoint("Pinger");
    const second = (await call("/api/v1/webhook_endpoints", { body: { url: receiver.url } })).json.id as string;
    const mallory = await merchantWithEndpoint("Mallory");
    // Another merchant naming this endpoint gets 404, never 429, and uses up none of its allowance.
    for (let i = 0; i < 2 * WEBHOOK_LIMITS.test.burst; i++)
      expect((await sendTest(mallory.call, endpointId)).status).toBe(404);

    const { accepted, refused } = await untilRefused(() => sendTest(call, endpointId), WEBHOOK_LIMITS.test);
    expect(refused.json).toEqual({ error: "too many test events for this webhook endpoint; try again shortly" });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(1 / WEBHOOK_LIMITS.test.perSecond));
    expect(await deliveryCount(call, endpointId)).toBe(accepted);

    expect((await sendTest(call, second)).status).toBe(202);
    expect((await sendTest(mallory.call, mallory.endpointId)).status).toBe(202);

    clock.advance(retryAfter * 1_000);
    expect((await sendTest(call, endpointId)).status).toBe(202);
    expect(await deliveryCount(call, endpointId)).toBe(accepted + 1);
  });

  test("retry: a burst per endpoint, then 429 with Retry-After, and allowed again after it", async () => {
    const { call, endpointId } = await merchantWithEndpoint("Replayer");
    const deliveryId = (await sendTest(call, endpointId)).json.delivery.id as string;
    const retry = (id = deliveryId) =>
      call(`/api/v1/webhook_endpoints/${endpointId}/deliveries/${id}/retry`, { method: "POST" });
    // Unknown deliveries are 404 and cost nothing.
    for (let i = 0; i < 2; i++) expect((await retry("whd_unknown")).status).toBe(404);

    const { refused } = await untilRefused(() => retry(), WEBHOOK_LIMITS.retry);
    expect(refused.json).toEqual({ error: "too many retries for this webhook endpoint; try again shortly" });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);

    clock.advance(retryAfter * 1_000);
    expect((await retry()).status).toBe(202);
  });
});
