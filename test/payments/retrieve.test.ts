import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: Api;
let bob: Api;

beforeAll(async () => {
  server = await startTestServer();
  alice = api(server.url, (await server.createAccount("Alice")).apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
});
afterAll(() => server.stop());

const randomId = () => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;

describe("GET /api/v1/payments/{id}", () => {
  test("200 with a body byte-equal to the create response", async () => {
    const metadata = `{"z":"last","2":"two","é":"\\u00e9"}`;
    const created = await alice("/api/v1/payments", {
      body: `{"line_items":[{"description":"Widget","unit_amount":"12.50","quantity":2}],"description":"Order","metadata":${metadata}}`,
    });
    expect(created.status).toBe(201);
    const res = await alice(`/api/v1/payments/${created.json.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.text).toBe(created.text);
    expect(res.text).toContain(`"metadata":${metadata}`);
  });

  test("a plain payment retrieves byte-equal too", async () => {
    const created = await alice("/api/v1/payments", { body: { amount: "3.10" } });
    const res = await alice(`/api/v1/payments/${created.json.id}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(created.text);
  });

  test("an unknown id is 404 with an error body", async () => {
    const res = await alice(`/api/v1/payments/${randomId()}`);
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test.each([
    "abc",
    "0x1234",
    `0x${"A".repeat(64)}`,
    `0x${"0".repeat(63)}`,
    `0x${"0".repeat(65)}`,
    `${"0".repeat(66)}`,
    "%00",
    "1%20OR%201=1",
  ])("a malformed id %p is 404", async (id) => {
    const res = await alice(`/api/v1/payments/${id}`);
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("the same id in upper case is not the payment (ids are canonical lower-case hex)", async () => {
    const created = await alice("/api/v1/payments", { body: { amount: "1.00" } });
    const upper = `0x${created.json.id.slice(2).toUpperCase()}`;
    expect((await alice(`/api/v1/payments/${upper}`)).status).toBe(404);
  });
});

describe("GET /api/v1/payments/{id}: security", () => {
  test("another account's payment is 404, indistinguishable from an unknown one", async () => {
    const created = await alice("/api/v1/payments", { body: { amount: "7.00", metadata: { secret: "alice-only" } } });
    const foreign = await bob(`/api/v1/payments/${created.json.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain("alice-only");

    // Same request shape for an id nobody owns: the bodies must match once the id is masked.
    const unknownId = randomId();
    const unknown = await bob(`/api/v1/payments/${unknownId}`);
    expect(unknown.status).toBe(404);
    expect(foreign.text.replaceAll(created.json.id, "<id>")).toBe(unknown.text.replaceAll(unknownId, "<id>"));
    expect(foreign.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
  });

  test("the owner still sees it", async () => {
    const created = await alice("/api/v1/payments", { body: { amount: "7.00" } });
    expect((await alice(`/api/v1/payments/${created.json.id}`)).status).toBe(200);
    expect((await bob(`/api/v1/payments/${created.json.id}`)).status).toBe(404);
  });

  test("without an API key it is 401, even for an existing id", async () => {
    const created = await alice("/api/v1/payments", { body: { amount: "7.00" } });
    const res = await api(server.url, null)(`/api/v1/payments/${created.json.id}`);
    expect(res.status).toBe(401);
    expect(isErrorBody(res.json)).toBe(true);
  });
});
