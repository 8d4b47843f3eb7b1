/**
 * Webhook delivery end to end: the real server in-process, real HTTP to local receivers
 * (Bun.serve, plus raw TCP for answers that are not HTTP), the real outbox and worker. Timing is
 * shortened through ServerOptions: a 500 ms send timeout and a [0, 200, 400, 800] ms schedule,
 * so a delivery gets four attempts over about 1.4 s. Payments expire after 1 s, which gives
 * payment events without a chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import type { Socket, TCPSocketListener } from "bun";
import { Webhook } from "standardwebhooks";
import { createLedger } from "../../src/chain/ledger.ts";
import { createChainStore } from "../../src/chain/store.ts";
import { createEventStore } from "../../src/events/store.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createLifecycle } from "../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { type Api, type TestServer, api, isErrorBody, startTestServer } from "../support/server.ts";
import { waitFor, webhookWorkerRanSince } from "../support/wait.ts";

const TIMEOUT_MS = 500;
const SCHEDULE = [0, 200, 400, 800] as const;
/** Four attempts, the jittered gaps (at most 1.1 x 1.4 s) and a timeout each, with room to spare. */
const EXHAUSTED_MS = 1.1 * (200 + 400 + 800) + 4 * TIMEOUT_MS + 1_000;
const PAYMENT_WINDOW_MS = 1_000;
const UNLIMITED = { burst: 100_000, perSecond: 100_000 };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// ---------------------------------------------------------------------------------------------
// Receivers

interface Hit {
  at: number;
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** What a hook answers to its n-th request (n from 1). */
type Behaviour = (n: number, req: Request) => Response | Promise<Response>;

interface Hook {
  url: string;
  hits: Hit[];
  behave: Behaviour;
  /** Requests that are being held open right now (see `hang`). */
  open: number;
}

const ok: Behaviour = () => new Response("ok");
const status =
  (code: number, headers: Record<string, string> = {}): Behaviour =>
  () =>
    new Response(`status ${code}`, { status: code, headers });
/** Answers with `steps[n - 1]`, repeating the last one. */
const sequence =
  (...steps: Behaviour[]): Behaviour =>
  (n, req) =>
    steps[Math.min(n, steps.length) - 1]!(n, req);

let hookCount = 0;
const hooks = new Map<string, Hook>();
const holding = new Set<() => void>();

/** How long `hang` holds a request the client does not give up on. */
const HOLD_MS = 5_000;

/** Holds the request open until the client gives up (or `holdMs` pass), then answers 200. */
function hang(hook: () => Hook, holdMs = HOLD_MS): Behaviour {
  return (_n, req) =>
    new Promise<Response>((resolve) => {
      hook().open++;
      const release = () => {
        if (!holding.delete(release)) return;
        clearTimeout(timer);
        hook().open--;
        resolve(new Response("too late"));
      };
      const timer = setTimeout(release, holdMs);
      holding.add(release);
      req.signal.addEventListener("abort", release);
    });
}

let receiver: ReturnType<typeof Bun.serve>;
let redirectTarget: ReturnType<typeof Bun.serve>;
const redirectTargetHits: string[] = [];

function newHook(behave: Behaviour = ok): Hook {
  const path = `/hook/${++hookCount}`;
  const hook: Hook = { url: `http://127.0.0.1:${receiver.port}${path}`, hits: [], behave, open: 0 };
  hooks.set(path, hook);
  return hook;
}

/** A TCP listener that answers every request with `reply` (null: says nothing) and hangs up. */
function rawListener(reply: string | null) {
  const state = { requests: 0, listener: null as TCPSocketListener<undefined> | null };
  state.listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket: Socket<undefined>) {
        state.requests++;
        if (reply !== null) socket.write(reply);
        socket.end();
      },
    },
  });
  return state;
}
let garbage: ReturnType<typeof rawListener>;
let hangup: ReturnType<typeof rawListener>;

// ---------------------------------------------------------------------------------------------
// Server and API helpers

