/**
 * What the contract scenarios run against: one real server on one anvil (./contract.test.ts starts
 * it), a local webhook receiver, the account's objects, and a second server without a chain for
 * the answers only an unreachable chain gives (503).
 */
import { expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { claimIdempotencyKey } from "../support/idempotency-rows.ts";
import type { CallRequest, Contract } from "../support/openapi-contract.ts";
import type { OperationKey } from "../support/openapi-document.ts";
import type { Receiver } from "../support/receiver.ts";
import type { ApiResponse, TestAccount, TestServer } from "../support/server.ts";
import type { Stack } from "../support/stack.ts";
import { waitFor } from "../support/wait.ts";

export interface World {
  contract: Contract;
  stack: Stack;
  /** The stack account's API key. */
  key: string;
  receiver: Receiver;
  /** A server whose RPC is a closed port (and whose payments expire after a second), its account and a payment. */
  chainless: { server: TestServer; account: TestAccount; paymentId: string };
  /** Shared objects that the read scenarios look at (created once). */
  owned: Owned;
  /** A fresh set, for scenarios that change or use up what they touch. */
  fresh(): Promise<Owned>;
  /** A fresh payment alone (an account may hold only 16 webhook endpoints). */
  newPayment(): Promise<any>;
  /** A payment paid in full on anvil and confirmed (made once, on first use). */
  paid(): Promise<any>;
}

/** The calls that exercise one operation's answers (see merchant-scenarios.ts). */
export interface Scenario {
  run(w: World): Promise<void>;
  /** Declared statuses that cannot be brought about against these servers, with the reason. */
  unreachable?: Record<number, string>;
  /** Documented parameters ("query chain") no accepted request here can carry, with the reason. */
  unsentParameters?: Record<string, string>;
}

export const INTERNAL = "an unexpected server error, which no correct request brings about";

export interface Owned {
  payment: any;
  endpoint: any;
  /** The delivery of a `test` event to `endpoint`, and the event. */
  deliveryId: string;
  eventId: string;
  link: any;
}

/** Makes the objects through the API (each answer checked against the document too). */
export async function createOwned(contract: Contract, key: string, receiverUrl: string): Promise<Owned> {
  const payment = await contract.call("POST /api/v1/payments", { key, body: { amount: "3.00" } });
  const endpoint = await contract.call("POST /api/v1/webhook_endpoints", {
    key,
    body: { url: `${receiverUrl}?owned=${randomBytes(4).toString("hex")}` },
  });
  const sent = await contract.call("POST /api/v1/webhook_endpoints/{id}/test", {
    key,
    params: { id: endpoint.json.id },
  });
  const link = await contract.call("POST /api/v1/payment_links", { key, body: { amount: "3.00" } });
  expect([payment.status, endpoint.status, sent.status, link.status]).toEqual([201, 201, 202, 201]);
  return {
    payment: payment.json,
    endpoint: endpoint.json,
    deliveryId: sent.json.delivery.id,
    eventId: sent.json.event_id,
    link: link.json,
  };
}

/** An id of the same shape as `id` that names nothing: a payment id, or a prefixed one (`we_...`). */
export function unknownLike(id: string): string {
  if (id.startsWith("0x")) return `0x${randomBytes((id.length - 2) / 2).toString("hex")}`;
  const cut = id.indexOf("_") + 1;
  const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return id.slice(0, cut) + Array.from(randomBytes(id.length - cut), (b) => base62[b % 62]).join("");
}

export const freshIdempotencyKey = () => `contract-${randomBytes(8).toString("hex")}`;

/** A body past the 256 KB limit, sent with its Content-Length. */
export const OVERSIZED_BODY = JSON.stringify({ padding: "x".repeat(300 * 1024) });

/**
 * The refusals every operation of its kind gives, checked against the document: 401 without a
 * key or with an unknown one (merchant API), 404 for an unknown and for a malformed id in each
 * path parameter, 413 for a body past the limit (any route and method: it is refused on its
 * Content-Length before routing), and for operations documented with a request body 400 for
 * malformed JSON. `req` is a request that would otherwise succeed.
 */
export async function commonRefusals(w: World, op: OperationKey, req: CallRequest): Promise<void> {
  const { contract } = w;
  const [method, path] = op.split(" ") as [string, string];
  const expectStatus = async (status: number, changed: CallRequest, what: string) => {
    const res = await contract.call(op, { ...req, ...changed });
    expect({ op, what, status: res.status, error: typeof res.json?.error }).toEqual({
      op,
      what,
      status,
      error: "string",
    });
  };
  if (path.startsWith("/api/v1/")) {
    await expectStatus(401, { key: null }, "no key");
    await expectStatus(401, { key: `sk_live_${"0".repeat(32)}` }, "an unknown key");
  }
  for (const name of Object.keys(req.params ?? {})) {
    await expectStatus(404, { params: { ...req.params, [name]: unknownLike(req.params![name]!) } }, `unknown ${name}`);
    await expectStatus(404, { params: { ...req.params, [name]: "not-an-id" } }, `malformed ${name}`);
  }
  if (method === "POST" && contract.operations.get(op)?.operation.requestBody)
    await expectStatus(400, { body: '{"amount": ' }, "malformed JSON");
  await expectStatus(413, { body: OVERSIZED_BODY }, "an oversized body");
}

/** Same key, other body: 422; the key claimed by a request still in flight: 409. */
export async function idempotencyConflicts(w: World, op: OperationKey, req: CallRequest, otherBody: unknown) {
  const key = freshIdempotencyKey();
  const first = await w.contract.call(op, { ...req, headers: { "idempotency-key": key } });
  expect(first.status).toBeLessThan(300);
  const replay = await w.contract.call(op, { ...req, headers: { "idempotency-key": key } });
  expect({ ok: replay.status < 300, replayed: replay.headers.get("idempotent-replayed") }).toEqual({
    ok: true,
    replayed: "true",
  });
  const conflict = await w.contract.call(op, { ...req, body: otherBody, headers: { "idempotency-key": key } });
  expect(conflict.status).toBe(422);
  const inFlight = freshIdempotencyKey();
  await claimIdempotencyKey(w.stack.env, w.stack.accountId, inFlight);
  const busy = await w.contract.call(op, { ...req, headers: { "idempotency-key": inFlight } });
  expect(busy.status).toBe(409);
  const badKey = await w.contract.call(op, { ...req, headers: { "idempotency-key": "k".repeat(256) } });
  expect(badKey.status).toBe(400);
  expect(badKey.json.error).toContain("Idempotency-Key");
}

/**
 * Repeats `call` until it answers `status` (a limiter's burst used up), at most `max` times. The
 * calls go 20 at a time, so the burst drains faster than the limiter refills even on a slow machine.
 */
export async function callUntil(status: number, max: number, call: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let sent = 0; sent < max; sent += 20) {
    const answers = await Promise.all(Array.from({ length: Math.min(20, max - sent) }, call));
    const found = answers.find((res) => res.status === status);
    if (found) return found;
  }
  throw new Error(`no ${status} after ${max} calls`);
}

