import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CHAIN_LIMIT, createRateLimiter } from "../../src/http/rate-limit.ts";
import { TooManyRequestsError } from "../../src/lib/errors.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

function manualClock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function retryAfterOf(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(TooManyRequestsError);
    return String((error as TooManyRequestsError).retryAfterSeconds);
  }
}

describe("createRateLimiter", () => {
  test("memory stays bounded: never more than maxKeys buckets, full ones forgotten first, then the least recently used", () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock, 10);
    const limit = { burst: 1, perSecond: 1 };
    for (let i = 0; i < 10; i++) limiter.take(`k${i}`, limit);
    expect(limiter.size).toBe(10);

    clock.advance(500); // every bucket half refilled: none is full, so none can simply be dropped
    expect(retryAfterOf(() => limiter.take("k0", limit))).not.toBeNull(); // k0 is now the most recent
    limiter.take("new-1", limit);
    expect(limiter.size).toBe(10);
    // k1, the least recently used, was forgotten: it starts afresh. k0 was kept and is still limited.
    expect(retryAfterOf(() => limiter.take("k1", limit))).toBeNull();
    expect(retryAfterOf(() => limiter.take("k0", limit))).not.toBeNull();
    expect(limiter.size).toBe(10);

    clock.advance(5_000); // every bucket full again
    limiter.take("new-2", limit);
    expect(limiter.size).toBe(1); // the full ones were all forgotten, not just one

    for (let i = 0; i < 1_000; i++) {
      limiter.take(`flood-${i}`, limit);
      expect(limiter.size).toBeLessThanOrEqual(10);
    }
  });
});

describe("public endpoints are limited per payment", () => {
  let server: TestServer;
  let merchant: Api;
  beforeAll(async () => {
    server = await startTestServer();
    merchant = api(server.url, server.createAccount("Limited").apiKey);
  });
  afterAll(() => server.stop());

  test("a flood of /sync for one payment gets 429 with Retry-After; other payments are unaffected", async () => {
    const flooded = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
    const other = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
    const sync = (id: string) =>
      fetch(`${server.url}/api/public/payments/${id}/sync`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < CHAIN_LIMIT.burst + 1; i++) statuses.push((await sync(flooded)).status);
    // No chain runs behind the test server: each allowed call is a 503 from the RPC.
    expect(statuses.slice(0, CHAIN_LIMIT.burst).every((s) => s === 503)).toBe(true);
    const refused = await sync(flooded);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toEqual({ error: "too many requests for this payment; try again shortly" });
    expect((await sync(other)).status).toBe(503);
    // Reads have their own, larger allowance.
    expect((await fetch(`${server.url}/api/public/payments/${flooded}`)).status).toBe(200);
  });

  test("unknown ids are 404 and never use up anything", async () => {
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${server.url}/api/public/payments/0x${"9e".repeat(32)}/sync`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tx_hash: `0x${"ab".repeat(32)}` }),
      });
      expect(res.status).toBe(404);
    }
  });
});
