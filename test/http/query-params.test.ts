/**
 * Query strings of the list endpoints are checked against their schemas (src/http/query.ts):
 * every bad value is a 400 `{"error"}` naming the parameter and its rule, before any lookup;
 * a request without a valid key is still 401 whatever its query.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: Api;
let endpointId: string;

beforeAll(async () => {
  server = await startTestServer();
  merchant = api(server.url, (await server.createAccount("Querier")).apiKey);
  const created = await merchant("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/q" } });
  expect(created.status).toBe(201);
  endpointId = created.json.id;
});
afterAll(() => server?.stop());

const LIMIT = "limit must be a whole number from 1 to 100";
const lists = () => [
  { path: "/api/v1/payments", cursor: "starting_after must be the id of a payment" },
  { path: "/api/v1/events", cursor: "starting_after must be the id of an event" },
  { path: `/api/v1/webhook_endpoints/${endpointId}/deliveries`, cursor: "starting_after must be the id of a delivery" },
];

async function expect400(path: string, message: string) {
  const res = await merchant(path);
  expect({ path, status: res.status, body: res.json }).toEqual({ path, status: 400, body: { error: message } });
  expect(isErrorBody(res.json)).toBe(true);
}

describe("list query parameters", () => {
  test.each(["0", "101", "abc", "-1", "1.5", "", "1e1", "010", " 5"])(
    "limit=%p is 400 naming limit on every list",
    async (limit) => {
      for (const list of lists()) await expect400(`${list.path}?limit=${encodeURIComponent(limit)}`, LIMIT);
    },
  );

  test("a malformed starting_after is 400 naming it and the id it takes, on every list", async () => {
    for (const list of lists()) {
      for (const bad of ["x", "evt_short", `0x${"AB".repeat(32)}`, "we_' OR 1=1 --"]) {
        await expect400(`${list.path}?starting_after=${encodeURIComponent(bad)}`, list.cursor);
      }
    }
  });

  test("a payment status outside the list is 400 naming status and the statuses", async () => {
    await expect400(
      "/api/v1/payments?status=paid",
      "status must be one of pending, settling, confirmed, underpaid, overpaid, expired, failed",
    );
    await expect400(
      "/api/v1/payments?status=Pending",
      "status must be one of pending, settling, confirmed, underpaid, overpaid, expired, failed",
    );
  });

  test.each(["created[gte]", "created[lt]"])(
    "%s: a malformed or impossible date is 400 naming it, brackets encoded or not",
    async (name) => {
      const message = `${name} must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T12:00:00Z`;
      for (const bad of [
        "yesterday",
        "1700000000",
        "2031-99-99T00:00:00Z",
        "2031-01-01T00:00:00",
        "2031-13-01",
        "2031-02-30",
        "2031-01-01T24:00:00Z",
      ]) {
        await expect400(`/api/v1/payments?${name}=${encodeURIComponent(bad)}`, message);
        await expect400(`/api/v1/payments?${encodeURIComponent(name)}=${encodeURIComponent(bad)}`, message);
      }
    },
  );

  test("an event type that no event has is 400 naming type and the types", async () => {
    const res = await merchant("/api/v1/events?type=payment.paid");
    expect(res.status).toBe(400);
    expect(res.json.error).toStartWith("type must be one of payment.pending, payment.settling, ");
    expect(res.json.error).toContain(
      "payment.settlement_reversed, refund.created, refund.payable, refund.succeeded, refund.canceled, account.updated, test",
    );
  });

  test("good values pass, decoded: a limit, a date, a type, a status", async () => {
    const ok = [
      "/api/v1/payments?limit=100&status=pending&created[gte]=2026-11-01&created[lt]=2099-01-01T00:00:00Z",
      "/api/v1/events?limit=1&type=test",
      `/api/v1/webhook_endpoints/${endpointId}/deliveries?limit=7`,
    ];
    for (const path of ok) {
      const res = await merchant(path);
      expect({ path, status: res.status, has_more: res.json.has_more }).toEqual({ path, status: 200, has_more: false });
    }
  });

  test("the QR code's format outside address and eip681 is 400 naming format", async () => {
    const payment = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    const res = await api(server.url, null)(`/api/public/payments/${payment.json.id}/qr?format=png`);
    expect({ status: res.status, body: res.json }).toEqual({
      status: 400,
      body: { error: "format must be one of address, eip681" },
    });
  });

  test("parameters no list knows are ignored, as before", async () => {
    expect((await merchant("/api/v1/payments?expand=all&_=123")).status).toBe(200);
  });

  test("without a valid key a bad query is still 401", async () => {
    for (const list of lists()) {
      const res = await api(server.url, null)(`${list.path}?limit=abc`);
      expect({ path: list.path, status: res.status }).toEqual({ path: list.path, status: 401 });
    }
  });
});
