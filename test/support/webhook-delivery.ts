/**
 * Webhook delivery end to end, for the test/webhooks/ files that watch it happen: the real
 * server in-process, real HTTP to a local receiver (Bun.serve), the real outbox and worker.
 * Timing is shortened through ServerOptions: a 1.5 s send timeout and a [0, 200, 400, 800] ms
 * schedule, so a delivery gets four attempts over about 1.4 s plus its timeouts. Payments expire after 1 s, which
 * gives payment events without a chain.
 *
 *   const rig = deliveryRig();                        // at the top of a test file
 *   const m = await rig.merchant("Shop");             // in a test
 *   const hook = rig.newHook(sequence(status(500), ok));
 *   const endpoint = await register(m, hook.url);
 *   const d = await settled(m, endpoint, (await sendTest(m, endpoint)).deliveryId);
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { type Api, api, startTestServer, type TestServer } from "./server.ts";
import { waitFor, webhookWorkerRanSince } from "./wait.ts";

/** Short, but with room for a local receiver's answer on a loaded machine (20 sends at once took 0.6 s). */
export const TIMEOUT_MS = 1_500;
export const SCHEDULE = [0, 200, 400, 800] as const;
/** Four attempts, the jittered gaps (at most 1.1 x 1.4 s) and a timeout each, with room to spare. */
export const EXHAUSTED_MS = 1.1 * (200 + 400 + 800) + 4 * TIMEOUT_MS + 1_000;
const PAYMENT_WINDOW_MS = 1_000;
const UNLIMITED = { burst: 100_000, perSecond: 100_000 };
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A server with the shortened timing; `timeoutMs` replaces the 500 ms send timeout. */
export function startDeliveryServer(timeoutMs = TIMEOUT_MS): Promise<TestServer> {
  return startTestServer(
    { webhookAllowPrivate: true, paymentWindowMs: PAYMENT_WINDOW_MS },
    // Test events fill backlogs here, hundreds at a time; the limits have their own tests (manual-sends.test.ts).
    { webhookTimeoutMs: timeoutMs, webhookSchedule: SCHEDULE, webhookLimits: { test: UNLIMITED, retry: UNLIMITED } },
  );
}

// ---------------------------------------------------------------------------------------------
// Receivers

export interface Hit {
  at: number;
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** What a hook answers to its n-th request (n from 1). */
export type Behaviour = (n: number, req: Request) => Response | Promise<Response>;

export interface Hook {
  url: string;
  hits: Hit[];
  behave: Behaviour;
  /** Requests that are being held open right now (see `hang`). */
  open: number;
}

export const ok: Behaviour = () => new Response("ok");
export const status =
  (code: number, headers: Record<string, string> = {}): Behaviour =>
  () =>
    new Response(`status ${code}`, { status: code, headers });
/** Answers with `steps[n - 1]`, repeating the last one. */
export const sequence =
  (...steps: Behaviour[]): Behaviour =>
  (n, req) =>
    steps[Math.min(n, steps.length) - 1]!(n, req);

/** How long `hang` holds a request the client does not give up on. */
export const HOLD_MS = 5_000;

export const lastHit = (hook: Hook) => Math.max(...hook.hits.map((h) => h.at));

// ---------------------------------------------------------------------------------------------
// The rig: a receiver and a server per test file

export interface Merchant {
  api: Api;
  accountId: string;
}

export interface DeliveryRig {
  /** The server with the shortened timing, started in the file's beforeAll. */
  readonly server: TestServer;
  /** A merchant with its own account and API key, on the rig's server unless `on` is given. */
  merchant(name: string, on?: TestServer): Promise<Merchant>;
  /** A fresh path on the receiver that records every request and answers with `behave`. */
  newHook(behave?: Behaviour): Hook;
  /** Holds the request open until the client gives up (or `holdMs` pass), then answers 200. */
  hang(hook: () => Hook, holdMs?: number): Behaviour;
  /** Lets go of every request `hang` still holds. */
  releaseHeld(): void;
  /** Waits until the worker has run past the moment a first retry of a send at `at` would be due. */
  pastFirstRetry(at: number): Promise<void>;
}

/**
 * Starts the receiver and the server before the calling file's tests and stops them after it;
 * call it at the top level of a test file.
 */
export function deliveryRig(): DeliveryRig {
  const hooks = new Map<string, Hook>();
  const holding = new Set<() => void>();
  let hookCount = 0;
  let receiver: ReturnType<typeof Bun.serve> | undefined;
  let server: TestServer | undefined;

  const releaseHeld = () => {
    for (const release of [...holding]) release();
  };

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
    server = await startDeliveryServer();
  });

  afterAll(async () => {
    releaseHeld();
    await server?.stop();
    receiver?.stop(true);
  });

  const rig: DeliveryRig = {
    get server() {
      if (!server) throw new Error("deliveryRig(): the server starts in beforeAll, so use it inside a test or hook");
      return server;
    },
    async merchant(name, on = rig.server) {
      const account = await on.createAccount(name);
      return { api: api(on.url, account.apiKey), accountId: account.accountId };
    },
    newHook(behave = ok) {
      const path = `/hook/${++hookCount}`;
      const hook: Hook = { url: `http://127.0.0.1:${receiver!.port}${path}`, hits: [], behave, open: 0 };
      hooks.set(path, hook);
      return hook;
    },
    hang(hook, holdMs = HOLD_MS) {
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
    },
    releaseHeld,
    pastFirstRetry: (at) => webhookWorkerRanSince(rig.server.running, at + 1.1 * SCHEDULE[1]),
  };
  return rig;
}

// ---------------------------------------------------------------------------------------------
// API helpers

export interface Endpoint {
  id: string;
  secret: string;
}

export async function register(m: Merchant, url: string): Promise<Endpoint> {
  const res = await m.api("/api/v1/webhook_endpoints", { body: { url } });
  expect(res.status).toBe(201);
  return { id: res.json.id, secret: res.json.secret };
}

/** Queues a signed `test` event to one endpoint; returns its event id and delivery id. */
export async function sendTest(m: Merchant, endpoint: Endpoint): Promise<{ eventId: string; deliveryId: string }> {
  const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST" });
  expect(res.status).toBe(202);
  return { eventId: res.json.event_id, deliveryId: res.json.delivery.id };
}

export async function deliveries(m: Merchant, endpoint: Endpoint): Promise<any[]> {
  const res = await m.api(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=100`);
  expect(res.status).toBe(200);
  return res.json.data;
}

export async function delivery(m: Merchant, endpoint: Endpoint, deliveryId: string): Promise<any> {
  return (await deliveries(m, endpoint)).find((d) => d.id === deliveryId);
}

/** Waits until the delivery has left `pending` (succeeded, failed or canceled). */
export const settled = (m: Merchant, endpoint: Endpoint, deliveryId: string, timeoutMs = EXHAUSTED_MS) =>
  waitFor(
    async () => {
      const d = await delivery(m, endpoint, deliveryId);
      return d && d.status !== "pending" ? d : undefined;
    },
    timeoutMs,
    `delivery ${deliveryId} to settle`,
  );

/** The manual Standard Webhooks check: base64 HMAC-SHA256 of "id.timestamp.body" under the secret's bytes. */
export function manualSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export function expectSigned(hit: Hit, secret: string) {
  expect(hit.headers["webhook-signature"]).toBe(
    manualSignature(secret, hit.headers["webhook-id"]!, hit.headers["webhook-timestamp"]!, hit.body),
  );
  expect(() => new Webhook(secret).verify(hit.body, hit.headers)).not.toThrow();
}
