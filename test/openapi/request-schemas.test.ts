/**
 * The document's request schemas are as strict as the server where a rule is a schema's to say:
 * each request below is refused by the real server with 400, and the document's schema for it
 * (body, query or path parameter) refuses it too, so a client validating against the document
 * finds the mistake before sending. (Accepted requests are held to the document in contract.test.ts.)
 * Rules the server checks in code rather than by schema (an amount that disagrees with its line
 * items, a date in the past, an https URL, which the document states in words) are not listed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type CallRequest, type Contract, loadContract } from "../support/openapi-contract.ts";
import { api, startTestServer, type TestAccount, type TestServer } from "../support/server.ts";

let server: TestServer;
let contract: Contract;
let merchant: TestAccount;
const ids = { payment: "", link: "", endpoint: "" };

beforeAll(async () => {
  server = await startTestServer();
  contract = await loadContract(server.url);
  merchant = await server.createAccount("Schema Shop");
  const call = api(server.url, merchant.apiKey);
  ids.payment = (await call("/api/v1/payments", { body: { amount: "1.00" } })).json.id;
  ids.link = (await call("/api/v1/payment_links", { body: { amount: "1.00" } })).json.id;
  ids.endpoint = (await call("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/s" } })).json.id;
});
afterAll(() => server.stop());

const item = { description: "Beans", unit_amount: "1.00", quantity: 1 };
const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
const txHash = `0x${"ab".repeat(32)}`;

/** [operation, what is wrong, the request (params filled from `ids` by name)] */
const REFUSED: Array<[string, string, CallRequest]> = [
  ["POST /api/v1/payments", "an amount without two decimals", { body: { amount: "9" } }],
  ["POST /api/v1/payments", "an amount as a number", { body: { amount: 9 } }],
  ["POST /api/v1/payments", "an unknown field", { body: { amount: "1.00", colour: "red" } }],
  ["POST /api/v1/payments", "a fractional quantity", { body: { line_items: [{ ...item, quantity: 1.5 }] } }],
  [
    "POST /api/v1/payments",
    "a line item without its quantity",
    { body: { line_items: [{ description: "x", unit_amount: "1.00" }] } },
  ],
  ["POST /api/v1/payments", "51 line items", { body: { line_items: Array.from({ length: 51 }, () => item) } }],
  ["POST /api/v1/payments", "a 501-character description", { body: { amount: "1.00", description: "x".repeat(501) } }],
  ["POST /api/v1/payments", "metadata of 51 keys", { body: { amount: "1.00", metadata: manyKeys } }],
  ["POST /api/v1/payments", "a metadata value that is not a string", { body: { amount: "1.00", metadata: { n: 1 } } }],
  ["POST /api/v1/payment_links", "an amount without two decimals", { body: { amount: "1" } }],
  ["POST /api/v1/payment_links/{id}", "active as text", { body: { active: "no" } }],
  ["POST /api/v1/webhook_endpoints", "no url", { body: {} }],
  ["POST /api/v1/webhook_endpoints", "a url that is not text", { body: { url: 5 } }],
  ["POST /api/v1/payments/{id}/recover", "no chain", { body: {} }],
  [
    "POST /api/v1/payments/{id}/recover",
    "a token that is not an address",
    { body: { chain: "custom", token: "usdt" } },
  ],
  ["POST /api/v1/payments/{id}/refunds", "an amount with one decimal", { body: { amount: "1.5" } }],
  ["POST /api/v1/payments/{id}/refunds", "an amount with seven decimals", { body: { amount: "1.0000001" } }],
  ["POST /api/v1/payments/{id}/refunds", "an amount as a number", { body: { amount: 1 } }],
  ["POST /api/v1/payments/{id}/refunds", "an unknown field", { body: { amount: "1.00", to: "me" } }],
  ["POST /api/v1/payments/{id}/refunds", "a refund_address that is not one", { body: { refund_address: "0x12" } }],
  ["POST /api/v1/payments/{id}/refunds", "metadata of 51 keys", { body: { metadata: manyKeys } }],
  ["POST /api/public/payments/{id}/sync", "a short transaction hash", { body: { tx_hash: "0x12" } }],
  ["POST /api/public/payments/{id}/cross-chain", "no transaction hash", { body: { chain: "arbitrum" } }],
  [
    "POST /api/public/payments/{id}/cross-chain",
    "an unknown field",
    { body: { chain: "arbitrum", tx_hash: txHash, x: 1 } },
  ],
  ["GET /api/v1/payments", "limit 0", { query: { limit: "0" } }],
  ["GET /api/v1/payments", "limit 101", { query: { limit: "101" } }],
  ["GET /api/v1/payments", "an unknown status", { query: { status: "lost" } }],
  ["GET /api/v1/payments", "a malformed starting_after", { query: { starting_after: "nope" } }],
  ["GET /api/v1/payments.csv", "an unknown status", { query: { status: "lost" } }],
  ["GET /api/v1/refunds", "an unknown status", { query: { status: "paid" } }],
  ["GET /api/v1/refunds", "a payment that is not a payment id", { query: { payment: "pay_1" } }],
  ["GET /api/v1/refunds", "a malformed starting_after", { query: { starting_after: "evt_1" } }],
  ["GET /api/v1/payments/{id}/refunds", "limit 0", { query: { limit: "0" } }],
  ["GET /api/v1/refunds.csv", "an unknown status", { query: { status: "paid" } }],
  ["GET /api/v1/payment_links", "limit as a word", { query: { limit: "ten" } }],
  ["GET /api/v1/events", "an unknown event type", { query: { type: "payment.lost" } }],
  ["GET /api/v1/webhook_endpoints/{id}/deliveries", "limit 1000", { query: { limit: "1000" } }],
  ["GET /api/public/payments/{id}/qr", "an unknown format", { query: { format: "png" } }],
];

/** The path's parameters, from the objects made in beforeAll. */
function paramsOf(op: string): Record<string, string> {
  if (op.includes("/payment_links/{id}")) return { id: ids.link };
  if (op.includes("/webhook_endpoints/{id}")) return { id: ids.endpoint };
  if (op.includes("{id}")) return { id: ids.payment };
  return {};
}

test.each(REFUSED)("%s, %s: refused by the server and by the document's schema", async (op, _what, req) => {
  const request = { ...req, params: paramsOf(op), key: op.includes("/api/v1/") ? merchant.apiKey : null };
  const res = await contract.call(op, request);
  expect({ status: res.status }).toEqual({ status: 400 });
  expect(contract.requestProblems(op, request)).not.toEqual([]);
});
