/**
 * GET /api/v1/events and GET /api/v1/events/{id} agree on what an event is: every event the
 * account's endpoints were sent, `test` pings included, is both listed and retrievable.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let server: TestServer;
let receiver: Receiver;
let merchant: Api;
let endpointId: string;

beforeAll(async () => {
  receiver = startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 });
  merchant = api(server.url, (await server.createAccount("Lister")).apiKey);
  const created = await merchant("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
  expect(created.status).toBe(201);
  endpointId = created.json.id;
});

afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

const listIds = async (query = "") => {
  const res = await merchant(`/api/v1/events?limit=100${query}`);
  expect(res.status).toBe(200);
  return (res.json.data as Array<{ id: string; type: string }>).map((e) => e.id);
};

describe("test events in the events API", () => {
  test("a test event is listed, filterable by type, and the list shows it exactly as retrieve does", async () => {
    const sent = await merchant(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" });
    expect(sent.status).toBe(202);
    const eventId: string = sent.json.event_id;

    const listed = await merchant("/api/v1/events?limit=100");
    const entry = listed.json.data.find((e: { id: string }) => e.id === eventId);
    expect(entry).toBeDefined();
    expect(entry.type).toBe("test");
    const retrieved = await merchant(`/api/v1/events/${eventId}`);
    expect(retrieved.status).toBe(200);
    expect(retrieved.json).toEqual(entry);

    expect(await listIds("&type=test")).toContain(eventId);
    expect(await listIds("&type=payment.expired")).not.toContain(eventId);
  });

  test("test and payment events share one list, newest first", async () => {
    expect((await merchant("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(201);
    const expired = async () =>
      (await merchant("/api/v1/events?limit=1&type=payment.expired")).json.data[0]?.id as string | undefined;
    const paymentEvent = await waitFor(expired, 10_000, "the payment.expired event");
    const ping = (await merchant(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" })).json
      .event_id as string;

    const ids = await listIds();
    expect(ids[0]).toBe(ping);
    expect(ids.indexOf(paymentEvent)).toBeGreaterThan(0);
  });
});
