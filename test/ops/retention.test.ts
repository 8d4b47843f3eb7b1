/**
 * Data retention (docs/data-retention.md): the purge over a real SQLite file and a real
 * PostgreSQL database with the clock injected, then the server's own periodic loop doing it. What must go goes, what must stay stays.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { type Db, raw, type Sql, sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { createIdempotency } from "../../src/idempotency/index.ts";
import { randomHex, randomIds } from "../../src/lib/ids.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createRetention, RETENTION_MS } from "../../src/ops/retention.ts";
import { startServer } from "../../src/server.ts";
import { createDeliveryStore, type DeliveryRow } from "../../src/webhooks/delivery-store.ts";
import { createWebhookStore } from "../../src/webhooks/store.ts";
import { createTestClock } from "../support/clock.ts";
import { TEST_BASE_URL, testEnv, testResolver } from "../support/server.ts";
import { ENGINES, type Engine, openTestStore } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";

const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

/** Real stores over a fresh SQLite file or PostgreSQL database, on a clock the test sets. */
async function openFixture(engine: Engine) {
  const store = await openTestStore(engine);
  const { db, dataDir } = store;
  const clock = { at: T0, now: () => clock.at };
  const events = createEventStore(db, randomIds);
  const deliveries = createDeliveryStore(db);
  const endpoints = createWebhookStore(db);
  const idempotency = createIdempotency(db, clock);
  const accountId = randomIds.prefixed("acct");
  await db.run(
    sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES (${accountId}, 'Keeper', ${`0x${"11".repeat(20)}`}, NULL, ${T0})`,
  );

  async function endpoint(at: number): Promise<string> {
    const id = randomIds.prefixed("we");
    await endpoints.insertEndpoint({
      id,
      account_id: accountId,
      url: "https://hooks.example.com/x",
      secret: randomIds.webhookSecret(),
      created_at: at,
    });
    return id;
  }

  async function event(at: number, paymentId: string | null = null): Promise<string> {
    const id = randomIds.prefixed("evt");
    const type = paymentId === null ? "test" : "payment.confirmed";
    await events.insertUnrouted({
      id,
      account_id: accountId,
      type,
      payment_id: paymentId,
      payload: JSON.stringify({ id, type }),
      created_at: at,
    });
    return id;
  }

  /** A delivery of `eventId` queued at `at`, with one attempt at `attemptAt` that leaves it in `state`. */
  async function delivery(
    eventId: string,
    endpointId: string,
    at: number,
    state: DeliveryRow["state"],
    attemptAt = at,
  ): Promise<string> {
    const id = randomIds.prefixed("whd");
    await deliveries.insertOne({ id, event_id: eventId, endpoint_id: endpointId, account_id: accountId, now: at });
    const next = state === "pending" ? attemptAt + 3_600_000 : null;
    const attempt = {
      delivery_id: id,
      attempted_at: attemptAt,
      response_status: state === "succeeded" ? 200 : 500,
      error: null,
      duration_ms: 5,
      next_retry_at: next,
    };
    await deliveries.recordAttempt(attempt, state, next, attemptAt);
    return id;
  }

  const ids = async (query: Sql) => new Set((await db.all<{ id: string }>(query)).map((row) => row.id));
  const count = async (table: string) => (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${raw(table)}`))!.n;

  return {
    dataDir,
    db,
    clock,
    events,
    deliveries,
    endpoints,
    idempotency,
    accountId,
    endpoint,
    event,
    delivery,
    ids,
    count,
    retention: (options: { batchSize?: number; pause?: (signal: AbortSignal) => Promise<void> } = {}) =>
      createRetention({ events, deliveries, endpoints, idempotency, clock, log: silentLogger, ...options }),
    close: store.close,
  };
}

/** A payment with a credited transfer, a mined settlement and a redeemed cross-chain burn. */
async function insertPaidPayment(db: Db, accountId: string, at: number): Promise<string> {
  const id = `0x${randomHex(32)}`;
  const deposit = `0x${randomHex(20)}`;
  await db.run(
    sql`INSERT INTO payments (id, account_id, status, amount, amount_received, amount_settled, fee_bps, fee_recipient, payout_address, chain_id,
       token_address, deposit_address, expires_at, created_at, updated_at) VALUES (${id}, ${accountId}, 'confirmed', 1000000, 1000000, 1000000, 0, ${`0x${"22".repeat(20)}`}, ${`0x${"11".repeat(20)}`}, 31337, ${`0x${"33".repeat(20)}`}, ${deposit}, ${at + 3_600_000}, ${at}, ${at})`,
  );
  await db.run(
    sql`INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at, created_at)
     VALUES (${`0x${"ab".repeat(32)}${id.slice(-4)}`}, 0, ${id}, ${`0x${"44".repeat(20)}`}, 1000000, 7, ${`0x${"cd".repeat(32)}`}, ${at}, ${at})`,
  );
  await db.run(
    sql`INSERT INTO settlements (payment_id, nonce, state, tx_hash, tx_hashes, raw_tx, max_fee, priority_fee, amount, submitted_at, updated_at)
     VALUES (${id}, 0, 'mined', '0xee', '["0xee"]', '0x00', '1', '1', 1000000, ${at}, ${at})`,
  );
  await db.run(
    sql`INSERT INTO crosschain_burns (id, payment_id, source_chain, source_domain, tx_hash, state, next_attempt_at, created_at, updated_at)
     VALUES (${randomIds.prefixed("burn")}, ${id}, 'arbitrum', 3, ${`0x${"fa".repeat(32)}`}, 'redeemed', ${at}, ${at}, ${at})`,
  );
  return id;
}