let server: TestServer;

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const hook = hooks.get(new URL(req.url).pathname);
      const body = await req.text();
      if (!hook) return new Response("no such hook", { status: 404 });
      const headers = Object.fromEntries(req.headers.entries());
      hook.hits.push({ at: Date.now(), id: headers["webhook-id"] ?? "", headers, body });
      return hook.behave(hook.hits.length, req);
    },
  });
  redirectTarget = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      redirectTargetHits.push(await req.text());
      return new Response("ok");
    },
  });
  garbage = rawListener("SSH-2.0-OpenSSH_9.6 \u0000\u0001\u0002 this is not HTTP\r\n\r\n");
  hangup = rawListener(null);
  server = await startTestServer(
    { webhookAllowPrivate: true, paymentWindowMs: PAYMENT_WINDOW_MS },
    // Test events fill backlogs here, hundreds at a time; the limits have their own tests (manual-sends.test.ts).
    { webhookTimeoutMs: TIMEOUT_MS, webhookSchedule: SCHEDULE, webhookLimits: { test: UNLIMITED, retry: UNLIMITED } },
  );
});

afterAll(async () => {
  for (const release of [...holding]) release();
  await server?.stop();
  receiver?.stop(true);
  redirectTarget?.stop(true);
  garbage?.listener?.stop(true);
  hangup?.listener?.stop(true);
});

interface Merchant {
  api: Api;
  accountId: string;
}

function merchant(name: string, on: TestServer = server): Merchant {
  const account = on.createAccount(name);
  return { api: api(on.url, account.apiKey), accountId: account.accountId };
}

/** Waits until the worker has run past the moment a first retry of a send at `at` would be due. */
const pastFirstRetry = (at: number) => webhookWorkerRanSince(server.running, at + 1.1 * SCHEDULE[1]);
const lastHit = (hook: Hook) => Math.max(...hook.hits.map((h) => h.at));

interface Endpoint {
  id: string;
  secret: string;
}

async function register(m: Merchant, url: string): Promise<Endpoint> {
  const res = await m.api("/api/v1/webhook_endpoints", { body: { url } });
  expect(res.status).toBe(201);
  return { id: res.json.id, secret: res.json.secret };
}

/** Queues a signed `test` event to one endpoint; returns its event id and delivery id. */
async function sendTest(m: Merchant, endpoint: Endpoint): Promise<{ eventId: string; deliveryId: string }> {
  const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" });
  expect(res.status).toBe(202);
  return { eventId: res.json.event_id, deliveryId: res.json.delivery.id };
}

