import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/log.ts";
import { api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

/** The operator's token: it unlocks /readyz's details (and would guard /metrics). */
const TOKEN = "ops-token-for-readiness-0123";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ metricsToken: TOKEN });
});
afterAll(() => server.stop());

describe("health", () => {
  test("/healthz is 200", async () => {
    const res = await api(server.url, null)("/healthz");
    expect(res.status).toBe(200);
    expect(res.json.ok).toBe(true);
  });

  test("/readyz without credentials says ready and nothing else, whatever the chain", async () => {
    // The RPC of the test config (127.0.0.1:1) is unreachable: that must not fail readiness.
    const res = await api(server.url, null)("/readyz");
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"status":"ready"}');
  });

  test("/readyz with the metrics token adds the details: store, relayer and its gas, chains, RPC errors, leases", async () => {
    const res = await api(server.url, TOKEN)("/readyz");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "ready", ok: true, store: "ok" });
    const relayer = res.json.chain.settlement.relayer;
    expect(relayer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(res.json.chains[0]).toMatchObject({ role: "settlement", relayer_gas: expect.any(Object) });
    expect(res.json.chains[0].last_error).toEqual(expect.any(String));
    expect(res.json.leases[0]).toMatchObject({ name: "chain" });
    // None of it reaches a caller without the token.
    const { text: open } = await api(server.url, null)("/readyz");
    expect(open.toLowerCase()).not.toContain(relayer.toLowerCase().slice(2));
  });

  test("/readyz with any other bearer is 401 and shows nothing", async () => {
    for (const guess of ["wrong", `${TOKEN}x`, TOKEN.slice(0, -1), `sk_live_${"A".repeat(32)}`]) {
      const res = await api(server.url, guess)("/readyz");
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: "readiness details need the metrics token (Authorization: Bearer <token>)" });
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    }
  });

  test("/readyz on a server without a metrics token never shows the details over HTTP", async () => {
    const bare = await startTestServer({ metricsToken: null });
    try {
      const open = await api(bare.url, null)("/readyz");
      expect({ status: open.status, text: open.text }).toEqual({ status: 200, text: '{"status":"ready"}' });
      for (const guess of [TOKEN, ""]) {
        const res = await api(bare.url, guess)("/readyz");
        expect(res.status).toBe(401);
        expect(res.json.error).toBe(
          "readiness details are not served over HTTP on this server: STABLEGATE_METRICS_TOKEN is not set",
        );
      }
    } finally {
      await bare.stop();
    }
  });
});

describe("GET /", () => {
  test("points at the docs and the health endpoints, as JSON", async () => {
    const res = await api(server.url, null)("/");
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
    const res = await api(server.url, null)(path, { method });
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("internal errors", () => {
  test('a failing store answers 500 {"error":"internal error"}, logs the cause, leaks nothing', async () => {
    const logged: string[] = [];
    const broken = await startTestServer(
      { metricsToken: TOKEN },
      { log: createLogger("error", (line) => logged.push(line)) },
    );
    try {
      const key = (await broken.createAccount("Broken")).apiKey;
      const merchant = api(broken.url, key);
      expect((await merchant("/api/v1/payments")).status).toBe(200);
      const created = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
      expect(created.status).toBe(201);

      await broken.running.db.close();

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
      const page = await api(broken.url, null)(`/pay/${created.json.id}`);
      expect(page.status).toBe(500);
      expect(page.text).not.toMatch(/sqlite|database|stack|\.ts:/i);

      // The cause goes to the log instead.
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join("\n")).toMatch(/unhandled error/);

      const ready = await api(broken.url, null)("/readyz");
      expect({ status: ready.status, text: ready.text }).toEqual({ status: 503, text: '{"status":"not_ready"}' });
      const details = await api(broken.url, TOKEN)("/readyz");
      expect(details.status).toBe(503);
      expect(details.json).toMatchObject({ status: "not_ready", ok: false, store: "unavailable" });
      expect(details.text).not.toMatch(/sqlite|stack/i);
    } finally {
      await broken.stop();
    }
  });
});