describe.each(ENGINES)("the purge (%s)", (engine) => {
  const NOW = T0 + 40 * DAY;
  const CUTOFF = NOW - RETENTION_MS; // T0 + 10 days
  let f: Awaited<ReturnType<typeof openFixture>>;
  const keep = { events: new Set<string>(), deliveries: new Set<string>(), endpoints: new Set<string>() };
  let attemptsKept = 0;
  let paymentId: string;
  let purged: Record<string, number>;

  beforeAll(async () => {
    f = await openFixture(engine);
    paymentId = await insertPaidPayment(f.db, f.accountId, T0);
    const live = await f.endpoint(T0);
    keep.endpoints.add(live);

    // Finished long ago: the delivery, its attempt and its event go (the payment stays).
    await f.delivery(await f.event(T0, paymentId), live, T0, "succeeded");
    // Finished just before the cutoff goes; exactly at the cutoff stays.
    await f.delivery(await f.event(T0), live, T0, "failed", CUTOFF - 1);
    const atCutoff = await f.event(T0);
    keep.events.add(atCutoff);
    keep.deliveries.add(await f.delivery(atCutoff, live, T0, "failed", CUTOFF));
    attemptsKept++;
    // An old event whose delivery is still being retried stays, delivery and attempts too.
    const retried = await f.event(T0);
    keep.events.add(retried);
    keep.deliveries.add(await f.delivery(retried, live, T0, "pending", CUTOFF - DAY));
    attemptsKept++;
    // Events no delivery refers to: older than the window go, at its edge and younger stay.
    await f.event(T0);
    await f.event(CUTOFF - 1);
    keep.events.add(await f.event(CUTOFF));
    keep.events.add(await f.event(NOW - DAY));
    const recent = await f.event(NOW - DAY, paymentId);
    keep.events.add(recent);
    keep.deliveries.add(await f.delivery(recent, live, NOW - DAY, "succeeded"));
    attemptsKept++;

    // Deleted with only old deliveries: everything goes, the endpoint (and its secret) too.
    const gone = await f.endpoint(T0);
    await f.delivery(await f.event(T0), gone, T0, "succeeded");
    await f.endpoints.deleteEndpoint(gone, f.accountId, T0 + DAY);
    // Deleted, never sent anything: goes.
    await f.endpoints.deleteEndpoint(await f.endpoint(T0), f.accountId, NOW - DAY);
    // Deleted recently with a recent delivery: stays until that delivery goes.
    const deletedRecently = await f.endpoint(T0);
    const lastSent = await f.event(NOW - 2 * DAY);
    keep.events.add(lastSent);
    keep.deliveries.add(await f.delivery(lastSent, deletedRecently, NOW - 2 * DAY, "succeeded"));
    attemptsKept++;
    await f.endpoints.deleteEndpoint(deletedRecently, f.accountId, NOW - DAY);
    keep.endpoints.add(deletedRecently);
    // Disabled by a 410 long ago, not deleted: the endpoint stays, its canceled delivery goes.
    const disabled = await f.endpoint(T0);
    keep.endpoints.add(disabled);
    const queued = await f.event(T0);
    await f.delivery(queued, disabled, T0, "pending");
    await f.deliveries.disableEndpoint(disabled, T0);

    // Idempotency keys: 24 hours.
    const remember = async (at: number, key: string) => {
      f.clock.at = at;
      await f.idempotency.run(f.accountId, key, { n: 1 }, async (commit) => {
        await commit(201, "{}");
        return { status: 201, body: "{}" };
      });
    };
    await remember(NOW - 25 * 3_600_000, "stale");
    await remember(NOW - 23 * 3_600_000, "fresh");

    f.clock.at = NOW;
    purged = await f.retention().purge(new AbortController().signal);
  });

  afterAll(async () => await f?.close());

  test("events older than 30 days go, unless a delivery still refers to them", async () => {
    expect(await f.ids(sql`SELECT id FROM events`)).toEqual(keep.events);
  });

  test("deliveries and their attempts go 30 days after they finished; pending ones stay", async () => {
    expect(await f.ids(sql`SELECT id FROM webhook_deliveries`)).toEqual(keep.deliveries);
    expect(await f.count("webhook_attempts")).toBe(attemptsKept);
    expect(await f.ids(sql`SELECT delivery_id AS id FROM webhook_attempts`)).toEqual(keep.deliveries);
  });

  test("deleted endpoints go once no delivery refers to them; live and disabled ones stay", async () => {
    expect(await f.ids(sql`SELECT id FROM webhook_endpoints`)).toEqual(keep.endpoints);
  });

  test("idempotency keys go after 24 hours", async () => {
    expect(await f.ids(sql`SELECT key AS id FROM idempotency_keys`)).toEqual(new Set(["fresh"]));
  });

  test("a payment, its transfers, settlements and burns are never purged", async () => {
    expect(await f.ids(sql`SELECT id FROM payments`)).toEqual(new Set([paymentId]));
    expect(await f.ids(sql`SELECT payment_id AS id FROM transfers`)).toEqual(new Set([paymentId]));
    expect(await f.ids(sql`SELECT payment_id AS id FROM settlements`)).toEqual(new Set([paymentId]));
    expect(await f.ids(sql`SELECT payment_id AS id FROM crosschain_burns`)).toEqual(new Set([paymentId]));
  });

  test("it reports what it deleted, and a second run finds nothing", async () => {
    expect(purged).toEqual({
      webhook_deliveries: 4,
      events: 6,
      webhook_endpoints: 2,
      idempotency_keys: 1,
      rate_limits: 0,
    });
    expect(await f.retention().purge(new AbortController().signal)).toEqual({
      webhook_deliveries: 0,
      events: 0,
      webhook_endpoints: 0,
      idempotency_keys: 0,
      rate_limits: 0,
    });
  });
});