async function deliveries(m: Merchant, endpoint: Endpoint): Promise<any[]> {
  const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=100`);
  expect(res.status).toBe(200);
  return res.json.data;
}

async function delivery(m: Merchant, endpoint: Endpoint, deliveryId: string): Promise<any> {
  return (await deliveries(m, endpoint)).find((d) => d.id === deliveryId);
}

/** Waits until the delivery has left `pending` (succeeded, failed or canceled). */
const settled = (m: Merchant, endpoint: Endpoint, deliveryId: string, timeoutMs = EXHAUSTED_MS) =>
  waitFor(
    async () => {
      const d = await delivery(m, endpoint, deliveryId);
      return d && d.status !== "pending" ? d : undefined;
    },
    timeoutMs,
    `delivery ${deliveryId} to settle`,
  );

/** The manual Standard Webhooks check: base64 HMAC-SHA256 of "id.timestamp.body" under the secret's bytes. */
function manualSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

function expectSigned(hit: Hit, secret: string) {
  expect(hit.headers["webhook-signature"]).toBe(manualSignature(secret, hit.headers["webhook-id"]!, hit.headers["webhook-timestamp"]!, hit.body));
  expect(() => new Webhook(secret).verify(hit.body, hit.headers)).not.toThrow();
}

/** The exact text of `data.payment` in an event body: `{...,"data":{"payment":<text>}}`. */
function rawPayment(body: string): string {
  const marker = `"data":{"payment":`;
  const at = body.indexOf(marker);
  expect(at).toBeGreaterThan(0);
  expect(body.endsWith("}}")).toBe(true);
  return body.slice(at + marker.length, -2);
}

// ---------------------------------------------------------------------------------------------

describe("a test event to a healthy endpoint", () => {
  let m: Merchant;
  let endpoint: Endpoint;
  let hook: Hook;
  let sent: { eventId: string; deliveryId: string };
  let sentAt: number;

  beforeAll(async () => {
    m = merchant("Signed");
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
    expect(hit.headers["webhook-signature"]).toBe(manualSignature(endpoint.secret, hit.id, hit.headers["webhook-timestamp"]!, hit.body));
  });

  test("a changed body, id or timestamp, or another endpoint's secret, fails verification", async () => {
    const hit = hook.hits[0]!;
    const wh = new Webhook(endpoint.secret);
    expect(() => wh.verify(hit.body.replace('"test"', '"tesT"'), hit.headers)).toThrow();
    expect(() => wh.verify(hit.body, { ...hit.headers, "webhook-id": `${hit.id}x` })).toThrow();
    expect(() => wh.verify(hit.body, { ...hit.headers, "webhook-timestamp": String(Number(hit.headers["webhook-timestamp"]) + 1) })).toThrow();
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
    expect(d).toMatchObject({ object: "webhook_delivery", endpoint_id: endpoint.id, event_id: sent.eventId, event_type: "test", status: "succeeded", attempt_count: 1, next_attempt_at: null });
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

describe("exactly once to a healthy endpoint", () => {
  test("twenty events arrive once each and are never sent again", async () => {
    const m = merchant("Healthy");
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    const sent = await Promise.all(Array.from({ length: 20 }, () => sendTest(m, endpoint)));
    await waitFor(() => hook.hits.length >= 20, 5_000, "twenty deliveries");
    // Past the whole retry schedule: a second copy would have been sent by now.
    await webhookWorkerRanSince(server.running, lastHit(hook) + 1.1 * (SCHEDULE[1] + SCHEDULE[2] + SCHEDULE[3]));
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
    const m = merchant("Flaky");
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
    expect(Date.parse(second.next_retry_at) - Date.parse(second.attempted_at)).toBeGreaterThanOrEqual(0.9 * SCHEDULE[2]);
    expect(Date.parse(second.attempted_at)).toBeGreaterThanOrEqual(Date.parse(first.next_retry_at));
    expect(Date.parse(third.attempted_at)).toBeGreaterThanOrEqual(Date.parse(second.next_retry_at));
  });

  test("after a timeout: the hanging attempt is cut at the timeout and retried with the same webhook-id", async () => {
    const m = merchant("Slow");
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
    expect(first.error).toMatch(/no answer within 0\.5 s/);
    expect(first.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
    expect(first.duration_ms).toBeLessThan(HOLD_MS); // cut by the sender, not let go by the receiver
    expect(first.next_retry_at).toMatch(ISO_MS);
    expect(second).toMatchObject({ response_status: 200, error: null });
    await waitFor(() => hook.open === 0, 2_000, "the held request to be released (the sender hung up)");
  });

  test("an endpoint that always fails gets the whole schedule, then the delivery fails", async () => {
    const m = merchant("Down");
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
    const m = merchant("Busy");
    const hook = newHook(sequence(status(429, { "retry-after": "2" }), ok));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const pending = await waitFor(async () => {
      const d = await delivery(m, endpoint, sent.deliveryId);
      return d?.attempt_count === 1 ? d : undefined;
    }, 5_000, "the first attempt");
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
    const m = merchant("Maintenance");
    const hook = newHook(() => new Response("down", { status: 503, headers: { "retry-after": new Date(Date.now() + 4_000).toUTCString() } }));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const pending = await waitFor(async () => {
      const d = await delivery(m, endpoint, sent.deliveryId);
      return d?.attempt_count === 1 ? d : undefined;
    }, 5_000, "the first attempt");
    const [first] = pending.attempts;
    expect(first.response_status).toBe(503);
    // The date has one-second resolution, so up to a second of the four may be lost.
    expect(Date.parse(first.next_retry_at) - Date.parse(first.attempted_at)).toBeGreaterThanOrEqual(2_900);
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" })).status).toBe(200);
  });
});

describe("manual retry", () => {
  test("sends a succeeded delivery again, with the same webhook-id and body", async () => {
    const m = merchant("Replay");
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    await settled(m, endpoint, sent.deliveryId);
    expect(hook.hits).toHaveLength(1);

    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id: sent.deliveryId, event_id: sent.eventId, status: "pending" });
    await waitFor(() => hook.hits.length === 2, 5_000, "the manual retry to arrive");
    expect(hook.hits[1]!.id).toBe(sent.eventId);
    expect(hook.hits[1]!.body).toBe(hook.hits[0]!.body);
    expectSigned(hook.hits[1]!, endpoint.secret);
    const d = await waitFor(async () => {
      const found = await delivery(m, endpoint, sent.deliveryId);
      return found?.attempt_count === 2 && found.status === "succeeded" ? found : undefined;
    }, 5_000, "the retry to be recorded");
    expect(d.attempts).toHaveLength(2);
  });

  test("revives a failed delivery once the receiver is fixed", async () => {
    const m = merchant("Revived");
    const hook = newHook(status(500));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    expect((await settled(m, endpoint, sent.deliveryId)).status).toBe("failed");
    hook.behave = ok;
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" });
    expect(res.status).toBe(202);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: SCHEDULE.length + 1 });
    expect(new Set(hook.hits.map((h) => h.id))).toEqual(new Set([sent.eventId]));
    expect(hook.hits).toHaveLength(SCHEDULE.length + 1);
  });

  test("an unknown delivery id is 404", async () => {
    const m = merchant("Unknown");
    const endpoint = await register(m, newHook().url);
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/whd_doesnotexist/retry`, { method: "POST" });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("410 Gone", () => {
  test("disables the endpoint, cancels what was queued for it, and nothing more is sent", async () => {
    const m = merchant("Gone");
    // The first event is asked to come back in a minute; the second is answered 410.
    const hook = newHook(sequence(status(429, { "retry-after": "60" }), status(410)));
    const endpoint = await register(m, hook.url);
    const waiting = await sendTest(m, endpoint);
    await waitFor(async () => (await delivery(m, endpoint, waiting.deliveryId))?.attempt_count === 1, 5_000, "the 429");
    const gone = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, gone.deliveryId);

    expect(d).toMatchObject({ status: "failed", attempt_count: 1 });
    expect(d.attempts[0]).toMatchObject({ response_status: 410, next_retry_at: null });
    expect((await delivery(m, endpoint, waiting.deliveryId)).status).toBe("canceled");

    const list = await m.api("/api/v1/webhook_endpoints");
    expect(list.json.data.find((e: { id: string }) => e.id === endpoint.id).status).toBe("disabled");

    const test410 = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" });
    expect(test410.status).toBe(400);
    expect(isErrorBody(test410.json)).toBe(true);
    const retry = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${gone.deliveryId}/retry`, { method: "POST" });
    expect(retry.status).toBe(400);

    // A payment event of this account is not queued for the disabled endpoint.
    const payment = await m.api("/api/v1/payments", { body: { amount: "1.00" } });
    expect(payment.status).toBe(201);
    await waitFor(async () => (await m.api(`/api/v1/payments/${payment.json.id}`)).json.status === "expired", 5_000, "the payment to expire");
    // The event and its deliveries are written with the expiry: they are due by now.
    await webhookWorkerRanSince(server.running);
    expect(hook.hits).toHaveLength(2);
    expect(await deliveries(m, endpoint)).toHaveLength(2);
  });
});

describe("redirects", () => {
  test("a 302 is not followed: the target receives nothing and the attempt says redirect", async () => {
    const m = merchant("Redirect");
    const target = `http://127.0.0.1:${redirectTarget.port}/landing`;
    const hook = newHook(status(302, { location: target }));
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d.status).toBe("failed");
    expect(hook.hits).toHaveLength(SCHEDULE.length);
    for (const a of d.attempts) {
      expect(a.response_status).toBe(302);
      expect(a.error).toMatch(/redirect/i);
    }
    expect(redirectTargetHits).toHaveLength(0);
  });
});

