/**
 * Every refusal the client turns into a typed error, each from a real answer: the server's own
 * (401, 404, 400, 409, 429), a reverse proxy's in front of it (502, a request id), and no answer
 * at all. None of them carries the API key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  AuthenticationError,
  IdempotencyError,
  NotFoundError,
  RateLimitError,
  ServerError,
  Stablegate,
  StablegateConnectionError,
  StablegateError,
  ValidationError,
} from "../../clients/typescript/src/index.ts";
import { createIdempotencyStore } from "../../src/idempotency/store.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { type LossyRelay, startLossyRelay } from "../support/lossy-relay.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let receiver: Receiver;
let relay: LossyRelay;
let proxy: ReturnType<typeof Bun.serve>;

/**
 * A reverse proxy in front of the server, as nginx would be: it tags every answer with a request
 * id, and answers 502 with its own HTML page when the path starts with /down (its upstream gone).
 */
function startProxy(upstream: string) {
  let served = 0;
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const requestId = `req_${++served}`;
      const url = new URL(req.url);
      if (url.pathname.startsWith("/down/"))
        return new Response("<html><body><h1>502 Bad Gateway</h1></body></html>", {
          status: 502,
          headers: { "content-type": "text/html", "x-request-id": requestId },
        });
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.text();
      const answer = await fetch(upstream + url.pathname + url.search, {
        method: req.method,
        headers: req.headers,
        body,
      });
      const headers = new Headers(answer.headers);
      headers.set("x-request-id", requestId);
      headers.delete("content-encoding");
      return new Response(await answer.text(), { status: answer.status, headers });
    },
  });
}

beforeAll(async () => {
  receiver = startReceiver();
  server = await startTestServer({ webhookAllowPrivate: true });
  relay = await startLossyRelay(server.url);
  proxy = startProxy(server.url);
});

afterAll(async () => {
  proxy?.stop(true);
  relay?.stop();
  await server?.stop();
  receiver?.stop();
});

/** The error a call throws (the test fails if it does not throw). */
async function refusal(call: Promise<unknown>): Promise<StablegateError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(StablegateError);
  return outcome.error;
}

/** Every way an error may end up in a log: none of them may show the key. */
function expectNoKey(error: StablegateError, apiKey: string) {
  for (const shown of [String(error), error.message, error.stack ?? "", JSON.stringify(error), Bun.inspect(error)])
    expect(shown).not.toContain(apiKey);
}

