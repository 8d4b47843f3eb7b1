/**
 * Path ids are checked by the routes' params schemas (src/http/params.ts): a malformed id names
 * nothing, so it is answered exactly as an unknown id of the right shape is (404, same message),
 * after the key check on merchant routes, and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: Api;
let endpointId: string;
let deliveryId: string;

beforeAll(async () => {
  server = await startTestServer();
  merchant = api(server.url, (await server.createAccount("Paths")).apiKey);
  const endpoint = await merchant("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/paths" } });
  expect(endpoint.status).toBe(201);
  endpointId = endpoint.json.id;
  const sent = await merchant(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" });
  expect(sent.status).toBe(202);
  deliveryId = sent.json.delivery.id;
});
afterAll(() => server?.stop());

const UNKNOWN_PAYMENT = `0x${"ab".repeat(32)}`;
const MALFORMED = ["abc", "0x123", `0x${"AB".repeat(32)}`, "evt_short", "we_' OR 1=1 --", "%20"];

/** Each merchant route with an id in its path: the path for an id, and the 404 message for it. */
const merchantRoutes = () => [
  {
    method: "GET",
    path: (id: string) => `/api/v1/payments/${id}`,
    unknown: UNKNOWN_PAYMENT,
    message: (id: string) => `no payment ${id}`,
  },
  {
    method: "GET",
    path: (id: string) => `/api/v1/events/${id}`,
    unknown: `evt_${"A".repeat(24)}`,
    message: (id: string) => `no event ${id}`,
  },
  {
    method: "DELETE",
    path: (id: string) => `/api/v1/webhook_endpoints/${id}`,
    unknown: `we_${"A".repeat(24)}`,
    message: (id: string) => `no webhook endpoint ${id}`,
  },
  {
    method: "GET",
    path: (id: string) => `/api/v1/webhook_endpoints/${id}/deliveries`,
    unknown: `we_${"A".repeat(24)}`,
    message: (id: string) => `no webhook endpoint ${id}`,
  },
  {
    method: "POST",
    path: (id: string) => `/api/v1/webhook_endpoints/${id}/test`,
    unknown: `we_${"A".repeat(24)}`,
    message: (id: string) => `no webhook endpoint ${id}`,
  },
  {
    method: "POST",
    path: (id: string) => `/api/v1/webhook_endpoints/${endpointId}/deliveries/${id}/retry`,
    unknown: `whd_${"A".repeat(24)}`,
    message: (id: string) => `no delivery ${id}`,
  },
];

describe("merchant routes", () => {
  test("an unknown id and a malformed one are both 404 with the message naming the id", async () => {
    for (const route of merchantRoutes()) {
      for (const id of [route.unknown, ...MALFORMED]) {
        const res = await merchant(route.path(id), { method: route.method });
        const expected = route.message(decodeURIComponent(id));
        expect({ path: route.path(id), status: res.status, body: res.json }).toEqual({
          path: route.path(id),
          status: 404,
          body: { error: expected },
        });
      }
    }
  });

  test("a malformed delivery id under someone else's endpoint id is still just 404", async () => {
    const res = await merchant(`/api/v1/webhook_endpoints/we_nope/deliveries/x/retry`, { method: "POST" });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("without a valid key a malformed id is 401, never 404", async () => {
    for (const route of merchantRoutes()) {
      const res = await api(server.url, null)(route.path("abc"), { method: route.method });
      expect({ path: route.path("abc"), status: res.status }).toEqual({ path: route.path("abc"), status: 401 });
    }
  });

  test("the well-formed ids still reach their resources, and nothing was deleted or retried", async () => {
    const endpoints = await merchant("/api/v1/webhook_endpoints");
    expect(endpoints.json.data.map((e: { id: string }) => e.id)).toEqual([endpointId]);
    const listed = await merchant(`/api/v1/webhook_endpoints/${endpointId}/deliveries`);
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((d: { id: string }) => d.id)).toEqual([deliveryId]);
  });
});

describe("public routes", () => {
  const routes = [
    { method: "GET", suffix: "" },
    { method: "GET", suffix: "/qr" },
    { method: "GET", suffix: "/cross-chain" },
    { method: "POST", suffix: "/sync", body: { tx_hash: `0x${"cd".repeat(32)}` } },
    { method: "POST", suffix: "/cross-chain", body: { chain: "ethereum", tx_hash: `0x${"cd".repeat(32)}` } },
  ];

  test("unknown and malformed ids answer the same 404 body on every public route", async () => {
    for (const route of routes) {
      for (const id of [UNKNOWN_PAYMENT, ...MALFORMED]) {
        const path = `/api/public/payments/${id}${route.suffix}`;
        const res = await api(server.url, null)(path, { method: route.method, body: route.body });
        expect({ path, status: res.status, body: res.json }).toEqual({
          path,
          status: 404,
          body: { error: "no such payment" },
        });
      }
    }
  });
});
