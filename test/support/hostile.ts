/**
 * Hostile HTTP requests over every route, as fast-check arbitraries: shared by the property test
 * (test/http/fuzz.test.ts, a few hundred runs) and the fuzz script (bench/fuzz.ts, tens of
 * thousands). Each request is a method, a path (real routes with good, bad and absurd ids), an
 * Authorization header (valid, missing, malformed), a content type and a body: hostile JSON
 * shapes, deep nesting, huge strings, broken JSON, sometimes sent chunked.
 */
import fc from "fast-check";
import { ASSETS } from "../../src/checkout/assets.ts";
import { MERCHANT_ROUTES } from "./merchant-routes.ts";
import { markReceived } from "./refund-rows.ts";
import { api, type TestServer } from "./server.ts";

/** Real things for the generators to aim at: without them every request would be a 404. */
export interface FuzzTarget {
  paymentId: string;
  apiKey: string;
  endpointId: string;
  /** A payment link's id; without one the link routes are aimed at an unknown link. */
  linkId?: string;
  /** A refund's claim token (its page, /refund/<token>); without one that page is aimed at an unknown token. */
  claimToken?: string;
}

/** A fresh account on `server` with one payment, webhook endpoint, payment link and refund claim link to aim at. */
export async function createFuzzTarget(server: TestServer): Promise<FuzzTarget> {
  const { apiKey } = await server.createAccount();
  const call = api(server.url, apiKey);
  const payment = await call("/api/v1/payments", { body: { amount: "5.00" } });
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/h" } });
  const link = await call("/api/v1/payment_links", { body: { description: "Tips", max_amount: "50.00" } });
  // Another account's refund of another payment: the payment aimed at stays pending, and the
  // account's event list keeps to the kinds of events its checks expect.
  const refunder = api(server.url, (await server.createAccount()).apiKey);
  const refunded = await refunder("/api/v1/payments", { body: { amount: "5.00" } });
  await markReceived(server.env, refunded.json.id, 5_000_000n);
  const refund = await refunder(`/api/v1/payments/${refunded.json.id}/refunds`, { body: {} });
  const claimToken = new URL(refund.json.claim_url).pathname.split("/").pop();
  return { paymentId: payment.json.id, apiKey, endpointId: endpoint.json.id, linkId: link.json.id, claimToken };
}

export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent as a stream (Transfer-Encoding: chunked, no Content-Length) in chunks of this many bytes. */
  chunkBytes?: number;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"];

/**
 * Every route the app registers, with its methods; `:id`, `:endpoint`, `:link`, `:claim` and `:junk` are filled in.
 * The merchant routes come from their shared table, which a test keeps equal to the server's.
 */
export const ROUTES: Array<[path: string, methods: string[]]> = [
  ["/", ["GET"]],
  ["/healthz", ["GET"]],
  ["/readyz", ["GET"]],
  ["/pay/:id", ["GET"]],
  ["/l/:link", ["GET", "POST"]],
  ["/refund/:claim", ["GET", "POST"]],
  ["/api/public/payments/:id", ["GET", "OPTIONS"]],
  ["/api/public/payments/:id/qr", ["GET"]],
  ["/api/public/payments/:id/qr?format=:junk", ["GET"]],
  ["/api/public/payments/:id/sync", ["POST", "OPTIONS"]],
  ["/api/public/payments/:id/cross-chain", ["GET", "POST"]],
  ["/api/public/payments/:id/cross-chain?chain=:junk", ["GET"]],
  ["/api/public/payments/:id/x402", ["GET", "POST", "OPTIONS"]],
  ...MERCHANT_ROUTES.map((route): [string, string[]] => [
    route.path
      .replace(/^\/api\/v1\/webhook_endpoints\/:id/, "/api/v1/webhook_endpoints/:endpoint")
      .replace(/^\/api\/v1\/payment_links\/:id/, "/api/v1/payment_links/:link")
      .replace(":delivery_id", ":id"),
    [route.method],
  ]),
  ["/api/v1/payments?limit=:junk&status=:junk&created[gte]=:junk&starting_after=:junk", ["GET"]],
  ["/api/v1/payments.csv?status=:junk&created[lt]=:junk&q=:junk", ["GET"]],
  ["/api/v1/events?type=:junk&limit=:junk", ["GET"]],
  ["/api/v1/webhook_endpoints/:endpoint/deliveries?limit=:junk", ["GET"]],
  ...Object.values(ASSETS).map((asset): [string, string[]] => [`${asset.path}?v=:junk`, ["GET"]]),
];

