/**
 * The webhook deliveries store's SQL on both engines (a real SQLite file, a real PostgreSQL
 * database): what is claimed and what is skipped, claims lapsing and given back, attempts, an endpoint's pages, a payment's
 * deliveries, cancelling and the purge of finished ones; on PostgreSQL, a retry racing the purge and
 * an endpoint disabled while an event is being routed to it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { sql } from "../../src/db/engine.ts";
import { PgDb } from "../../src/db/postgres.ts";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createDeliveryStore, type DeliveryStore } from "../../src/webhooks/delivery-store.ts";
import { createWebhookStore } from "../../src/webhooks/store.ts";
import { holdRoutedEvent, settledOrBlocked } from "../support/lock-waits.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore | undefined;
let deliveries: DeliveryStore;
let endpoint: (accountId: string, url?: string) => Promise<string>;
let event: (accountId: string, paymentId?: string | null) => Promise<string>;
let delivery: (eventId: string, endpointId: string, accountId: string, at: number) => Promise<string>;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

const NOTHING = { endpoints: [], accounts: [] };

describe.each(ENGINES)("webhook deliveries store (%s)", (engine) => {
  let a: string;
  let b: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    const { db } = store;
    deliveries = createDeliveryStore(db);
    const endpoints = createWebhookStore(db);
    const events = createEventStore(db, randomIds);
    a = await insertAccount(db, "acct_a");
    b = await insertAccount(db, "acct_b");
    endpoint = async (accountId, url = `https://hooks.example.com/${accountId}`) => {
      const id = randomIds.prefixed("we");
      await endpoints.insertEndpoint({ id, account_id: accountId, url, secret: `whsec_${id}`, created_at: 1 });
      return id;
    };
    event = async (accountId, paymentId = null) => {
      const id = randomIds.prefixed("evt");
      const type = paymentId === null ? "test" : "payment.confirmed";
      await events.insertUnrouted({
        id,
        account_id: accountId,
        type,
        payment_id: paymentId,
        payload: JSON.stringify({ id, type }),
        created_at: 1,
      });
      return id;
    };
    delivery = async (eventId, endpointId, accountId, at) => {
      const id = randomIds.prefixed("whd");
      await deliveries.insertOne({ id, event_id: eventId, endpoint_id: endpointId, account_id: accountId, now: at });
      return id;
    };
  });

  test("claimed deliveries come oldest first with what sending needs, less the skipped endpoints and accounts", async () => {
    const ea = await endpoint(a);
    const eb = await endpoint(b);
    const evA = await event(a);
    const first = await delivery(evA, ea, a, 10);
    const second = await delivery(await event(b), eb, b, 20);
    const third = await delivery(await event(a), ea, a, 30);
    await delivery(await event(a), ea, a, 40); // not due yet
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    // Each claim is given back at once (due again at 10), so the next one sees the same rows.
    const claim = async (limit: number, skip: { endpoints: string[]; accounts: string[] } = NOTHING) => {
      const rows = await deliveries.claimDue(30, limit, { claimer: "w", until: 1_000 }, skip);
      await deliveries.release("w", 10);
      return rows;
    };

    expect(ids(await claim(2))).toEqual([first, second]);
    const due = await claim(10);
    expect(ids(due).sort()).toEqual([first, second, third].sort());
    // The delivery's own columns, its next attempt moved to the claim's end, and what sending it needs.
    expect(due.find((row) => row.id === first)).toEqual({
      id: first,
      event_id: evA,
      endpoint_id: ea,
      account_id: a,
      state: "pending",
      attempts: 0,
      next_attempt_at: 1_000,
      created_at: 10,
      updated_at: 10,
      url: `https://hooks.example.com/${a}`,
      secret: `whsec_${ea}`,
      payload: JSON.stringify({ id: evA, type: "test" }),
    });
    expect(ids(await claim(10, { ...NOTHING, endpoints: [eb] })).sort()).toEqual([first, third].sort());
    expect(ids(await claim(10, { ...NOTHING, accounts: [a] }))).toEqual([second]);
    expect(ids(await claim(10, { endpoints: [ea], accounts: [b] }))).toEqual([]);
    expect(await deliveries.countPending()).toBe(4);
  });

  test("a claim hides its deliveries until it lapses or is given back; an attempt recorded ends it", async () => {
    const ea = await endpoint(a);
    const first = await delivery(await event(a), ea, a, 10);
    const second = await delivery(await event(a), ea, a, 10);
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
    const claim = async (claimer: string, now: number, limit = 10) =>
      ids(await deliveries.claimDue(now, limit, { claimer, until: now + 100 }, NOTHING));

    expect(await claim("w1", 20, 1)).toEqual([first]);
    expect(await claim("w2", 25)).toEqual([second]);
    expect(await claim("w3", 119)).toEqual([]);
    // w1's claim lapsed (w1 died mid-send): another worker claims it.
    expect(await claim("w3", 120)).toEqual([first]);
    // w2 gives its claim back (it is stopping): due at once.
    expect(await deliveries.release("w2", 130, [second])).toBe(1);
    expect(await deliveries.release("w2", 130, [second])).toBe(0);
    expect(await claim("w1", 130)).toEqual([second]);
    // w1 records an attempt: the delivery is no longer its claim, and releasing it changes nothing.
    await deliveries.recordAttempt(
      { delivery_id: second, attempted_at: 131, response_status: 500, error: null, duration_ms: 1, next_retry_at: 200 },
      "pending",
      200,
      131,
    );
    expect(await deliveries.release("w1", 140)).toBe(0);
    expect(await claim("w2", 199)).toEqual([]);
    expect(await claim("w2", 200)).toEqual([second]);
    // A restarted w3 takes back every claim of its previous process at once.
    expect(await deliveries.release("w3", 150)).toBe(1);
    expect(await claim("w1", 150)).toEqual([first]);
  });

  if (engine === "postgres") {
    test("a claim passes over rows another replica is claiming this moment, rather than waiting for them", async () => {
      const ea = await endpoint(a);
      const first = await delivery(await event(a), ea, a, 10);
      const second = await delivery(await event(a), ea, a, 20);
      // Another replica's claim in progress holds `first` locked; ours must neither wait nor take it.
      const impatient = await PgDb.open(store!.databaseUrl!, { statementTimeoutMs: 1_000, answerWithinMs: 5_000 });
      const other = new SQL(store!.databaseUrl!, { max: 1 });
      try {
        await other.begin(async (tx) => {
          await tx`SELECT id FROM webhook_deliveries WHERE id = ${first} FOR UPDATE`;
          const claimed = await createDeliveryStore(impatient).claimDue(
            30,
            10,
            { claimer: "w", until: 1_000 },
            NOTHING,
          );
          expect(claimed.map((row) => row.id)).toEqual([second]);
        });
      } finally {
        await other.close();
        await impatient.close();
      }
    });
  }

  test("an attempt moves a pending delivery on and is listed newest first; a finished one stays as it is", async () => {
    const ea = await endpoint(a);
    const id = await delivery(await event(a), ea, a, 10);
    const attempt = { delivery_id: id, response_status: 500, error: null, duration_ms: 7 };
    await deliveries.recordAttempt({ ...attempt, attempted_at: 11, next_retry_at: 100 }, "pending", 100, 11);
    await deliveries.recordAttempt({ ...attempt, attempted_at: 100, next_retry_at: null }, "failed", null, 100);
    expect(await deliveries.find(id, ea)).toMatchObject({ state: "failed", attempts: 2, next_attempt_at: null });
    const attempts = await deliveries.attempts(id);
    expect(attempts.map(({ id: _, ...rest }) => rest)).toEqual([
      { ...attempt, attempted_at: 100, next_retry_at: null },
      { ...attempt, attempted_at: 11, next_retry_at: 100 },
    ]);
    expect(attempts[0]!.id).toBeGreaterThan(attempts[1]!.id);
    await deliveries.recordAttempt({ ...attempt, attempted_at: 200, next_retry_at: null }, "succeeded", null, 200);
    expect(await deliveries.find(id, ea)).toMatchObject({ state: "failed", attempts: 2, updated_at: 100 });
    expect(await deliveries.countPending()).toBe(0);
  });

  test("an endpoint's deliveries page newest first in the order they were made; a cursor not its own gives null", async () => {
    const ea = await endpoint(a);
    const other = await endpoint(a);
    const evA = await event(a);
    // Made in the same millisecond: only their creation order tells them apart.
    const made: string[] = [];
    for (const ev of [evA, await event(a), await event(a), await event(a)]) made.push(await delivery(ev, ea, a, 10));
    const [d0, d1, d2, d3] = made as [string, string, string, string];
    const elsewhere = await delivery(evA, other, a, 10);
    const page = async (after: string | null, limit: number) =>
      (await deliveries.list(ea, after, limit))?.map((r) => r.id) ?? null;
    // One more than asked, so the caller knows another page follows.
    expect(await page(null, 2)).toEqual([d3, d2, d1]);
    expect(await page(d2, 2)).toEqual([d1, d0]);
    expect(await page(d0, 2)).toEqual([]);
    expect(await page(elsewhere, 2)).toBeNull();
    expect(await page("whd_unknown", 2)).toBeNull();
    expect(await deliveries.find(d0, ea)).toEqual({
      id: d0,
      event_id: evA,
      endpoint_id: ea,
      account_id: a,
      state: "pending",
      attempts: 0,
      next_attempt_at: 10,
      created_at: 10,
      updated_at: 10,
      event_type: "test",
      payment_id: null,
    });
    expect(await deliveries.find(d0, other)).toBeNull();
  });

  test("a payment's deliveries come oldest first, to the account's own endpoints only", async () => {
    const payment = (await insertPayment(createPaymentStore(store!.db), paymentRow(a, 0))).id;
    const first = await endpoint(a, "https://one.example.com/");
    const second = await endpoint(a, "https://two.example.com/");
    const ev = await event(a, payment);
    const d2 = await delivery(ev, second, a, 10);
    const d1 = await delivery(ev, first, a, 10);
    await delivery(await event(a), first, a, 10); // an event about no payment
    const listed = await deliveries.listForPayment(payment, a);
    expect(listed.map((r) => [r.id, r.endpoint_url, r.event_type])).toEqual([
      [d2, "https://two.example.com/", "payment.confirmed"],
      [d1, "https://one.example.com/", "payment.confirmed"],
    ]);
    expect(Object.keys(listed[0]!).sort()).toEqual(
      [
        "id",
        "event_id",
        "endpoint_id",
        "account_id",
        "state",
        "attempts",
        "next_attempt_at",
        "created_at",
        "updated_at",
        "event_type",
        "endpoint_url",
      ].sort(),
    );
    expect(await deliveries.listForPayment(payment, b)).toEqual([]);
  });

  test("a disabled endpoint's pending deliveries are canceled, and a requeued one is pending again", async () => {
    const ea = await endpoint(a);
    const eb = await endpoint(b);
    const gone = await delivery(await event(a), ea, a, 10);
    const kept = await delivery(await event(b), eb, b, 10);
    await deliveries.disableEndpoint(ea, 50);
    expect(await deliveries.find(gone, ea)).toMatchObject({ state: "canceled", next_attempt_at: null, updated_at: 50 });
    expect(await deliveries.find(kept, eb)).toMatchObject({ state: "pending" });
    expect(await deliveries.cancelForEndpoint(ea, 60)).toBe(0);
    const disabledAt = async () =>
      (await store!.db.get<{ at: number }>(sql`SELECT disabled_at AS at FROM webhook_endpoints WHERE id = ${ea}`))!.at;
    expect(await disabledAt()).toBe(50);
    await deliveries.disableEndpoint(ea, 70); // disabled once: the first time stays
    expect(await disabledAt()).toBe(50);
    await deliveries.requeue(gone, 80);
    expect(await deliveries.find(gone, ea)).toMatchObject({ state: "pending", next_attempt_at: 80, updated_at: 80 });
  });

  test("the purge deletes deliveries finished before the cutoff with their attempts, oldest first, up to the limit", async () => {
    const ea = await endpoint(a);
    const finish = async (at: number, state: "succeeded" | "failed" | "pending") => {
      const id = await delivery(await event(a), ea, a, 1);
      const next = state === "pending" ? at + 100 : null;
      await deliveries.recordAttempt(
        { delivery_id: id, attempted_at: at, response_status: 200, error: null, duration_ms: 1, next_retry_at: next },
        state,
        next,
        at,
      );
      return id;
    };
    const oldest = await finish(10, "failed");
    const older = await finish(20, "succeeded");
    const recent = await finish(40, "succeeded");
    const pending = await finish(5, "pending");
    expect(await deliveries.purgeFinished(30, 1)).toBe(1);
    expect(await deliveries.find(oldest, ea)).toBeNull();
    expect(await deliveries.attempts(oldest)).toEqual([]);
    expect(await deliveries.purgeFinished(30, 10)).toBe(1);
    expect(await deliveries.find(older, ea)).toBeNull();
    expect(await deliveries.purgeFinished(30, 10)).toBe(0);
    for (const id of [recent, pending]) expect(await deliveries.attempts(id)).toHaveLength(1);
  });

  // PostgreSQL only: SQLite runs one transaction at a time, so these cannot interleave there.
  if (engine === "postgres")
    test("a delivery sent again while the purge chooses it is waited for, then kept with its attempts", async () => {
      const { db } = store!;
      const ea = await endpoint(a);
      const id = await delivery(await event(a), ea, a, 1);
      const attempt = { delivery_id: id, attempted_at: 10, response_status: 200, error: null, duration_ms: 1 };
      await deliveries.recordAttempt({ ...attempt, next_retry_at: null }, "succeeded", null, 10);
      let release = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let sent = () => {};
      const requeued = new Promise<void>((resolve) => (sent = resolve));
      // A merchant's retry, held open once it has made the delivery pending again.
      const retry = db.transaction(async () => {
        await deliveries.requeue(id, 50);
        sent();
        await gate;
      });
      await requeued;
      const purge = deliveries.purgeFinished(30, 10);
      await settledOrBlocked(db, purge);
      release();
      await retry;
      expect(await purge).toBe(0);
      expect(await deliveries.find(id, ea)).toMatchObject({ state: "pending", next_attempt_at: 50 });
      expect(await deliveries.attempts(id)).toHaveLength(1);
    });

  // PostgreSQL only: SQLite runs one transaction at a time, so these cannot interleave there.
  if (engine === "postgres")
    test("an endpoint disabled while an event is routed to it waits for it, then cancels its delivery too", async () => {
      const { db } = store!;
      const ea = await endpoint(a);
      const { release, done: routing } = await holdRoutedEvent(db, a);
      // The worker's transaction after a 410 Gone.
      const disabling = db.transaction(() => deliveries.disableEndpoint(ea, 50));
      await settledOrBlocked(db, disabling);
      release();
      await routing;
      await disabling;
      const left = await db.all<{ state: string }>(
        sql`SELECT state FROM webhook_deliveries WHERE event_id = 'evt_raced'`,
      );
      expect(left).toEqual([{ state: "canceled" }]);
    });
});
