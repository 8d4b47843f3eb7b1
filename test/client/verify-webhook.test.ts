/**
 * verifyWebhook on deliveries the real server sent to a real local receiver (a `test` ping and a
 * payment's `payment.expired`), and on every way a delivery can be forged or replayed late.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type CreatedWebhookEndpoint,
  Stablegate,
  verifyWebhook,
  WebhookVerificationError,
} from "../../clients/typescript/src/index.ts";
import { type ReceivedHook, type Receiver, startReceiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";
import { manualSignature } from "../support/webhook-delivery.ts";

let server: TestServer;
let receiver: Receiver;
let client: Stablegate;
let endpoint: CreatedWebhookEndpoint;
/** The `test` ping the server delivered, with the id the API gave its event. */
let ping: { hit: ReceivedHook; eventId: string };

beforeAll(async () => {
  receiver = startReceiver();
  // Payments expire after a second: a payment event without a chain.
  server = await startTestServer({ webhookAllowPrivate: true, paymentWindowMs: 1_000 });
  client = new Stablegate({ apiKey: (await server.createAccount()).apiKey, baseUrl: server.url });
  endpoint = await client.webhookEndpoints.create({ url: receiver.url });
  const { event_id } = await client.webhookEndpoints.test(endpoint.id);
  const hit = await waitFor(() => receiver.hits.find((h) => h.id === event_id), 15_000, "the test ping");
  ping = { hit, eventId: event_id };
});

afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

/** The error verifyWebhook throws for these arguments (the test fails if it accepts them). */
function refusal(...args: Parameters<typeof verifyWebhook>): WebhookVerificationError {
  try {
    verifyWebhook(...args);
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error("verifyWebhook accepted it");
}

/** The ping's headers with these replaced. */
const headersWith = (changes: Record<string, string>) => ({
  ...Object.fromEntries(ping.hit.headers.entries()),
  ...changes,
});

describe("verifyWebhook on real deliveries", () => {
  test("a test ping verifies with the endpoint's secret and returns the typed event", () => {
    const event = verifyWebhook(ping.hit.body, ping.hit.headers, endpoint.secret);
    expect(event).toMatchObject({ id: ping.eventId, object: "event", type: "test" });
    if (event.type !== "test") throw new Error(`expected a test event, got ${event.type}`);
    expect(event.data.message).toContain("test event");
  });

  test("a payment event verifies and carries the payment as the API shows it", async () => {
    const payment = await client.payments.create({ amount: "4.00", metadata: { order_id: "77" } });
    const hit = await waitFor(
      () => receiver.hits.find((h) => h.body.includes(payment.id) && h.body.includes('"payment.expired"')),
      15_000,
      "the payment.expired delivery",
    );
    const event = verifyWebhook(hit.body, hit.headers, endpoint.secret);
    if (event.type !== "payment.expired") throw new Error(`expected payment.expired, got ${event.type}`);
    expect(event.data.payment).toEqual(await client.payments.retrieve(payment.id));
    expect(event.data.payment.metadata).toEqual({ order_id: "77" });
  });

  test("headers as Node's req.headers holds them: any letter case, a repeated header as an array", () => {
    const node = {
      "Webhook-Id": ping.hit.headers.get("webhook-id")!,
      "WEBHOOK-TIMESTAMP": ping.hit.headers.get("webhook-timestamp")!,
      "webhook-signature": ["v1,bm90IHRoaXMgb25l", ping.hit.headers.get("webhook-signature")!],
      "content-type": undefined,
    };
    expect(verifyWebhook(ping.hit.body, node, endpoint.secret).id).toBe(ping.eventId);
  });
});

describe("verifyWebhook refuses", () => {
  test("a body changed by one character", () => {
    const tampered = ping.hit.body.replace('"type":"test"', '"type":"tesT"');
    expect(tampered).not.toBe(ping.hit.body);
    expect(refusal(tampered, ping.hit.headers, endpoint.secret).message).toBe("No matching signature found");
  });

  test("another endpoint's secret", async () => {
    const other = await client.webhookEndpoints.create({ url: `${receiver.url}/other` });
    try {
      expect(refusal(ping.hit.body, ping.hit.headers, other.secret).message).toBe("No matching signature found");
    } finally {
      // Gone before the payment test, in any order: its events must reach the receiver signed once, by `endpoint`.
      await client.webhookEndpoints.delete(other.id);
    }
  });

  test("a correct signature over a timestamp more than five minutes old (a replay), or ahead", () => {
    const id = ping.hit.headers.get("webhook-id")!;
    const signedAt = (seconds: number) =>
      headersWith({
        "webhook-timestamp": String(seconds),
        "webhook-signature": manualSignature(endpoint.secret, id, String(seconds), ping.hit.body),
      });
    const now = Math.floor(Date.now() / 1000);
    // The re-signing is right: signed now, it passes.
    expect(verifyWebhook(ping.hit.body, signedAt(now), endpoint.secret).id).toBe(ping.eventId);
    expect(refusal(ping.hit.body, signedAt(now - 10 * 60), endpoint.secret).message).toBe("Message timestamp too old");
    expect(refusal(ping.hit.body, signedAt(now + 10 * 60), endpoint.secret).message).toBe("Message timestamp too new");
  });

  test("a delivery without the signature headers", () => {
    const { "webhook-signature": _dropped, ...unsigned } = headersWith({});
    expect(refusal(ping.hit.body, unsigned, endpoint.secret).message).toBe("Missing required headers");
  });
});
