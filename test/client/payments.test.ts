/**
 * The TypeScript client's payments against the real server: create with idempotency keys (the
 * caller's own and the one it makes up), retrieve, list, and every page through `for await`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IdempotencyError, type Payment, Stablegate } from "../../clients/typescript/src/index.ts";
import { type LossyRelay, startLossyRelay } from "../support/lossy-relay.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let relay: LossyRelay;

beforeAll(async () => {
  server = await startTestServer();
  relay = await startLossyRelay(server.url);
});

afterAll(async () => {
  relay?.stop();
  await server?.stop();
});

/** A client for a fresh account, so lists hold only what the test made. */
async function merchant(baseUrl = server.url) {
  const { apiKey } = await server.createAccount();
  return { client: new Stablegate({ apiKey, baseUrl }), raw: api(server.url, apiKey), apiKey };
}

describe("payments.create and retrieve", () => {
  test("creates a payment, and retrieve answers the same object", async () => {
    const { client } = await merchant();
    const payment = await client.payments.create(
      { amount: "25.00", reference: "order-1", metadata: { order_id: "1" } },
      { idempotencyKey: "order-1" },
    );
    expect(payment).toMatchObject({ object: "payment", status: "pending", amount: "25.00", amount_received: null });
    expect(payment.metadata).toEqual({ order_id: "1" });
    expect(await client.payments.retrieve(payment.id)).toEqual(payment);
  });

  test("the same key twice gives the same payment; the same key with another body is an IdempotencyError", async () => {
    const { client } = await merchant();
    const first = await client.payments.create({ amount: "10.00" }, { idempotencyKey: "order-2" });
    const again = await client.payments.create({ amount: "10.00" }, { idempotencyKey: "order-2" });
    expect(again.id).toBe(first.id);
    expect((await client.payments.list()).data.map((p) => p.id)).toEqual([first.id]);

    const refused = await client.payments.create({ amount: "11.00" }, { idempotencyKey: "order-2" }).catch((e) => e);
    expect(refused).toBeInstanceOf(IdempotencyError);
    expect(refused).toMatchObject({ status: 422, idempotencyKey: "order-2" });
    expect(refused.message).toBe("this Idempotency-Key was already used with a different request body");
    expect((await client.payments.list()).data).toHaveLength(1);
  });

  test("without a key, one is made up: an answer lost on the way is fetched again, and one payment exists", async () => {
    const { client, raw } = await merchant(relay.url);
    const lost = relay.lost;
    relay.loseAnswers(1);
    const payment = await client.payments.create({ amount: "12.00", reference: "lost answer" });
    // The first send created the payment and lost its answer; the resend got the replay.
    expect(relay.lost - lost).toBe(1);
    const listed = await raw("/api/v1/payments?limit=100");
    expect(listed.json.data.map((p: Payment) => p.id)).toEqual([payment.id]);
    expect(payment).toMatchObject({ amount: "12.00", reference: "lost answer", status: "pending" });
  });

  test("two creates without a key are two payments (a made-up key is new for every call)", async () => {
    const { client } = await merchant();
    const a = await client.payments.create({ amount: "1.00" });
    const b = await client.payments.create({ amount: "1.00" });
    expect(a.id).not.toBe(b.id);
    expect((await client.payments.list()).data).toHaveLength(2);
  });
});

describe("payments.list", () => {
  test("one page with its filters, newest first", async () => {
    const { client } = await merchant();
    const made: Payment[] = [];
    for (const amount of ["1.00", "2.00", "3.00"]) made.push(await client.payments.create({ amount }));
    const page = await client.payments.list({ limit: 2, status: "pending" });
    expect(page.object).toBe("list");
    expect(page.has_more).toBe(true);
    expect(page.data.map((p) => p.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect((await client.payments.list({ status: "confirmed" })).data).toEqual([]);
  });

  test("for await walks every page with starting_after, each payment once, newest first", async () => {
    const { client } = await merchant();
    const made: string[] = [];
    for (let i = 1; i <= 5; i++) made.push((await client.payments.create({ amount: `${i}.00` })).id);
    const seen: string[] = [];
    for await (const payment of client.payments.list({ limit: 2 })) seen.push(payment.id);
    expect(seen).toEqual(made.reverse());
  });
});