/**
 * The receiver's answer: 410 Gone to the URLs marked `?gone`, which disables their endpoint; 200
 * to every other.
 */
export const answerGoneWhenAsked = (req: Request) =>
  new URL(req.url).searchParams.has("gone") ? new Response("gone", { status: 410 }) : new Response("ok");

/** An endpoint disabled by its receiver's 410 to a test event, and that event's delivery. */
export async function goneEndpoint(w: World): Promise<{ endpointId: string; deliveryId: string }> {
  const created = await w.contract.call("POST /api/v1/webhook_endpoints", {
    key: w.key,
    body: { url: `${w.receiver.url}?gone=${randomBytes(4).toString("hex")}` },
  });
  const endpointId = created.json.id;
  const sent = await w.contract.call("POST /api/v1/webhook_endpoints/{id}/test", {
    key: w.key,
    params: { id: endpointId },
  });
  await waitFor(
    async () => {
      const list = await w.contract.call("GET /api/v1/webhook_endpoints", { key: w.key });
      return list.json.data.find((e: any) => e.id === endpointId)?.status === "disabled";
    },
    15_000,
    "the endpoint to be disabled by its 410",
  );
  return { endpointId, deliveryId: sent.json.delivery.id };
}

/** Waits until the receiver holds a delivery for which `match` holds. */
export const received = (w: World, match: (body: any) => boolean, what: string) =>
  waitFor(() => w.receiver.hits.find((hit) => match(JSON.parse(hit.body))), 20_000, what);