describe.each(ENGINES)("batches (%s)", (engine) => {
  // SQLite only: its write lock is the whole database's, so a purge holding it across batches would
  // stall every other writer; PostgreSQL's writers lock only the rows they change.
  if (engine === "sqlite")
    test("each transaction deletes at most a batch, and the write lock is free between batches", async () => {
      const f = await openFixture(engine);
      try {
        for (let i = 0; i < 7; i++) await f.event(T0);
        f.clock.at = T0 + RETENTION_MS + DAY;
        // Another connection, which gives up at once when the lock is held.
        const other = new Database(join(f.dataDir, "stablegate.db"));
        other.run("PRAGMA busy_timeout = 0");
        const seen: number[] = [];
        const purged = await f
          .retention({
            batchSize: 2,
            pause: async () => {
              seen.push(await f.count("events"));
              other.run("BEGIN IMMEDIATE");
              other.run("ROLLBACK");
            },
          })
          .purge(new AbortController().signal);
        other.close();
        expect(seen).toEqual([5, 3, 1]);
        expect(purged.events).toBe(7);
        expect(await f.count("events")).toBe(0);
      } finally {
        await f.close();
      }
    });

  test("an abort (shutdown) stops the purge between batches", async () => {
    const f = await openFixture(engine);
    try {
      for (let i = 0; i < 7; i++) await f.event(T0);
      f.clock.at = T0 + RETENTION_MS + DAY;
      const stop = new AbortController();
      const purged = await f.retention({ batchSize: 2, pause: async () => stop.abort() }).purge(stop.signal);
      expect(purged.events).toBe(2);
      expect(await f.count("events")).toBe(5);
    } finally {
      await f.close();
    }
  });
});

describe("the server's periodic loop", () => {
  // On SQLite: the server is started on the fixture's data directory, with the test's clock.
  test("purges on its own, with the server's clock", async () => {
    const f = await openFixture("sqlite");
    const now = Date.now();
    await f.db.run(sql`UPDATE accounts SET created_at = ${now}`);
    const live = await f.endpoint(now);
    const old = await f.event(now, null);
    await f.delivery(old, live, now, "succeeded");
    const paymentId = await insertPaidPayment(f.db, f.accountId, now);
    const deleted = await f.endpoint(now);
    await f.endpoints.deleteEndpoint(deleted, f.accountId, now);
    await f.db.close();

    const clock = createTestClock();
    clock.advance(RETENTION_MS + DAY);
    const config = { ...loadConfig(testEnv(f.dataDir)), port: 0, host: "127.0.0.1", baseUrl: TEST_BASE_URL };
    const server = await startServer(config, { clock, log: silentLogger, resolve: testResolver });
    try {
      const count = async (query: Sql) => (await server.db.get<{ n: number }>(query))!.n;
      await waitFor(
        async () => (await count(sql`SELECT count(*) AS n FROM webhook_endpoints`)) === 1,
        10_000,
        "the deleted endpoint to be purged",
      );
      await waitFor(
        async () => (await count(sql`SELECT count(*) AS n FROM events WHERE id = ${old}`)) === 0,
        10_000,
        "the old event to be purged",
      );
      expect(await count(sql`SELECT count(*) AS n FROM webhook_deliveries`)).toBe(0);
      expect(await count(sql`SELECT count(*) AS n FROM webhook_attempts`)).toBe(0);
      expect(await count(sql`SELECT count(*) AS n FROM payments WHERE id = ${paymentId}`)).toBe(1);
      expect(await count(sql`SELECT count(*) AS n FROM transfers WHERE payment_id = ${paymentId}`)).toBe(1);
    } finally {
      await server.stop();
      rmSync(f.dataDir, { recursive: true, force: true });
    }
  });
});
