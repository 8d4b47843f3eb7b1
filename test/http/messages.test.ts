/**
 * Every field of every request body, broken one way at a time: the 400 names the field and the
 * rule (as docs/api.md promises), and nothing about the value leaks into it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: Api;
let paymentId: string;

beforeAll(async () => {
  server = await startTestServer();
  merchant = api(server.url, (await server.createAccount()).apiKey);
  paymentId = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id;
});

afterAll(() => server.stop());

const HASH = `0x${"ab".repeat(32)}`;
const item = { description: "Widget", unit_amount: "1.00", quantity: 1 };
const emoji = (n: number) => "😀".repeat(n);

type Route = "payments" | "webhook_endpoints" | "sync" | "cross-chain";
const paths: Record<Route, () => string> = {
  payments: () => "/api/v1/payments",
  webhook_endpoints: () => "/api/v1/webhook_endpoints",
  sync: () => `/api/public/payments/${paymentId}/sync`,
  "cross-chain": () => `/api/public/payments/${paymentId}/cross-chain`,
};

/** [route, body (a string is sent as it is), the exact 400 message]. */
const CASES: Array<[Route, unknown, string]> = [
  // The body itself
  ["payments", "", "request body must be a JSON object"],
  ["payments", "[1]", "request body must be a JSON object"],
  ["payments", "null", "request body must be a JSON object"],
  ["payments", '"x"', "request body must be a JSON object"],
  ["payments", "{", "request body must be valid JSON"],
  ["payments", { amount: "1.00", colour: "red" }, "unknown field colour"],
  ["payments", { amount: "1.00", toString: 1, valueOf: 2 }, "unknown field toString"],
  // amount
  ["payments", { amount: 5 }, 'amount must be a decimal string with two decimals, such as "12.50"'],
  ["payments", { amount: "5" }, 'amount must be a decimal string with two decimals, such as "12.50"'],
  ["payments", { amount: "0.00" }, "amount must be greater than 0.00"],
  ["payments", { amount: "1000000000.01" }, "amount must be at most 1000000000.00"],
  ["payments", { amount: `${"9".repeat(30)}.00` }, "amount must be at most 1000000000.00"],
  ["payments", {}, "amount is required unless line_items is given"],
  // line_items
  ["payments", { line_items: [] }, "line_items must be a list of 1 to 50 items"],
  ["payments", { line_items: {} }, "line_items must be a list of 1 to 50 items"],
  ["payments", { line_items: Array(51).fill(item) }, "line_items must be a list of 1 to 50 items"],
  ["payments", { line_items: [5] }, "line_items[0] must be an object with description, unit_amount and quantity"],
  ["payments", { line_items: [item, { ...item, sku: "x" }] }, "unknown field line_items[1].sku"],
  [
    "payments",
    { line_items: [{ unit_amount: "1.00", quantity: 1 }] },
    "line_items[0].description is required (it must be a string of 1 to 500 characters)",
  ],
  [
    "payments",
    { line_items: [{ ...item, description: "" }] },
    "line_items[0].description must be a string of 1 to 500 characters",
  ],
  [
    "payments",
    { line_items: [{ ...item, description: emoji(501) }] },
    "line_items[0].description must be a string of 1 to 500 characters",
  ],
  [
    "payments",
    { line_items: [{ ...item, unit_amount: 1 }] },
    'line_items[0].unit_amount must be a decimal string with two decimals, such as "12.50"',
  ],
  [
    "payments",
    { line_items: [{ ...item, unit_amount: "0.00" }] },
    "line_items[0].unit_amount must be greater than 0.00 and at most 1000000000.00",
  ],
  [
    "payments",
    { line_items: [{ ...item, quantity: 2.5 }] },
    "line_items[0].quantity must be a whole number from 1 to 1000000",
  ],
  [
    "payments",
    { line_items: [{ ...item, quantity: "2" }] },
    "line_items[0].quantity must be a whole number from 1 to 1000000",
  ],
  [
    "payments",
    { line_items: [{ ...item, quantity: 0 }] },
    "line_items[0].quantity must be a whole number from 1 to 1000000",
  ],
  ["payments", { amount: "2.00", line_items: [item] }, "amount 2.00 USDC does not match line_items total 1.00 USDC"],
  // text fields: length in characters (code points), and the wrong type says so
  ["payments", { amount: "1.00", description: 5 }, "description must be a string of at most 500 characters"],
  ["payments", { amount: "1.00", description: emoji(501) }, "description must be a string of at most 500 characters"],
  ["payments", { amount: "1.00", reference: "r".repeat(501) }, "reference must be a string of at most 500 characters"],
  ["payments", { amount: "1.00", reference: [] }, "reference must be a string of at most 500 characters"],
  [
    "payments",
    { amount: "1.00", customer_name: emoji(201) },
    "customer_name must be a string of at most 200 characters",
  ],
  ["payments", { amount: "1.00", invoice_number: "" }, "invoice_number must be a string of 1 to 100 characters"],
  [
    "payments",
    { amount: "1.00", invoice_number: "i".repeat(101) },
    "invoice_number must be a string of 1 to 100 characters",
  ],
  [
    "payments",
    { amount: "1.00", customer_email: "nope" },
    "customer_email must be an email address of at most 320 characters",
  ],
  [
    "payments",
    { amount: "1.00", customer_email: 1 },
    "customer_email must be an email address of at most 320 characters",
  ],
  ["payments", { amount: "1.00", success_url: "http://shop.example/done" }, "success_url must be an https URL"],
  ["payments", { amount: "1.00", success_url: true }, "success_url must be an https URL of at most 2048 characters"],
  // due_at: real calendar dates only
  [
    "payments",
    { amount: "1.00", due_at: "2027-02-30" },
    "due_at must be a real calendar date (2026-12-01) or date-time with a time zone (2026-12-01T12:00:00Z)",
  ],
  [
    "payments",
    { amount: "1.00", due_at: "2027-13-01" },
    "due_at must be a real calendar date (2026-12-01) or date-time with a time zone (2026-12-01T12:00:00Z)",
  ],
  [
    "payments",
    { amount: "1.00", due_at: "2027-01-01T24:00:00Z" },
    "due_at must be a real calendar date (2026-12-01) or date-time with a time zone (2026-12-01T12:00:00Z)",
  ],
  [
    "payments",
    { amount: "1.00", due_at: "2027-01-01T12:00:00" },
    "due_at must be a real calendar date (2026-12-01) or date-time with a time zone (2026-12-01T12:00:00Z)",
  ],
  [
    "payments",
    { amount: "1.00", due_at: 20270101 },
    "due_at must be an ISO 8601 date or date-time with a time zone, such as 2026-12-01T12:00:00Z",
  ],
  ["payments", { amount: "1.00", due_at: "2000-01-01" }, "due_at must be in the future"],
  // metadata
  ["payments", { amount: "1.00", metadata: [] }, "metadata must be an object of at most 50 keys with string values"],
  ["payments", { amount: "1.00", metadata: "x" }, "metadata must be an object of at most 50 keys with string values"],
  [
    "payments",
    { amount: "1.00", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
    "metadata must be an object of at most 50 keys with string values",
  ],
  ["payments", { amount: "1.00", metadata: { order: 1 } }, "metadata.order must be a string of at most 500 characters"],
  [
    "payments",
    { amount: "1.00", metadata: { order: { toString: "x" } } },
    "metadata.order must be a string of at most 500 characters",
  ],
  [
    "payments",
    { amount: "1.00", metadata: { note: emoji(501) } },
    "metadata.note must be a string of at most 500 characters",
  ],
  ["payments", { amount: "1.00", metadata: { ["k".repeat(41)]: "v" } }, "metadata keys must be 1 to 40 characters"],
  ["payments", { amount: "1.00", metadata: { "": "v" } }, "metadata keys must be 1 to 40 characters"],
  // webhook endpoints
  ["webhook_endpoints", {}, "url is required (it must be an https URL of at most 2048 characters)"],
  ["webhook_endpoints", { url: 5 }, "url must be an https URL of at most 2048 characters"],
  ["webhook_endpoints", { url: "" }, "url must be an https URL of at most 2048 characters"],
  ["webhook_endpoints", { url: "https://hooks.example.com/h", secret: "x" }, "unknown field secret"],
  ["webhook_endpoints", "[1]", "request body must be a JSON object"],
  // sync
  ["sync", {}, "tx_hash is required (it must be a 0x-prefixed 32-byte transaction hash)"],
  ["sync", { tx_hash: "0x12" }, "tx_hash must be a 0x-prefixed 32-byte transaction hash"],
  ["sync", { tx_hash: 1 }, "tx_hash must be a 0x-prefixed 32-byte transaction hash"],
  ["sync", { tx_hash: HASH, valueOf: 1 }, "unknown field valueOf"],
  ["sync", "", "request body must be a JSON object"],
  // cross-chain
  ["cross-chain", { tx_hash: HASH }, "chain is required (it must be the name of a configured source chain)"],
  ["cross-chain", { chain: "", tx_hash: HASH }, "chain must be the name of a configured source chain"],
  ["cross-chain", { chain: 1, tx_hash: HASH }, "chain must be the name of a configured source chain"],
  ["cross-chain", { chain: "ethereum" }, "tx_hash is required (it must be a 0x-prefixed 32-byte transaction hash)"],
  ["cross-chain", { chain: "ethereum", tx_hash: "x" }, "tx_hash must be a 0x-prefixed 32-byte transaction hash"],
];

describe("400 messages name the field and the rule", () => {
  test.each(CASES)("%s #%#", async (route, body, message) => {
    const res = await merchant(paths[route](), { body });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toBe(message);
  });

  test("nothing was created by any of them", async () => {
    const list = await merchant("/api/v1/payments?limit=100");
    expect(list.json.data.map((p: { id: string }) => p.id)).toEqual([paymentId]);
    expect((await merchant("/api/v1/webhook_endpoints")).json.data).toEqual([]);
  });
});

describe("lengths count characters, not UTF-16 units", () => {
  // An account of its own: the payments these create must not show in the table's "nothing was created".
  let merchant: Api;
  beforeAll(async () => {
    merchant = api(server.url, (await server.createAccount()).apiKey);
  });

  test("500 emoji are a valid description, 500 emoji a valid metadata value, 40 a valid key", async () => {
    const metadata = JSON.stringify({ [emoji(40)]: emoji(500) });
    const res = await merchant("/api/v1/payments", {
      body: `{"amount":"1.00","description":"${emoji(500)}","metadata":${metadata}}`,
    });
    expect(res.status).toBe(201);
    expect(res.json.description).toBe(emoji(500));
  });

  test("a real calendar date is accepted: 29 February of a leap year, the end of that day UTC", async () => {
    const year = new Date().getUTCFullYear();
    const leap = [year, year + 1].find(
      (y) => new Date(Date.UTC(y, 1, 29)).getUTCMonth() === 1 && Date.UTC(y, 1, 29) > Date.now(),
    );
    const day = leap ? `${leap}-02-29` : `${year + 1}-02-28`;
    const res = await merchant("/api/v1/payments", { body: { amount: "1.00", due_at: day } });
    expect(res.status).toBe(201);
    expect(res.json.due_at).toBe(`${day}T23:59:59.999Z`);
  });
});

describe("hostile bodies are 400s, never the error handler's own crash", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  const hostile: Array<[Route, string, string]> = [
    ["sync", '{"toString":1,"valueOf":2}', "unknown field toString"],
    ["cross-chain", '{"toString":{},"chain":"x"}', "unknown field toString"],
    ["webhook_endpoints", '{"valueOf":"x"}', "unknown field valueOf"],
    [
      "payments",
      '{"amount":"1.00","metadata":{"toString":{"toString":1}}}',
      "metadata.toString must be a string of at most 500 characters",
    ],
    ["sync", `{"tx_hash":${deep(5000)}}`, "request body nests deeper than 32 levels"],
    ["cross-chain", deep(5000), "request body nests deeper than 32 levels"],
    ["webhook_endpoints", `{"url":${deep(5000)}}`, "request body nests deeper than 32 levels"],
    ["payments", `{"amount":"1.00","metadata":{"a":${deep(5000)}}}`, "request body nests deeper than 32 levels"],
  ];
  test.each(hostile)("%s %#", async (route, body, message) => {
    const res = await merchant(paths[route](), { body });
    expect({ status: res.status, type: res.headers.get("content-type"), json: res.json }).toEqual({
      status: 400,
      type: "application/json",
      json: { error: message },
    });
  });
});