describe("errors from the server", () => {
  test("401: a wrong key is an AuthenticationError", async () => {
    const apiKey = `sk_live_${"x".repeat(32)}`;
    const client = new Stablegate({ apiKey, baseUrl: server.url });
    const error = await refusal(client.payments.list());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, retryAfter: null, requestId: null });
    expect(error.message).toBe((await api(server.url, apiKey)("/api/v1/payments")).json.error);
    expectNoKey(error, apiKey);
  });

  test("404: an unknown payment is a NotFoundError with the server's message", async () => {
    const { apiKey } = await server.createAccount();
    const client = new Stablegate({ apiKey, baseUrl: server.url });
    const id = `0x${"ab".repeat(32)}`;
    const error = await refusal(client.payments.retrieve(id));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.status).toBe(404);
    expect(error.message).toBe((await api(server.url, apiKey)(`/api/v1/payments/${id}`)).json.error);
    expectNoKey(error, apiKey);
  });

  test("400: a bad field is a ValidationError naming the field and its rule, and nothing is created", async () => {
    const { apiKey } = await server.createAccount();
    const client = new Stablegate({ apiKey, baseUrl: server.url });
    const error = await refusal(client.payments.create({ amount: "25" }, { idempotencyKey: "bad-amount" }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 400, idempotencyKey: "bad-amount" });
    expect(error.message).toStartWith("amount ");
    const raw = await api(server.url, apiKey)("/api/v1/payments", { body: { amount: "25" } });
    expect(error.message).toBe(raw.json.error);
    expect((await client.payments.list()).data).toEqual([]);
  });

  test("409: a key whose first request is still being processed is an IdempotencyError", async () => {
    const { apiKey, accountId } = await server.createAccount();
    const client = new Stablegate({ apiKey, baseUrl: server.url, maxNetworkRetries: 0 });
    // The claim a request holds while it runs (or held when its server died less than a minute ago).
    await createIdempotencyStore(server.running.db).claim(accountId, "order-409", "in flight", Date.now());
    const error = await refusal(client.payments.create({ amount: "5.00" }, { idempotencyKey: "order-409" }));
    expect(error).toBeInstanceOf(IdempotencyError);
    expect(error).toMatchObject({ status: 409, idempotencyKey: "order-409" });
    expect(error.message).toBe("a request with this Idempotency-Key is still in progress; retry shortly");
    expect((await client.payments.list()).data).toEqual([]);
  });

  test("a 409 is asked again after a pause: once the first request is done, the create goes through", async () => {
    const { apiKey, accountId } = await server.createAccount();
    const idempotency = createIdempotencyStore(server.running.db);
    const claimedAt = Date.now();
    await idempotency.claim(accountId, "order-409-retry", "in flight", claimedAt);
    const statuses: number[] = [];
    const client = new Stablegate({
      apiKey,
      baseUrl: server.url,
      // The real fetch, watched: once the first answer (the 409) is in, the claim's request ends
      // without storing anything, as a failed one does, which frees the key.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        statuses.push(response.status);
        if (statuses.length === 1) await idempotency.release(accountId, "order-409-retry", claimedAt);
        return response;
      },
    });
    const payment = await client.payments.create({ amount: "6.00" }, { idempotencyKey: "order-409-retry" });
    expect(statuses).toEqual([409, 201]);
    expect((await client.payments.list()).data.map((p) => p.id)).toEqual([payment.id]);
  });

  test("429: too many test sends is a RateLimitError with the Retry-After in seconds", async () => {
    const { apiKey } = await server.createAccount();
    const client = new Stablegate({ apiKey, baseUrl: server.url });
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url });
    let error: StablegateError | undefined;
    // The burst is 10 (docs/webhooks.md), refilled one every 6 s: sends soon after it are refused.
    for (let sent = 0; sent < 20 && !error; sent++)
      await client.webhookEndpoints.test(endpoint.id).catch((e) => {
        error = e;
      });
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error!.status).toBe(429);
    expect(error!.retryAfter).toBeGreaterThan(0);
    expect(error!.message).toContain("too many test events");
  });
});

describe("errors on the way to the server", () => {
  test("a proxy's request id is on the error; its 502 page is a ServerError with the status as message", async () => {
    const { apiKey } = await server.createAccount();
    const viaProxy = new Stablegate({ apiKey, baseUrl: proxy.url.href });
    const notFound = await refusal(viaProxy.events.retrieve("evt_AAAAAAAAAAAAAAAAAAAAAAAA"));
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(notFound.requestId).toMatch(/^req_\d+$/);

    const down = new Stablegate({ apiKey, baseUrl: new URL("/down", proxy.url).href });
    const error = await refusal(down.payments.list());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, message: "HTTP 502 Bad Gateway" });
    expect(error.requestId).toMatch(/^req_\d+$/);
  });

  test("nobody listening is a StablegateConnectionError without a status or the key", async () => {
    const apiKey = (await server.createAccount()).apiKey;
    const client = new Stablegate({ apiKey, baseUrl: `http://127.0.0.1:${await freePort()}`, maxNetworkRetries: 0 });
    const error = await refusal(client.payments.retrieve(`0x${"cd".repeat(32)}`));
    expect(error).toBeInstanceOf(StablegateConnectionError);
    expect(error.status).toBeNull();
    expect(error.message).toStartWith("no answer from http://127.0.0.1:");
    expectNoKey(error, apiKey);
  });

  test("a write without an Idempotency-Key whose answer is lost is not sent again", async () => {
    const { apiKey } = await server.createAccount();
    const client = new Stablegate({ apiKey, baseUrl: relay.url });
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url });
    const lost = relay.lost;
    relay.loseAnswers(1);
    const error = await refusal(client.webhookEndpoints.test(endpoint.id));
    expect(error).toBeInstanceOf(StablegateConnectionError);
    expect(relay.lost - lost).toBe(1);
    // It did reach the server once: one test event was queued, not two.
    expect((await client.events.list({ type: "test" })).data).toHaveLength(1);
  });
});
