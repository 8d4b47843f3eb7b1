/**
 * Idempotency keys over time, with the injected clock: a key is kept for 24 hours, then it is
 * free again and purged; a claim left behind by a request that died mid-flight is taken over
 * once it is a minute old, and not before. Each test runs on a real SQLite file and a real
 * PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Db, sql } from "../../src/db/engine.ts";
import { createIdempotency, IDEMPOTENCY_TTL_MS, type Idempotency } from "../../src/idempotency/index.ts";
import { ConflictError, UnprocessableError } from "../../src/lib/errors.ts";
import { createTestClock, type TestClock } from "../support/clock.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";

const MINUTE = 60_000;
const ACCOUNT = "acct_expiry";

let store: TestStore;
let db: Db;
let clock: TestClock;
let idempotency: Idempotency;

let runs = 0;
/** A request whose work stores and returns a response naming which run produced it. */
function request(key: string, body: unknown, using: Idempotency = idempotency) {
  return using.run(ACCOUNT, key, body, async (commit) => {
    const response = { status: 201, body: JSON.stringify({ run: ++runs }) };
    await commit(response.status, response.body);
    return response;
  });
}

/** Waits until the key's claim is stored: on PostgreSQL a request started next may otherwise claim first. */
const claimStored = (key: string) =>
  waitFor(async () => (await storedKeys()).includes(key) || undefined, 5_000, `the claim of ${key}`);

const storedKeys = async () =>
  (await db.all<{ key: string }>(sql`SELECT key FROM idempotency_keys WHERE account_id = ${ACCOUNT} ORDER BY key`)).map(
    (r) => r.key,
  );

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    clock = createTestClock();
    idempotency = createIdempotency(db, clock);
  });

  afterAll(() => store?.close());

  test("a used key replays for 24 hours, then runs afresh, whatever the body", async () => {
    const first = await request("ttl", { amount: "1.00" });
    expect(first.replayed).toBe(false);

    clock.advance(IDEMPOTENCY_TTL_MS - MINUTE);
    expect(await request("ttl", { amount: "1.00" })).toEqual({ ...first, replayed: true });
    await expect(request("ttl", { amount: "2.00" })).rejects.toBeInstanceOf(UnprocessableError);

    clock.advance(2 * MINUTE);
    const afterTtl = await request("ttl", { amount: "2.00" });
    expect(afterTtl.replayed).toBe(false);
    expect(afterTtl.body).not.toBe(first.body);
    // The new use starts a new 24 hours.
    expect(await request("ttl", { amount: "2.00" })).toEqual({ ...afterTtl, replayed: true });
  });

  test("a claim left by a request that never finished is taken over after a minute, not before", async () => {
    // The first request claims the key and never completes (its process died mid-flight).
    void idempotency.run(ACCOUNT, "stale", { amount: "3.00" }, () => new Promise<never>(() => {}));
    await claimStored("stale");

    clock.advance(MINUTE / 2);
    await expect(request("stale", { amount: "3.00" })).rejects.toBeInstanceOf(ConflictError);

    clock.advance(MINUTE);
    const retried = await request("stale", { amount: "3.00" });
    expect(retried.replayed).toBe(false);
    expect(await request("stale", { amount: "3.00" })).toEqual({ ...retried, replayed: true });
  });

  test("the 24 hours and the stale-claim minute end to the millisecond", async () => {
    // A clock that moves only when told: the edges are a millisecond wide, real time would blur them.
    let now = Date.now();
    const frozen = createIdempotency(db, { now: () => now });

    const used = await request("ttl-edge", { amount: "5.00" }, frozen);
    now += IDEMPOTENCY_TTL_MS - 1;
    expect(await request("ttl-edge", { amount: "5.00" }, frozen)).toEqual({ ...used, replayed: true });
    now += 1;
    expect((await request("ttl-edge", { amount: "5.00" }, frozen)).replayed).toBe(false);

    void frozen.run(ACCOUNT, "stale-edge", { amount: "6.00" }, () => new Promise<never>(() => {}));
    await claimStored("stale-edge");
    now += MINUTE - 1;
    await expect(request("stale-edge", { amount: "6.00" }, frozen)).rejects.toBeInstanceOf(ConflictError);
    now += 1;
    expect((await request("stale-edge", { amount: "6.00" }, frozen)).replayed).toBe(false);
  });

  test("purgeExpired deletes keys older than 24 hours and keeps the younger ones", async () => {
    await request("purge-old", { amount: "4.00" });
    clock.advance(12 * 60 * MINUTE);
    await request("purge-young", { amount: "4.00" });
    expect(await storedKeys()).toEqual(expect.arrayContaining(["purge-old", "purge-young"]));

    clock.advance(12 * 60 * MINUTE + MINUTE);
    expect(await idempotency.purgeExpired(1_000)).toBeGreaterThanOrEqual(1);
    const left = await storedKeys();
    expect(left).not.toContain("purge-old");
    expect(left).toContain("purge-young");

    clock.advance(12 * 60 * MINUTE);
    await idempotency.purgeExpired(1_000);
    expect(await storedKeys()).not.toContain("purge-young");
  });
});
