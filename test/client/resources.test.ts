/**
 * The TypeScript client's payment links, webhook endpoints, deliveries and events against the
 * real server, with deliveries going to a real local receiver.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NotFoundError, Stablegate } from "../../clients/typescript/src/index.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true });
});

afterAll(async () => {
  await server?.stop();
  receiver?.stop();
});

/** A client for a fresh account, so lists hold only what the test made. */
async function merchant() {
  const { apiKey } = await server.createAccount();
  return { client: new Stablegate({ apiKey, baseUrl: server.url }), raw: api(server.url, apiKey) };
}

describe("paymentLinks", () => {
  test("create (idempotent), retrieve, update and list", async () => {
    const { client } = await merchant();
    const body = {
      description: "Donations",
      min_amount: "1.00",
      max_amount: "100.00",
      metadata: { campaign: "spring" },
    };
    const link = await client.paymentLinks.create(body, { idempotencyKey: "spring" });
    expect(link).toMatchObject({ object: "payment_link", active: true, amount: null, min_amount: "1.00" });
    expect(link.metadata).toEqual({ campaign: "spring" });
    expect((await client.paymentLinks.create(body, { idempotencyKey: "spring" })).id).toBe(link.id);
    expect(await client.paymentLinks.retrieve(link.id)).toEqual(link);

    const off = await client.paymentLinks.update(link.id, { active: false });
    expect(off).toMatchObject({ id: link.id, active: false });
    expect((await client.paymentLinks.retrieve(link.id)).active).toBe(false);
    expect((await client.paymentLinks.update(link.id, { active: true })).active).toBe(true);

    const fixed = await client.paymentLinks.create({ amount: "5.00" });
    expect((await client.paymentLinks.list()).data.map((l) => l.id)).toEqual([fixed.id, link.id]);
    const all: string[] = [];
    for await (const each of client.paymentLinks.list({ limit: 1 })) all.push(each.id);
    expect(all).toEqual([fixed.id, link.id]);
  });
});

describe("webhookEndpoints and deliveries", () => {
  test("create shows the secret once; list shows the endpoint without it; delete removes it", async () => {
    const { client } = await merchant();
    const created = await client.webhookEndpoints.create({ url: receiver.url });
    expect(created).toMatchObject({ object: "webhook_endpoint", url: receiver.url, status: "enabled" });
    expect(created.secret).toStartWith("whsec_");
    const { secret: _secret, ...shown } = created;
    expect((await client.webhookEndpoints.list()).data).toEqual([shown]);

    expect(await client.webhookEndpoints.delete(created.id)).toEqual({
      id: created.id,
      object: "webhook_endpoint",
      deleted: true,
    });
    expect((await client.webhookEndpoints.list()).data).toEqual([]);
    expect(await client.webhookEndpoints.delete(created.id).catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  test("test sends a ping; deliveries lists it; retry sends it again with the same webhook-id", async () => {
    const { client } = await merchant();
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url });
    const sent = await client.webhookEndpoints.test(endpoint.id);
    expect(sent.delivery).toMatchObject({ endpoint_id: endpoint.id, event_id: sent.event_id, event_type: "test" });

    const delivered = await waitFor(
      async () => (await client.deliveries.list(endpoint.id)).data.find((d) => d.status === "succeeded"),
      15_000,
      "the ping to be delivered",
    );
    expect(delivered).toMatchObject({ id: sent.delivery.id, attempt_count: 1 });
    expect(delivered.attempts[0]!.response_status).toBe(200);

    const retried = await client.deliveries.retry(endpoint.id, delivered.id);
    expect(retried).toMatchObject({ id: delivered.id, status: "pending" });
    await waitFor(
      () => receiver.hits.filter((h) => h.id === sent.event_id).length === 2,
      15_000,
      "the retried ping to arrive",
    );
    const after = await waitFor(
      async () => (await client.deliveries.list(endpoint.id)).data.find((d) => d.attempt_count === 2),
      15_000,
      "the retry's attempt to be recorded",
    );
    expect(after.status).toBe("succeeded");
  });

  test("deliveries.list walks every page", async () => {
    const { client } = await merchant();
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.webhookEndpoints.test(endpoint.id)).delivery.id);
    const seen: string[] = [];
    for await (const delivery of client.deliveries.list(endpoint.id, { limit: 2 })) seen.push(delivery.id);
    expect(seen).toEqual(ids.reverse());
  });
});

describe("events", () => {
  test("list (by type, every page) and retrieve answer the events as the API stores them", async () => {
    const { client, raw } = await merchant();
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url });
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) eventIds.push((await client.webhookEndpoints.test(endpoint.id)).event_id);

    const page = await client.events.list({ type: "test", limit: 2 });
    expect(page.has_more).toBe(true);
    expect(page.data.map((e) => e.id)).toEqual([eventIds[2]!, eventIds[1]!]);
    const all: string[] = [];
    for await (const event of client.events.list({ limit: 2 })) all.push(event.id);
    expect(all).toEqual([...eventIds].reverse());

    const event = await client.events.retrieve(eventIds[0]!);
    expect(event).toEqual((await raw(`/api/v1/events/${eventIds[0]}`)).json);
    expect(event.type).toBe("test");
    expect(await client.events.retrieve("evt_AAAAAAAAAAAAAAAAAAAAAAAA").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });
});
