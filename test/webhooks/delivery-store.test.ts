/**
 * The webhook deliveries store's SQL on both engines (a real SQLite file, a real PostgreSQL
 * database): what is due and what is skipped, attempts, an endpoint's pages, a payment's
 * deliveries, cancelling and the purge of finished ones.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createDeliveryStore, type DeliveryStore } from "../../src/webhooks/delivery-store.ts";
import { createWebhookStore } from "../../src/webhooks/store.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore | undefined;
let deliveries: DeliveryStore;
let endpoint: (accountId: string, url?: string) => string;
let event: (accountId: string, paymentId?: string | null) => string;
let delivery: (eventId: string, endpointId: string, accountId: string, at: number) => string;

afterEach(() => {
  store?.close();
  store = undefined;
});

const NOTHING = { deliveries: [], endpoints: [], accounts: [] };

describe.each(ENGINES)("webhook deliveries store (%s)", (engine) => {
  let a: string;
  let b: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    const { db } = store;
    deliveries = createDeliveryStore(db);
    const endpoints = createWebhookStore(db);
    const events = createEventStore(db, randomIds);
    a = insertAccount(db, "acct_a");
    b = insertAccount(db, "acct_b");
    endpoint = (accountId, url = `https://hooks.example.com/${accountId}`) => {
      const id = randomIds.prefixed("we");
      endpoints.insertEndpoint({ id, account_id: accountId, url, secret: `whsec_${id}`, created_at: 1 });
      return id;
    };
    event = (accountId, paymentId = null) => {
      const id = randomIds.prefixed("evt");
      const type = paymentId === null ? "test" : "payment.confirmed";
      events.insertUnrouted({
        id,
        account_id: accountId,
        type,
        payment_id: paymentId,
        payload: JSON.stringify({ id, type }),
        created_at: 1,
      });
      return id;
    };
    delivery = (eventId, endpointId, accountId, at) => {
      const id = randomIds.prefixed("whd");
      deliveries.insertOne({ id, event_id: eventId, endpoint_id: endpointId, account_id: accountId, now: at });
      return id;
    };
  });

  test("due deliveries come oldest first with what sending needs, less the skipped deliveries, endpoints, accounts", () => {
    const ea = endpoint(a);
    const eb = endpoint(b);
    const evA = event(a);
    const first = delivery(evA, ea, a, 10);
    const second = delivery(event(b), eb, b, 20);
    const third = delivery(event(a), ea, a, 30);
    delivery(event(a), ea, a, 40); // not due yet
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

    const due = deliveries.due(30, 10, NOTHING);
    expect(ids(due)).toEqual([first, second, third]);
    // The delivery's own columns, nothing more, and what sending it needs.
    expect(due[0]).toEqual({
      id: first,
      event_id: evA,
      endpoint_id: ea,
      account_id: a,
      state: "pending",
      attempts: 0,
      next_attempt_at: 10,
      created_at: 10,
      updated_at: 10,
      url: `https://hooks.example.com/${a}`,
      secret: `whsec_${ea}`,
      payload: JSON.stringify({ id: evA, type: "test" }),
    });
    expect(ids(deliveries.due(30, 2, NOTHING))).toEqual([first, second]);
    expect(ids(deliveries.due(30, 10, { ...NOTHING, deliveries: [first, third] }))).toEqual([second]);
    expect(ids(deliveries.due(30, 10, { ...NOTHING, endpoints: [eb] }))).toEqual([first, third]);
    expect(ids(deliveries.due(30, 10, { ...NOTHING, accounts: new Set([a]) }))).toEqual([second]);
    expect(ids(deliveries.due(30, 10, { deliveries: [second], endpoints: [ea], accounts: [] }))).toEqual([]);
    expect(deliveries.countPending()).toBe(4);
  });

  test("an attempt moves a pending delivery on and is listed newest first; a finished one stays as it is", () => {
    const ea = endpoint(a);
    const id = delivery(event(a), ea, a, 10);
    const attempt = { delivery_id: id, response_status: 500, error: null, duration_ms: 7 };
    deliveries.recordAttempt({ ...attempt, attempted_at: 11, next_retry_at: 100 }, "pending", 100, 11);
    deliveries.recordAttempt({ ...attempt, attempted_at: 100, next_retry_at: null }, "failed", null, 100);
    expect(deliveries.find(id, ea)).toMatchObject({ state: "failed", attempts: 2, next_attempt_at: null });
    const attempts = deliveries.attempts(id);
    expect(attempts.map(({ id: _, ...rest }) => rest)).toEqual([
      { ...attempt, attempted_at: 100, next_retry_at: null },
      { ...attempt, attempted_at: 11, next_retry_at: 100 },
    ]);
    expect(attempts[0]!.id).toBeGreaterThan(attempts[1]!.id);
    deliveries.recordAttempt({ ...attempt, attempted_at: 200, next_retry_at: null }, "succeeded", null, 200);
    expect(deliveries.find(id, ea)).toMatchObject({ state: "failed", attempts: 2, updated_at: 100 });
    expect(deliveries.countPending()).toBe(0);
  });

  test("an endpoint's deliveries page newest first in the order they were made; a cursor not its own gives null", () => {
    const ea = endpoint(a);
    const other = endpoint(a);
    const evA = event(a);
    // Made in the same millisecond: only their creation order tells them apart.
    const [d0, d1, d2, d3] = [evA, event(a), event(a), event(a)].map((ev) => delivery(ev, ea, a, 10)) as [
      string,
      string,
      string,
      string,
    ];
    const elsewhere = delivery(evA, other, a, 10);
    const page = (after: string | null, limit: number) => deliveries.list(ea, after, limit)?.map((r) => r.id) ?? null;
    // One more than asked, so the caller knows another page follows.
    expect(page(null, 2)).toEqual([d3, d2, d1]);
    expect(page(d2, 2)).toEqual([d1, d0]);
    expect(page(d0, 2)).toEqual([]);
    expect(page(elsewhere, 2)).toBeNull();
    expect(page("whd_unknown", 2)).toBeNull();
    expect(deliveries.find(d0, ea)).toEqual({
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
    expect(deliveries.find(d0, other)).toBeNull();
  });

  test("a payment's deliveries come oldest first, to the account's own endpoints only", () => {
    const payment = insertPayment(createPaymentStore(store!.db), paymentRow(a, 0)).id;
    const first = endpoint(a, "https://one.example.com/");
    const second = endpoint(a, "https://two.example.com/");
    const ev = event(a, payment);
    const d2 = delivery(ev, second, a, 10);
    const d1 = delivery(ev, first, a, 10);
    delivery(event(a), first, a, 10); // an event about no payment
    const listed = deliveries.listForPayment(payment, a);
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
    expect(deliveries.listForPayment(payment, b)).toEqual([]);
  });

  test("a disabled endpoint's pending deliveries are canceled, and a requeued one is pending again", () => {
    const ea = endpoint(a);
    const eb = endpoint(b);
    const gone = delivery(event(a), ea, a, 10);
    const kept = delivery(event(b), eb, b, 10);
    deliveries.disableEndpoint(ea, 50);
    expect(deliveries.find(gone, ea)).toMatchObject({ state: "canceled", next_attempt_at: null, updated_at: 50 });
    expect(deliveries.find(kept, eb)).toMatchObject({ state: "pending" });
    expect(deliveries.cancelForEndpoint(ea, 60)).toBe(0);
    const disabledAt = () =>
      store!.db.query<{ at: number }, [string]>("SELECT disabled_at AS at FROM webhook_endpoints WHERE id = ?").get(ea)!
        .at;
    expect(disabledAt()).toBe(50);
    deliveries.disableEndpoint(ea, 70); // disabled once: the first time stays
    expect(disabledAt()).toBe(50);
    deliveries.requeue(gone, 80);
    expect(deliveries.find(gone, ea)).toMatchObject({ state: "pending", next_attempt_at: 80, updated_at: 80 });
  });

  test("the purge deletes deliveries finished before the cutoff with their attempts, oldest first, up to the limit", () => {
    const ea = endpoint(a);
    const finish = (at: number, state: "succeeded" | "failed" | "pending") => {
      const id = delivery(event(a), ea, a, 1);
      const next = state === "pending" ? at + 100 : null;
      deliveries.recordAttempt(
        { delivery_id: id, attempted_at: at, response_status: 200, error: null, duration_ms: 1, next_retry_at: next },
        state,
        next,
        at,
      );
      return id;
    };
    const oldest = finish(10, "failed");
    const older = finish(20, "succeeded");
    const recent = finish(40, "succeeded");
    const pending = finish(5, "pending");
    expect(deliveries.purgeFinished(30, 1)).toBe(1);
    expect(deliveries.find(oldest, ea)).toBeNull();
    expect(deliveries.attempts(oldest)).toEqual([]);
    expect(deliveries.purgeFinished(30, 10)).toBe(1);
    expect(deliveries.find(older, ea)).toBeNull();
    expect(deliveries.purgeFinished(30, 10)).toBe(0);
    for (const id of [recent, pending]) expect(deliveries.attempts(id)).toHaveLength(1);
  });
});