/** Strings that have broken parsers, validators and error handlers before. */
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "\udc00x",
    "😀".repeat(300),
    "%00",
    "../../etc/passwd",
    "<script>",
    "'; DROP TABLE payments;--",
    "1e309",
    "-0",
    "NaN",
  ),
  fc.constantFrom(
    "2027-02-30",
    "2026-13-01",
    "2026-12-01T24:00:00Z",
    "9999-12-31",
    `0x${"f".repeat(64)}`,
    "25.00",
    "0.00",
    "99999999999999999999.00",
  ),
  fc.integer({ min: 1, max: 300_000 }).map((n) => "a".repeat(n)),
);

const HOSTILE_KEYS = ["toString", "valueOf", "__proto__", "constructor", "hasOwnProperty", "then", "toJSON", ""];

/** Any JSON value, with prototype-ish keys mixed in. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    nastyString,
    fc.constantFrom(1e308, -1, 0, 2 ** 53 + 1, 2.5, true, null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string({ maxLength: 8 })), tie("value"), {
      maxKeys: 4,
    }),
  ),
})).value;

/** Field names the request schemas know, so mutations land on real fields. */
const FIELDS = [
  "amount",
  "line_items",
  "description",
  "reference",
  "success_url",
  "customer_email",
  "customer_name",
  "invoice_number",
  "due_at",
  "metadata",
  "tx_hash",
  "chain",
  "url",
  ...HOSTILE_KEYS,
];

/** A mostly valid create-payment body with one or more fields replaced by something hostile. */
const mutatedPayment = fc
  .record({
    fields: fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 3 }),
    items: fc.array(
      fc.dictionary(fc.constantFrom("description", "unit_amount", "quantity", "sku"), hostileValue, { maxKeys: 4 }),
      { maxLength: 3 },
    ),
  })
  .map(({ fields, items }) =>
    JSON.stringify({ amount: "5.00", line_items: items.length ? items : undefined, ...fields }),
  );

