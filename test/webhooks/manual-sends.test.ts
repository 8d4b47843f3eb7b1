/**
 * The two calls that make the server send on a merchant's request, `test` and a delivery's
 * `retry`: what they answer, and how often they may be called.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, type TestServer, api, startTestServer } from "../support/server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { waitFor } from "../support/stack.ts";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 });
});

afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

async function merchantWithEndpoint(name: string): Promise<{ call: Api; endpointId: string }> {
  const call = api(server.url, server.createAccount(name).apiKey);
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
    const listed = await waitFor(async () => {
      const data = (await call(deliveries)).json.data as Array<{ id: string; status: string; event_type: string }>;
      return data.length === 2 && data.every((d) => d.status === "succeeded") ? data : undefined;
    }, 10_000, "both deliveries to succeed");
    expect(listed.map((d) => d.event_type).sort()).toEqual(["payment.expired", "test"]);

    for (const before of listed) {
      const retried = await call(`${deliveries}/${before.id}/retry`, { method: "POST" });
      expect(retried.status).toBe(202);
      expect(retried.json.event_type).toBe(before.event_type);
      // The worker may already be sending it again, so only what a retry cannot change is compared.
      const { status, attempt_count, next_attempt_at, attempts, ...fixed } = retried.json;
      expect(Object.keys(fixed).sort()).toEqual(["created_at", "endpoint_id", "event_id", "event_type", "id", "object"]);
      expect(before).toMatchObject(fixed);
    }
  });
});
