/**
 * The token buckets, in memory (one server on SQLite) and in the store (PostgreSQL, shared by
 * replicas; tested on both engines): the same arithmetic and the same 429s. On PostgreSQL, two
 * connections, and two servers on one database, draw on one budget, not one each.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PgDb } from "../../src/db/postgres.ts";
import { TooManyRequestsError } from "../../src/lib/errors.ts";
import {
  CHAIN_LIMIT,
  createRateLimiter,
  createSharedRateLimiter,
  type RateLimiter,
} from "../../src/rate-limits/index.ts";
import { createRateLimitStore } from "../../src/rate-limits/store.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

function manualClock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The Retry-After of a refused take, or null when it was let through. */
async function retryAfterOf(fn: () => Promise<void>): Promise<string | null> {
  try {
    await fn();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(TooManyRequestsError);
    return String((error as TooManyRequestsError).retryAfterSeconds);
  }
}

const stores: TestStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

type Kind = "memory" | "sqlite" | "postgres";
const KINDS: Kind[] = ["memory", ...ENGINES];

describe.each(KINDS)("token buckets (%s)", (kind) => {
  let store: TestStore | null = null;
  beforeAll(async () => {
    if (kind === "memory") return;
    store = await openTestStore(kind);
    stores.push(store);
  });
  let n = 0;
  /** A limiter on the kind's buckets, and a key prefix of its own for each test. */
  const limiter = (clock: { now(): number }): { limiter: RateLimiter; key: (k: string) => string } => {
    const prefix = `t${++n}:`;
    return {
      limiter: store ? createSharedRateLimiter(createRateLimitStore(store.db), clock) : createRateLimiter(clock),
      key: (k) => prefix + k,
    };
  };

  test("allows the burst, then refuses with Retry-After until tokens come back", async () => {
    const clock = manualClock();
    const { limiter: l, key } = limiter(clock);
    const limit = { burst: 3, perSecond: 0.5 };
    for (let i = 0; i < 3; i++) expect(await retryAfterOf(() => l.take(key("a"), limit))).toBeNull();
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBe("2");
    clock.advance(1_000);
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBe("1");
    clock.advance(1_000);
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBeNull();
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBe("2");
  });

  test("keys are independent, and a slow rate refills exactly (one per 4 s)", async () => {
    const clock = manualClock();
    const { limiter: l, key } = limiter(clock);
    const limit = { burst: 1, perSecond: 0.25, message: "slow down" };
    await l.take(key("a"), limit);
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBe("4");
    expect(await retryAfterOf(() => l.take(key("b"), limit))).toBeNull();
    clock.advance(3_999);
    await expect(l.take(key("a"), limit)).rejects.toThrow("slow down");
    clock.advance(1);
    expect(await retryAfterOf(() => l.take(key("a"), limit))).toBeNull();
  });

  if (kind !== "memory") {
    test("idle buckets are purged, busy ones kept", async () => {
      const clock = manualClock();
      clock.advance(1_000_000_000); // after every other test's buckets
      const buckets = createRateLimitStore(store!.db);
      const stored = createSharedRateLimiter(buckets, clock);
      const limit = { burst: 1, perSecond: 1 };
      await stored.take("idle", limit);
      clock.advance(10_000);
      await stored.take("busy", limit);
      expect(await buckets.purgeIdle(clock.now() - 5_000, 1_000)).toBeGreaterThanOrEqual(1);
      await expect(stored.take("busy", limit)).rejects.toThrow(TooManyRequestsError);
      // Forgotten, it starts full; had it been kept, it would be empty again since the take above.
      expect(await retryAfterOf(() => stored.take("idle", limit))).toBeNull();
    });
  }
});

describe("token buckets in memory", () => {
  test("memory stays bounded: never more than maxKeys buckets, full ones forgotten first, then the least recently used", async () => {
    const clock = manualClock();
    const limiter = createRateLimiter(clock, 10);
    const limit = { burst: 1, perSecond: 1 };
    for (let i = 0; i < 10; i++) await limiter.take(`k${i}`, limit);
    expect(limiter.size).toBe(10);

    clock.advance(500); // every bucket half refilled: none is full, so none can simply be dropped
    expect(await retryAfterOf(() => limiter.take("k0", limit))).not.toBeNull(); // k0 is now the most recent
    await limiter.take("new-1", limit);
    expect(limiter.size).toBe(10);
    // k1, the least recently used, was forgotten: it starts afresh. k0 was kept and is still limited.
    expect(await retryAfterOf(() => limiter.take("k1", limit))).toBeNull();
    expect(await retryAfterOf(() => limiter.take("k0", limit))).not.toBeNull();
    expect(limiter.size).toBe(10);

    clock.advance(5_000); // every bucket full again
    await limiter.take("new-2", limit);
    expect(limiter.size).toBe(1); // the full ones were all forgotten, not just one

    for (let i = 0; i < 1_000; i++) {
      await limiter.take(`flood-${i}`, limit);
      expect(limiter.size).toBeLessThanOrEqual(10);
    }
  });
});

describe("replicas on one PostgreSQL database share the buckets", () => {
  test("two connections draw on one budget: together they get the burst, no more", async () => {
    const store = await openTestStore("postgres");
    stores.push(store);
    const clock = manualClock();
    const second = await PgDb.open(store.databaseUrl!);
    try {
      const limiters = [store.db, second].map((db) => createSharedRateLimiter(createRateLimitStore(db), clock));
      const limit = { burst: 10, perSecond: 1 };
      let allowed = 0;
      for (let i = 0; i < 40; i++)
        if ((await retryAfterOf(() => limiters[i % 2]!.take("shared", limit))) === null) allowed++;
      expect(allowed).toBe(10);
    } finally {
      await second.close();
    }
  });

  test("two servers: a flood of /sync for one payment, spread over both, gets 429 after one burst", async () => {
    const databaseUrl = await createTestDatabase();
    const servers: TestServer[] = [];
    try {
      servers.push(await startTestServer({ databaseUrl }));
      servers.push(await startTestServer({ databaseUrl }));
      const merchant = api(servers[0]!.url, (await servers[0]!.createAccount("Limited")).apiKey);
      const id = (await merchant("/api/v1/payments", { body: { amount: "5.00" } })).json.id as string;
      const statuses: number[] = [];
      for (let i = 0; i < CHAIN_LIMIT.burst + 2; i++) {
        const res = await api(servers[i % 2]!.url, null)(`/api/public/payments/${id}/sync`, {
          body: { tx_hash: `0x${"ab".repeat(32)}` },
        });
        statuses.push(res.status);
      }
      // No chain runs behind the test servers: each allowed call is a 503 from the RPC.
      expect(statuses.slice(0, CHAIN_LIMIT.burst).every((s) => s === 503)).toBe(true);
      expect(statuses.slice(CHAIN_LIMIT.burst)).toEqual([429, 429]);
    } finally {
      for (const server of servers) await server.stop();
    }
  });
});