describe("deleting an endpoint", () => {
  test("cancels its pending deliveries; nothing more arrives", async () => {
    const m = merchant("Deleter");
    const hook = newHook(status(429, { "retry-after": "1" }));
    const endpoint = await register(m, hook.url);
    const a = await sendTest(m, endpoint);
    const b = await sendTest(m, endpoint);
    await waitFor(() => hook.hits.length === 2, 5_000, "both first attempts");
    await waitFor(async () => (await deliveries(m, endpoint)).every((d) => d.attempt_count === 1), 5_000, "both attempts recorded");
    const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);

    const states = server.running.db
      .query<{ id: string; state: string; next_attempt_at: number | null }, [string]>("SELECT id, state, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ?")
      .all(endpoint.id);
    expect(states.map((s) => s.id).sort()).toEqual([a.deliveryId, b.deliveryId].sort());
    for (const s of states) expect(s).toMatchObject({ state: "canceled", next_attempt_at: null });
    await webhookWorkerRanSince(server.running, lastHit(hook) + 1_000); // past the Retry-After
    expect(hook.hits).toHaveLength(2);
    // The deleted endpoint is gone from every route.
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries`)).status).toBe(404);
    expect((await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" })).status).toBe(404);
  });
});

describe("receivers that misbehave", () => {
  describe("while hanging sends hold their slots", () => {
    // A server that waits a minute for an answer: as long as no hanging send has been let go,
    // whatever else arrived got past them, however slow the machine.
    const PATIENT_MS = 60_000;
    let patient: TestServer;
    beforeAll(async () => {
      patient = await startTestServer(
        { webhookAllowPrivate: true, paymentWindowMs: PAYMENT_WINDOW_MS },
        { webhookTimeoutMs: PATIENT_MS, webhookSchedule: SCHEDULE, webhookLimits: { test: UNLIMITED, retry: UNLIMITED } },
      );
    });
    afterAll(async () => {
      for (const release of [...holding]) release();
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
      const m = merchant("Mixed", patient);
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
      for (const release of [...holding]) release();
    });

    test("a hanging receiver with a long backlog does not stall a healthy endpoint of the same account", async () => {
      // More queued for the hanging endpoint than the worker reads in one go (4 x 32 due rows),
      // and all of it older than the healthy endpoint's events. (bench/webhooks.ts --hanging
      // measures how long the healthy endpoint waits.)
      const m = merchant("Backlog", patient);
      const { slow, fast, slowEndpoint, fastEndpoint } = await slowAndFast(m);
      for (let i = 0; i < 200; i += 50) await Promise.all(Array.from({ length: 50 }, () => sendTest(m, slowEndpoint)));
      await waitFor(() => slow.open >= 4, 10_000, "the hanging sends to be in flight");

      const sent = await Promise.all(Array.from({ length: 5 }, () => sendTest(m, fastEndpoint)));
      await waitFor(() => fast.hits.length === 5, 10_000, "the healthy endpoint's events");
      expect(slow.open).toBe(slow.hits.length);
      expect(new Set(fast.hits.map((h) => h.id))).toEqual(new Set(sent.map((s) => s.eventId)));
      await m.api(`/api/v1/webhook_endpoints/${slowEndpoint.id}`, { method: "DELETE" });
      for (const release of [...holding]) release();
    }, 20_000);
  });

  test("one endpoint's backlog does not hold up another merchant's endpoint", async () => {
    const busy = merchant("Busy");
    const quiet = merchant("Quiet");
    const busyHook = newHook();
    const quietHook = newHook();
    await register(busy, busyHook.url);
    const quietEndpoint = await register(quiet, quietHook.url);
    // A burst of events through the outbox, as a batch of payment changes would write them.
    const events = createEventStore(server.running.db, randomIds);
    const BURST = 1_500;
    server.running.db.transaction(() => {
      for (let i = 0; i < BURST; i++) {
        const id = randomIds.prefixed("evt");
        const now = Date.now();
        events.insert({ id, account_id: busy.accountId, type: "test", payment_id: null, payload: JSON.stringify({ id, object: "event", type: "test", created_at: new Date(now).toISOString(), data: {} }), created_at: now });
      }
    })();
    await waitFor(() => busyHook.hits.length > 0, 5_000, "the burst to start arriving");

    const sent = await sendTest(quiet, quietEndpoint);
    await waitFor(() => quietHook.hits.length === 1, 30_000, "the quiet merchant's event");
    const busyDoneAt = busyHook.hits.length;
    await waitFor(() => busyHook.hits.length === BURST, 60_000, "the burst to finish");
    expect(quietHook.hits[0]!.id).toBe(sent.eventId);
    expect(busyDoneAt).toBeLessThan(BURST); // it did not wait for the burst to drain
  }, 90_000);

  test("a huge response body is cut off: the delivery succeeds quickly and the server is fine", async () => {
    const m = merchant("Chatty");
    const chunk = new Uint8Array(64 * 1024).fill(120);
    let written = 0;
    const hook = newHook(
      () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              if (written >= 256 * 1024 * 1024) return controller.close();
              written += chunk.length;
              controller.enqueue(chunk);
            },
          }),
          { headers: { "content-type": "text/plain" } },
        ),
    );
    const endpoint = await register(m, hook.url);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId, 3_000);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
    expect(d.attempts[0]).toMatchObject({ response_status: 200, error: null });
    expect(d.attempts[0].duration_ms).toBeLessThan(TIMEOUT_MS);
    expect(written).toBeLessThan(256 * 1024 * 1024); // the sender hung up long before the end
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    const after = await sendTest(m, endpoint);
    expect((await settled(m, endpoint, after.deliveryId, 3_000)).status).toBe("succeeded");
  });

  test("an answer that is not HTTP is a failed attempt, retried on schedule", async () => {
    const m = merchant("Garbage");
    const endpoint = await register(m, `http://127.0.0.1:${garbage.listener!.port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length });
    for (const a of d.attempts) {
      expect(a.response_status).toBeNull();
      expect(typeof a.error).toBe("string");
      expect(a.error.length).toBeGreaterThan(0);
    }
    expect(garbage.requests).toBe(SCHEDULE.length);
  });

  test("a connection closed without an answer is a failed attempt, retried on schedule", async () => {
    const m = merchant("Hangup");
    const endpoint = await register(m, `http://127.0.0.1:${hangup.listener!.port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await settled(m, endpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "failed", attempt_count: SCHEDULE.length });
    for (const a of d.attempts) {
      expect(a.response_status).toBeNull();
      expect(a.error).toBeTruthy();
      expect(a.duration_ms).toBeLessThan(TIMEOUT_MS);
    }
    expect(hangup.requests).toBe(SCHEDULE.length);
  });

  test("nothing listening on the port is a failed attempt with the connection error", async () => {
    const m = merchant("Closed");
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("x") });
    const port = closed.port;
    closed.stop(true);
    const endpoint = await register(m, `http://127.0.0.1:${port}/hook`);
    const sent = await sendTest(m, endpoint);
    const d = await waitFor(async () => {
      const found = await delivery(m, endpoint, sent.deliveryId);
      return found?.attempt_count >= 1 ? found : undefined;
    }, 5_000, "the first attempt");
    expect(d.attempts.at(-1).response_status).toBeNull();
    expect(d.attempts.at(-1).error).toMatch(/ECONNREFUSED|refused/i);
    await m.api(`/api/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE" });
  });
});

describe("payment events", () => {
  test("data.payment is the payment exactly as GET returns it at that moment, metadata untouched", async () => {
    const m = merchant("Payments");
    const hook = newHook();
    const endpoint = await register(m, hook.url);
    // Key order, escapes and string contents the server must keep byte for byte; only the
    // whitespace between tokens goes (README: metadata).
    const metadataText = `{ "zeta" : "last",\n  "alpha": "caf\\u00e9 \\"quoted\\"", "emoji": "😀", "n": "007" }`;
    const storedMetadata = `{"zeta":"last","alpha":"caf\\u00e9 \\"quoted\\"","emoji":"😀","n":"007"}`;
    const created = await m.api("/api/v1/payments", { body: `{"amount":"12.50","reference":"order-9","metadata":${metadataText}}` });
    expect(created.status).toBe(201);
    const id: string = created.json.id;

    // The expiry loop moves it to expired: a payment.expired event.
    const expiredHit = await waitFor(() => hook.hits.find((h) => JSON.parse(h.body).type === "payment.expired"), 5_000, "payment.expired");
    const atExpiry = await m.api(`/api/v1/payments/${id}`);
    expect(atExpiry.status).toBe(200);
    expectSigned(expiredHit, endpoint.secret);
    const expiredEvent = JSON.parse(expiredHit.body);
    expect(Object.keys(expiredEvent)).toEqual(["id", "object", "type", "created_at", "data"]);
    expect(Object.keys(expiredEvent.data)).toEqual(["payment"]);
    expect(expiredHit.id).toBe(expiredEvent.id);
    const expiredText = rawPayment(expiredHit.body);
    expect(expiredText).toBe(atExpiry.text);
    expect(expiredText).toContain(`"metadata":${storedMetadata}}`);
    expect(JSON.parse(expiredText).metadata).toEqual(JSON.parse(metadataText));

    // Late funds to the deposit address, through the same ledger and lifecycle the watcher uses:
    // the payment becomes underpaid and the expired event's copy is now out of date.
    const db = server.running.db;
    const payments = createPaymentStore(db);
    const chain = createChainStore(db);
    const lifecycle = createLifecycle({
      payments,
      chain,
      events: createEventStore(db, randomIds),
      clock: systemClock,
      ids: randomIds,
      view: { baseUrl: server.config.baseUrl, chainName: server.config.chain.name },
    });
    const ledger = createLedger({ chain, payments, lifecycle, clock: systemClock });
    const credited = db.transaction(() =>
      ledger.record(
        {
          txHash: `0x${"ab".repeat(32)}`,
          logIndex: 3,
          from: "0x2222222222222222222222222222222222222222",
          to: created.json.deposit_address,
          amount: 4_250_000n,
          blockNumber: 42,
          blockHash: `0x${"cd".repeat(32)}`,
        },
        true,
      ),
    )();
    expect(credited).toBe(true);

    const underpaidHit = await waitFor(() => hook.hits.find((h) => JSON.parse(h.body).type === "payment.underpaid"), 3_000, "payment.underpaid");
    const now = await m.api(`/api/v1/payments/${id}`);
    expectSigned(underpaidHit, endpoint.secret);
    expect(rawPayment(underpaidHit.body)).toBe(now.text);
    expect(now.json).toMatchObject({ status: "underpaid", amount_received: "4.25" });

    // The expired event still matches the payment except where it changed since, and there it
    // holds the event's own state.
    const then = JSON.parse(expiredText);
    const changed = Object.keys(now.json).filter((k) => JSON.stringify(now.json[k]) !== JSON.stringify(then[k]));
    expect(changed.sort()).toEqual(["amount_received", "status", "transfers", "updated_at"]);
    expect(Object.keys(then)).toEqual(Object.keys(now.json));
    expect(then).toMatchObject({ status: "expired", amount_received: null, transfers: [] });
    expect(`payment.${then.status}`).toBe(expiredEvent.type);
    expect(Date.parse(then.updated_at)).toBeLessThanOrEqual(Date.parse(expiredEvent.created_at));

    // Both events reached this endpoint exactly once.
    await pastFirstRetry(lastHit(hook));
    expect(hook.hits.map((h) => JSON.parse(h.body).type).sort()).toEqual(["payment.expired", "payment.underpaid"]);
    const list = await deliveries(m, endpoint);
    expect(list.map((d) => d.event_type).sort()).toEqual(["payment.expired", "payment.underpaid"]);
    for (const d of list) expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
  });

  test("an event goes to every live endpoint of the account and to no other account", async () => {
    const m = merchant("Fanout");
    const other = merchant("Bystander");
    const hooksOfM = [newHook(), newHook(), newHook()];
    const endpoints = await Promise.all(hooksOfM.map((h) => register(m, h.url)));
    const otherHook = newHook();
    await register(other, otherHook.url);
    const deleted = newHook();
    const deletedEndpoint = await register(m, deleted.url);
    expect((await m.api(`/api/v1/webhook_endpoints/${deletedEndpoint.id}`, { method: "DELETE" })).status).toBe(200);

    expect((await m.api("/api/v1/payments", { body: { amount: "3.00" } })).status).toBe(201);
    await waitFor(() => hooksOfM.every((h) => h.hits.length === 1), 5_000, "the event at every endpoint");
    const ids = new Set(hooksOfM.map((h) => h.hits[0]!.id));
    expect(ids.size).toBe(1); // one event, one webhook-id, whichever endpoint gets it
    hooksOfM.forEach((h, i) => expectSigned(h.hits[0]!, endpoints[i]!.secret));
    await webhookWorkerRanSince(server.running);
    expect(otherHook.hits).toHaveLength(0);
    expect(deleted.hits).toHaveLength(0);
  });
});

describe("GET /api/v1/events", () => {
  let m: Merchant;
  let other: Merchant;

  beforeAll(async () => {
    m = merchant("Ledger");
    other = merchant("Neighbour");
    for (let i = 0; i < 5; i++) expect((await m.api("/api/v1/payments", { body: { amount: `${i + 1}.00` } })).status).toBe(201);
    for (let i = 0; i < 2; i++) expect((await other.api("/api/v1/payments", { body: { amount: "9.00" } })).status).toBe(201);
    const count = (accountId: string) =>
      server.running.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM events WHERE account_id = ? AND type = 'payment.expired'").get(accountId)!.n;
    await waitFor(() => count(m.accountId) === 5 && count(other.accountId) === 2, 5_000, "the payments to expire");
  });

  test("newest first, paginated with starting_after, every event once", async () => {
    const expected = server.running.db
      .query<{ id: string }, [string]>("SELECT id FROM events WHERE account_id = ? AND type != 'test' ORDER BY seq DESC")
      .all(m.accountId)
      .map((r) => r.id);
    expect(expected).toHaveLength(5);

    const seen: any[] = [];
    const pages: boolean[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await m.api(`/api/v1/events?limit=2${cursor ? `&starting_after=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.json.object).toBe("list");
      expect(res.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.data);
      pages.push(res.json.has_more);
      if (!res.json.has_more) break;
      cursor = res.json.data.at(-1).id;
    }
    expect(pages).toEqual([true, true, false]);
    expect(seen.map((e) => e.id)).toEqual(expected);
    for (let i = 1; i < seen.length; i++) expect(Date.parse(seen[i - 1].created_at)).toBeGreaterThanOrEqual(Date.parse(seen[i].created_at));
    for (const e of seen) {
      expect(Object.keys(e)).toEqual(["id", "object", "type", "created_at", "data"]);
      expect(e.type).toBe("payment.expired");
    }
  });

  test("never another account's events, by list, by id or as a cursor", async () => {
    const mine = (await m.api("/api/v1/events?limit=100")).json.data.map((e: { id: string }) => e.id);
    const theirs = (await other.api("/api/v1/events?limit=100")).json.data.map((e: { id: string }) => e.id);
    expect(mine).toHaveLength(5);
    expect(theirs).toHaveLength(2);
    expect(mine.filter((id: string) => theirs.includes(id))).toEqual([]);
    const theirPayments = new Set((await other.api("/api/v1/payments?limit=100")).json.data.map((p: { id: string }) => p.id));
    for (const e of (await m.api("/api/v1/events?limit=100")).json.data) expect(theirPayments.has(e.data.payment.id)).toBe(false);

    const byId = await m.api(`/api/v1/events/${theirs[0]}`);
    expect(byId.status).toBe(404);
    expect(isErrorBody(byId.json)).toBe(true);
    expect((await other.api(`/api/v1/events/${theirs[0]}`)).status).toBe(200);
    const asCursor = await m.api(`/api/v1/events?starting_after=${theirs[0]}`);
    expect(asCursor.status).toBe(400);
    expect(asCursor.text).not.toContain(theirs[1]);
  });
});

describe("another account's webhook ids", () => {
  test("are 404 on every webhook route, and nothing is sent or changed", async () => {
    const alice = merchant("Alice");
    const mallory = merchant("Mallory");
    const aliceHook = newHook();
    const aliceEndpoint = await register(alice, aliceHook.url);
    const sent = await sendTest(alice, aliceEndpoint);
    await settled(alice, aliceEndpoint, sent.deliveryId);
    const malloryEndpoint = await register(mallory, newHook().url);

    const as = mallory.api;
    const attempts = [
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/deliveries`),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${malloryEndpoint.id}/deliveries/${sent.deliveryId}/retry`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}/test`, { method: "POST" }),
      as(`/api/v1/webhook_endpoints/${aliceEndpoint.id}`, { method: "DELETE" }),
      as(`/api/v1/events/${sent.eventId}`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(isErrorBody(res.json)).toBe(true);
    }
    const list = await mallory.api("/api/v1/webhook_endpoints");
    expect(list.json.data.map((e: { id: string }) => e.id)).toEqual([malloryEndpoint.id]);

    await webhookWorkerRanSince(server.running);
    expect(aliceHook.hits).toHaveLength(1);
    const d = await delivery(alice, aliceEndpoint, sent.deliveryId);
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 1 });
    expect((await alice.api("/api/v1/webhook_endpoints")).json.data.map((e: { id: string }) => e.id)).toEqual([aliceEndpoint.id]);
  });
});
