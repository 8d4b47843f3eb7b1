import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CHAIN_LIMIT } from "../../src/rate-limits/index.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

describe("public endpoints are limited per payment", () => {
  let server: TestServer;
  let merchant: Api;
  beforeAll(async () => {
    server = await startTestServer();
    merchant = api(server.url, (await server.createAccount("Limited")).apiKey);
  });
  afterAll(() => server.stop());

  test("a flood of /sync for one payment gets 429 with Retry-After; other payments are unaffected", async () => {
    const flooded = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
    const other = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
    const sync = (id: string) =>
      api(server.url, null)(`/api/public/payments/${id}/sync`, { body: { tx_hash: `0x${"ab".repeat(32)}` } });
    const statuses: number[] = [];
    for (let i = 0; i < CHAIN_LIMIT.burst + 1; i++) statuses.push((await sync(flooded)).status);
    // No chain runs behind the test server: each allowed call is a 503 from the RPC.
    expect(statuses.slice(0, CHAIN_LIMIT.burst).every((s) => s === 503)).toBe(true);
    const refused = await sync(flooded);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.json).toEqual({ error: "too many requests for this payment; try again shortly" });
    expect((await sync(other)).status).toBe(503);
    // Reads have their own, larger allowance.
    expect((await api(server.url, null)(`/api/public/payments/${flooded}`)).status).toBe(200);
  });

  test("unknown ids are 404 and never use up anything", async () => {
    for (let i = 0; i < 30; i++) {
      const res = await api(server.url, null)(`/api/public/payments/0x${"9e".repeat(32)}/sync`, {
        body: { tx_hash: `0x${"ab".repeat(32)}` },
      });
      expect(res.status).toBe(404);
    }
  });
});
