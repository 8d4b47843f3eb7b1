/**
 * Data retention (docs/data-retention.md): the purge over a real SQLite file and a real
 * PostgreSQL database with the clock injected, then the server's own periodic loop doing it. What must go goes, what must stay stays.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { Db } from "../../src/db/engine.ts";
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
  db.run("INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES (?, 'Keeper', ?, NULL, ?)", [
    accountId,
    `0x${"11".repeat(20)}`,
    T0,
  ]);

  function endpoint(at: number): string {
    const id = randomIds.prefixed("we");
    endpoints.insertEndpoint({
      id,
      account_id: accountId,
      url: "https://hooks.example.com/x",
      secret: randomIds.webhookSecret(),
      created_at: at,
    });
    return id;
  }

  function event(at: number, paymentId: string | null = null): string {
    const id = randomIds.prefixed("evt");
    const type = paymentId === null ? "test" : "payment.confirmed";
    events.insertUnrouted({
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
  function delivery(
    eventId: string,
    endpointId: string,
    at: number,
    state: DeliveryRow["state"],
    attemptAt = at,
  ): string {
    const id = randomIds.prefixed("whd");
    deliveries.insertOne({ id, event_id: eventId, endpoint_id: endpointId, account_id: accountId, now: at });
    const next = state === "pending" ? attemptAt + 3_600_000 : null;
    const attempt = {
      delivery_id: id,
      attempted_at: attemptAt,
      response_status: state === "succeeded" ? 200 : 500,
      error: null,
      duration_ms: 5,
      next_retry_at: next,
    };
    deliveries.recordAttempt(attempt, state, next, attemptAt);
    return id;
  }

  const ids = (sql: string) =>
    new Set(
      db
        .query<{ id: string }, []>(sql)
        .all()
        .map((row) => row.id),
    );
  const count = (table: string) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;

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
function insertPaidPayment(db: Db, accountId: string, at: number): string {
  const id = `0x${randomHex(32)}`;
  const deposit = `0x${randomHex(20)}`;
  db.run(
    `INSERT INTO payments (id, account_id, status, amount, amount_received, amount_settled, fee_bps, fee_recipient, payout_address, chain_id,
       token_address, deposit_address, expires_at, created_at, updated_at) VALUES (?, ?, 'confirmed', 1000000, 1000000, 1000000, 0, ?, ?, 31337, ?, ?, ?, ?, ?)`,
    [
      id,
      accountId,
      `0x${"22".repeat(20)}`,
      `0x${"11".repeat(20)}`,
      `0x${"33".repeat(20)}`,
      deposit,
      at + 3_600_000,
      at,
      at,
    ],
  );
  db.run(
    `INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at, created_at)
     VALUES (?, 0, ?, ?, 1000000, 7, ?, ?, ?)`,
    [`0x${"ab".repeat(32)}${id.slice(-4)}`, id, `0x${"44".repeat(20)}`, `0x${"cd".repeat(32)}`, at, at],
  );
  db.run(
    `INSERT INTO settlements (payment_id, nonce, state, tx_hash, tx_hashes, raw_tx, max_fee, priority_fee, amount, submitted_at, updated_at)
     VALUES (?, 0, 'mined', '0xee', '["0xee"]', '0x00', '1', '1', 1000000, ?, ?)`,
    [id, at, at],
  );
  db.run(
    `INSERT INTO crosschain_burns (id, payment_id, source_chain, source_domain, tx_hash, state, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, 'arbitrum', 3, ?, 'redeemed', ?, ?, ?)`,
    [randomIds.prefixed("burn"), id, `0x${"fa".repeat(32)}`, at, at, at],
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
    paymentId = insertPaidPayment(f.db, f.accountId, T0);
    const live = f.endpoint(T0);
    keep.endpoints.add(live);

    // Finished long ago: the delivery, its attempt and its event go (the payment stays).
    f.delivery(f.event(T0, paymentId), live, T0, "succeeded");
    // Finished just before the cutoff goes; exactly at the cutoff stays.
    f.delivery(f.event(T0), live, T0, "failed", CUTOFF - 1);
    const atCutoff = f.event(T0);
    keep.events.add(atCutoff);
    keep.deliveries.add(f.delivery(atCutoff, live, T0, "failed", CUTOFF));
    attemptsKept++;
    // An old event whose delivery is still being retried stays, delivery and attempts too.
    const retried = f.event(T0);
    keep.events.add(retried);
    keep.deliveries.add(f.delivery(retried, live, T0, "pending", CUTOFF - DAY));
    attemptsKept++;
    // Events no delivery refers to: older than the window go, at its edge and younger stay.
    f.event(T0);
    f.event(CUTOFF - 1);
    keep.events.add(f.event(CUTOFF));
    keep.events.add(f.event(NOW - DAY));
    const recent = f.event(NOW - DAY, paymentId);
    keep.events.add(recent);
    keep.deliveries.add(f.delivery(recent, live, NOW - DAY, "succeeded"));
    attemptsKept++;

    // Deleted with only old deliveries: everything goes, the endpoint (and its secret) too.
    const gone = f.endpoint(T0);
    f.delivery(f.event(T0), gone, T0, "succeeded");
    f.endpoints.deleteEndpoint(gone, f.accountId, T0 + DAY);
    // Deleted, never sent anything: goes.
    f.endpoints.deleteEndpoint(f.endpoint(T0), f.accountId, NOW - DAY);
    // Deleted recently with a recent delivery: stays until that delivery goes.
    const deletedRecently = f.endpoint(T0);
    const lastSent = f.event(NOW - 2 * DAY);
    keep.events.add(lastSent);
    keep.deliveries.add(f.delivery(lastSent, deletedRecently, NOW - 2 * DAY, "succeeded"));
    attemptsKept++;
    f.endpoints.deleteEndpoint(deletedRecently, f.accountId, NOW - DAY);
    keep.endpoints.add(deletedRecently);
    // Disabled by a 410 long ago, not deleted: the endpoint stays, its canceled delivery goes.
    const disabled = f.endpoint(T0);
    keep.endpoints.add(disabled);
    const queued = f.event(T0);
    f.delivery(queued, disabled, T0, "pending");
    f.deliveries.disableEndpoint(disabled, T0);

    // Idempotency keys: 24 hours.
    const remember = async (at: number, key: string) => {
      f.clock.at = at;
      await f.idempotency.run(f.accountId, key, { n: 1 }, (commit) => {
        commit(201, "{}");
        return { status: 201, body: "{}" };
      });
    };
    await remember(NOW - 25 * 3_600_000, "stale");
    await remember(NOW - 23 * 3_600_000, "fresh");

    f.clock.at = NOW;
    purged = await f.retention().purge(new AbortController().signal);
  });

  afterAll(() => f?.close());

  test("events older than 30 days go, unless a delivery still refers to them", () => {
    expect(f.ids("SELECT id FROM events")).toEqual(keep.events);
  });

  test("deliveries and their attempts go 30 days after they finished; pending ones stay", () => {
    expect(f.ids("SELECT id FROM webhook_deliveries")).toEqual(keep.deliveries);
    expect(f.count("webhook_attempts")).toBe(attemptsKept);
    expect(f.ids("SELECT delivery_id AS id FROM webhook_attempts")).toEqual(keep.deliveries);
  });

  test("deleted endpoints go once no delivery refers to them; live and disabled ones stay", () => {
    expect(f.ids("SELECT id FROM webhook_endpoints")).toEqual(keep.endpoints);
  });

  test("idempotency keys go after 24 hours", () => {
    expect(f.ids("SELECT key AS id FROM idempotency_keys")).toEqual(new Set(["fresh"]));
  });

  test("a payment, its transfers, settlements and burns are never purged", () => {
    expect(f.ids("SELECT id FROM payments")).toEqual(new Set([paymentId]));
    expect(f.ids("SELECT payment_id AS id FROM transfers")).toEqual(new Set([paymentId]));
    expect(f.ids("SELECT payment_id AS id FROM settlements")).toEqual(new Set([paymentId]));
    expect(f.ids("SELECT payment_id AS id FROM crosschain_burns")).toEqual(new Set([paymentId]));
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
        for (let i = 0; i < 7; i++) f.event(T0);
        f.clock.at = T0 + RETENTION_MS + DAY;
        // Another connection, which gives up at once when the lock is held.
        const other = new Database(join(f.dataDir, "stablegate.db"));
        other.run("PRAGMA busy_timeout = 0");
        const seen: number[] = [];
        const purged = await f
          .retention({
            batchSize: 2,
            pause: async () => {
              seen.push(f.count("events"));
              other.run("BEGIN IMMEDIATE");
              other.run("ROLLBACK");
            },
          })
          .purge(new AbortController().signal);
        other.close();
        expect(seen).toEqual([5, 3, 1]);
        expect(purged.events).toBe(7);
        expect(f.count("events")).toBe(0);
      } finally {
        f.close();
      }
    });

  test("an abort (shutdown) stops the purge between batches", async () => {
    const f = await openFixture(engine);
    try {
      for (let i = 0; i < 7; i++) f.event(T0);
      f.clock.at = T0 + RETENTION_MS + DAY;
      const stop = new AbortController();
      const purged = await f.retention({ batchSize: 2, pause: async () => stop.abort() }).purge(stop.signal);
      expect(purged.events).toBe(2);
      expect(f.count("events")).toBe(5);
    } finally {
      f.close();
    }
  });
});

describe("the server's periodic loop", () => {
  // On SQLite: the server is started on the fixture's data directory, with the test's clock.
  test("purges on its own, with the server's clock", async () => {
    const f = await openFixture("sqlite");
    const now = Date.now();
    f.db.run("UPDATE accounts SET created_at = ?", [now]);
    const live = f.endpoint(now);
    const old = f.event(now, null);
    f.delivery(old, live, now, "succeeded");
    const paymentId = insertPaidPayment(f.db, f.accountId, now);
    const deleted = f.endpoint(now);
    f.endpoints.deleteEndpoint(deleted, f.accountId, now);
    f.db.close();

    const clock = createTestClock();
    clock.advance(RETENTION_MS + DAY);
    const config = { ...loadConfig(testEnv(f.dataDir)), port: 0, host: "127.0.0.1", baseUrl: TEST_BASE_URL };
    const server = await startServer(config, { clock, log: silentLogger, resolve: testResolver });
    try {
      const count = (sql: string) => server.db.query<{ n: number }, []>(sql).get()!.n;
      await waitFor(
        () => count("SELECT count(*) AS n FROM webhook_endpoints") === 1,
        10_000,
        "the deleted endpoint to be purged",
      );
      await waitFor(
        () => count(`SELECT count(*) AS n FROM events WHERE id = '${old}'`) === 0,
        10_000,
        "the old event to be purged",
      );
      expect(count("SELECT count(*) AS n FROM webhook_deliveries")).toBe(0);
      expect(count("SELECT count(*) AS n FROM webhook_attempts")).toBe(0);
      expect(count(`SELECT count(*) AS n FROM payments WHERE id = '${paymentId}'`)).toBe(1);
      expect(count(`SELECT count(*) AS n FROM transfers WHERE payment_id = '${paymentId}'`)).toBe(1);
    } finally {
      await server.stop();
      rmSync(f.dataDir, { recursive: true, force: true });
    }
  });
});
