import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/log.ts";
import { api, isErrorBody, startTestServer, type TestServer, toApiResponse } from "../support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe("health", () => {
  test("/healthz is 200", async () => {
    const res = await toApiResponse(await fetch(`${server.url}/healthz`));
    expect(res.status).toBe(200);
    expect(res.json.ok).toBe(true);
  });

  test("/readyz is 200 with the store ok, whatever the chain", async () => {
    // The RPC of the test config (127.0.0.1:1) is unreachable: that must not fail readiness.
    const res = await toApiResponse(await fetch(`${server.url}/readyz`));
    expect(res.status).toBe(200);
    expect(res.json.store).toBe("ok");
    expect(res.json).toHaveProperty("chain");
  });
});

describe("GET /", () => {
  test("points at the docs and the health endpoints, as JSON", async () => {
    const res = await toApiResponse(await fetch(`${server.url}/`));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(res.json).toEqual({
      name: "stablegate",
      docs: "/docs",
      openapi: "/openapi.json",
      api: "/api/v1",
      health: "/healthz",
      ready: "/readyz",
    });
  });
});

describe("unknown routes", () => {
  test.each([
    ["GET", "/nope"],
    ["GET", "/api/v2/payments"],
    ["POST", "/api/public/payments"],
    ["DELETE", "/api/public/payments/0x00"],
    ["GET", "/pay"],
    ["GET", "/.env"],
  ])("%s %s is 404 {error}", async (method, path) => {
    const res = await toApiResponse(await fetch(server.url + path, { method }));
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("internal errors", () => {
  test('a failing store answers 500 {"error":"internal error"}, logs the cause, leaks nothing', async () => {
    const logged: string[] = [];
    const broken = await startTestServer({}, { log: createLogger("error", (line) => logged.push(line)) });
    try {
      const key = broken.createAccount("Broken").apiKey;
      const merchant = api(broken.url, key);
      expect((await merchant("/api/v1/payments")).status).toBe(200);
      const created = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
      expect(created.status).toBe(201);

      broken.running.db.close();

      const responses = [
        await merchant("/api/v1/payments"),
        await merchant("/api/v1/payments", { body: { amount: "1.00" } }),
        await api(broken.url, null)(`/api/public/payments/${created.json.id}`),
      ];
      for (const res of responses) {
        expect(res.status).toBe(500);
        expect(res.text).toBe('{"error":"internal error"}');
        expect(res.text).not.toMatch(/sqlite|database|stack|\.ts:|\bat /i);
      }
      const page = await fetch(`${broken.url}/pay/${created.json.id}`);
      expect(page.status).toBe(500);
      expect(await page.text()).not.toMatch(/sqlite|database|stack|\.ts:/i);

      // The cause goes to the log instead.
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join("\n")).toMatch(/unhandled error/);

      const ready = await toApiResponse(await fetch(`${broken.url}/readyz`));
      expect(ready.status).toBe(503);
      expect(ready.json.store).not.toBe("ok");
      expect(ready.text).not.toMatch(/sqlite|stack/i);
    } finally {
      await broken.stop();
    }
  });
});