/** `[[[...]]]` or `{"a":{"a":...}}`, deep enough to overflow anything recursive. */
const deepNesting = fc
  .record({ depth: fc.integer({ min: 30, max: 6000 }), object: fc.boolean(), wrap: fc.boolean() })
  .map(({ depth, object, wrap }) => {
    const inner = object ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` : "[".repeat(depth) + "]".repeat(depth);
    return wrap ? `{"amount":"1.00","metadata":{"k":${inner}},"tx_hash":${inner},"url":${inner}}` : inner;
  });

const brokenJson = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "[1]",
    "null",
    "1",
    '"str"',
    "{}",
    '{"a":1,}',
    "{'a':1}",
    "\u0000",
    "\ufeff{}",
    '{"amount":"1.00"',
    "NaN",
  ),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
);

/** Whitespace and duplicate keys: small parsed objects wrapped in a large text. */
const bloated = fc
  .integer({ min: 1000, max: 300_000 })
  .map((n) => `{"amount":"1.00","metadata":{"a":"1",${" ".repeat(n)}"a":"2"}}`);

export const hostileBody: fc.Arbitrary<string> = fc.oneof(
  hostileValue.map((v) => JSON.stringify(v) ?? ""),
  mutatedPayment,
  deepNesting,
  brokenJson,
  bloated,
);

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "",
];

function idFor(target: FuzzTarget) {
  return fc.oneof(
    { arbitrary: fc.constant(target.paymentId), weight: 4 },
    fc.constant(target.paymentId.toUpperCase()),
    fc.constantFrom(`0x${"0".repeat(64)}`, "abc", "%2e%2e", "%00", "null", "-1", "we_x", "evt_x"),
    fc.string({ maxLength: 80 }).map(encodeURIComponent),
    // Long, but with the rest of the head under Bun's 16 KB limit (above it Bun itself answers 431).
    fc.integer({ min: 100, max: 6000 }).map((n) => "f".repeat(n)),
  );
}

export function hostileRequest(target: FuzzTarget): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      route: fc.constantFrom(...ROUTES),
      anyMethod: fc.option(fc.constantFrom(...METHODS), { nil: undefined, freq: 3 }),
      pick: fc.nat(),
      id: idFor(target),
      endpoint: fc.oneof(fc.constant(target.endpointId), fc.constantFrom("we_nope", "", "%20")),
      link: fc.oneof(
        fc.constant(target.linkId ?? "plink_000000000000000000000000"),
        fc.constantFrom("plink_nope", "", "%20", "nope"),
      ),
      claim: fc.oneof(
        fc.constant(target.claimToken ?? "A".repeat(43)),
        fc.constantFrom("A".repeat(43), "A".repeat(44), "", "%20", "nope"),
      ),
      junk: fc.string({ maxLength: 30 }).map(encodeURIComponent),
      auth: fc.oneof(
        fc.constant(`Bearer ${target.apiKey}`),
        fc.constant(`Bearer ${target.apiKey}`),
        fc.constantFrom(
          undefined,
          "",
          "Bearer",
          "Bearer ",
          "bearer x",
          "Basic dXNlcjpwYXNz",
          `Bearer ${target.apiKey}x`,
          `Bearer sk_live_${"A".repeat(32)}`,
        ),
        fc.integer({ min: 100, max: 6000 }).map((n) => `Bearer ${"k".repeat(n)}`),
      ),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("k1", "a".repeat(300))), {
        nil: undefined,
      }),
      body: fc.option(hostileBody, { nil: undefined, freq: 4 }),
      chunkBytes: fc.option(fc.integer({ min: 1, max: 65_536 }), { nil: undefined, freq: 3 }),
    })
    .map((r) => {
      const [template, methods] = r.route;
      const method = r.anyMethod ?? methods[r.pick % methods.length]!;
      const path = template
        .replaceAll(":endpoint", r.endpoint)
        .replaceAll(":link", r.link)
        .replaceAll(":claim", r.claim)
        .replaceAll(":id", r.id)
        .replaceAll(":junk", r.junk);
      const headers: Record<string, string> = {};
      if (r.auth !== undefined) headers.authorization = r.auth;
      if (r.contentType) headers["content-type"] = r.contentType;
      if (r.idempotencyKey !== undefined && /^[\x20-\x7e]*$/.test(r.idempotencyKey))
        headers["idempotency-key"] = r.idempotencyKey;
      const sendsBody = r.body !== undefined && method !== "GET" && method !== "HEAD";
      return {
        method,
        path,
        headers,
        body: sendsBody ? r.body : undefined,
        chunkBytes: sendsBody ? r.chunkBytes : undefined,
      };
    });
}

export interface HostileOutcome {
  status: number;
  contentType: string;
  text: string;
  headers: Headers;
}

/**
 * Bun's fetch spends a fraction of a millisecond on each chunk of a streamed body: 200 KB in
 * one-byte chunks takes it over 30 s, past the test's deadline, while the server reads the same
 * 200,000 chunks in a quarter of a second (measured over a raw socket). So a body goes out in at
 * most this many chunks: one-byte chunks still for bodies up to this size, larger ones for more.
 */
const MAX_CHUNKS = 2048;

/** Sends one request; a chunked body goes out as a stream, so it carries no Content-Length. */
export async function sendHostile(baseUrl: string, req: HostileRequest): Promise<HostileOutcome> {
  let body: BodyInit | undefined = req.body;
  if (req.body !== undefined && req.chunkBytes !== undefined) {
    const bytes = new TextEncoder().encode(req.body);
    const size = Math.max(req.chunkBytes, Math.ceil(bytes.length / MAX_CHUNKS));
    body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.subarray(i, i + size));
        controller.close();
      },
    });
  }
  const res = await fetch(baseUrl + req.path, { method: req.method, headers: req.headers, body });
  const contentType = res.headers.get("content-type") ?? "";
  // An event stream that opened stays open: its status is the whole answer.
  if (contentType.startsWith("text/event-stream")) {
    await res.body?.cancel();
    return { status: res.status, contentType, text: "", headers: res.headers };
  }
  const text = await res.text();
  // A HEAD answer has no body to say why it is a 503; it answers as GET would, so GET says it.
  if (req.method === "HEAD" && res.status === 503) {
    const get = await fetch(baseUrl + req.path, { method: "GET", headers: req.headers });
    return {
      status: res.status,
      contentType,
      text: get.status === 503 ? await get.text() : text,
      headers: res.headers,
    };
  }
  return { status: res.status, contentType, text, headers: res.headers };
}

/**
 * What every answer to a hostile request must be: below 500 (a 503 only as the designed
 * "chain unreachable" answer, which these servers give when a request is valid enough to reach
 * the chain), and every error a JSON `{"error": "..."}`. The checkout page is HTML by design,
 * its 404 included, and so are a payment link's page and a refund's claim page, whose refusals
 * re-render their forms.
 */
export function judge(req: HostileRequest, res: HostileOutcome): { serverError: boolean; nonJsonError: boolean } {
  const serverError = res.status >= 500 && !(res.status === 503 && chainUnreachable(res));
  const isPage = /^\/(pay|l|refund)\//.test(req.path) && res.contentType.startsWith("text/html");
  const nonJsonError = res.status >= 400 && req.method !== "HEAD" && !isPage && !isJsonError(res);
  return { serverError, nonJsonError };
}

function chainUnreachable(res: HostileOutcome): boolean {
  return isJsonError(res) && /cannot be reached right now/.test(JSON.parse(res.text).error);
}

function isJsonError(res: HostileOutcome): boolean {
  if (!res.contentType.startsWith("application/json")) return false;
  try {
    const json = JSON.parse(res.text);
    return (
      typeof json === "object" && json !== null && typeof json.error === "string" && Object.keys(json).length === 1
    );
  } catch {
    return false;
  }
}
