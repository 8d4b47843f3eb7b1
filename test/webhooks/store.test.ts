/**
 * The webhook endpoints store's SQL on both engines (a real SQLite file, a real PostgreSQL
 * database): an account's endpoints, soft deletion, and the purge of deleted ones; the cap on an
 * account's endpoints when registrations come at once, and, on PostgreSQL, an endpoint deleted
 * while an event is being routed to it, in either order.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Account } from "../../src/accounts/service.ts";
import { sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { createDeliveryStore } from "../../src/webhooks/delivery-store.ts";
import { createWebhookEndpointsService, MAX_ENDPOINTS_PER_ACCOUNT } from "../../src/webhooks/endpoints.ts";
import { createWebhookStore, type WebhookStore } from "../../src/webhooks/store.ts";
import { holdRoutedEvent, settledOrBlocked } from "../support/lock-waits.ts";
import { insertAccount } from "../support/payment-rows.ts";
import { testResolver } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore | undefined;
let endpoints: WebhookStore;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe.each(ENGINES)("webhook endpoints store (%s)", (engine) => {
  let a: string;
  let b: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    endpoints = createWebhookStore(store.db);
    a = await insertAccount(store.db, "acct_a");
    b = await insertAccount(store.db, "acct_b");
  });
  const add = async (id: string, accountId: string, createdAt: number) => {
    const row = { id, account_id: accountId, url: `https://x.example.com/${id}`, secret: `whsec_${id}` };
    await endpoints.insertEndpoint({ ...row, created_at: createdAt });
    return { ...row, created_at: createdAt, disabled_at: null, deleted_at: null };
  };

  test("an account's live endpoints, newest first; another account's are not found", async () => {
    const first = await add("we_1", a, 10);
    const second = await add("we_2", a, 20);
    const third = await add("we_3", a, 20);
    await add("we_b", b, 30);
    expect(await endpoints.listEndpoints(a)).toEqual([third, second, first]);
    expect(await endpoints.countEndpoints(a)).toBe(3);
    expect(await endpoints.findEndpoint("we_1", a)).toEqual(first);
    expect(await endpoints.findEndpoint("we_b", a)).toBeNull();
    expect(await endpoints.findEndpoint("we_none", a)).toBeNull();
  });

  test("a deleted endpoint is gone from the account's view, once; the purge removes it when no delivery refers to it", async () => {
    await add("we_1", a, 10);
    await add("we_2", a, 20);
    await add("we_kept", a, 30);
    const event = randomIds.prefixed("evt");
    await createEventStore(store!.db, randomIds).insertUnrouted({
      id: event,
      account_id: a,
      type: "test",
      payment_id: null,
      payload: "{}",
      created_at: 1,
    });
    await createDeliveryStore(store!.db).insertOne({
      id: "whd_1",
      event_id: event,
      endpoint_id: "we_2",
      account_id: a,
      now: 1,
    });

    expect(await endpoints.deleteEndpoint("we_1", b, 40)).toBe(false); // not b's
    expect(await endpoints.deleteEndpoint("we_1", a, 40)).toBe(true);
    expect(await endpoints.deleteEndpoint("we_1", a, 50)).toBe(false);
    expect(await endpoints.deleteEndpoint("we_2", a, 50)).toBe(true);
    expect(await endpoints.findEndpoint("we_1", a)).toBeNull();
    expect((await endpoints.listEndpoints(a)).map((e) => e.id)).toEqual(["we_kept"]);
    expect(await endpoints.countEndpoints(a)).toBe(1);

    expect(await endpoints.purgeDeleted(10)).toBe(1); // we_2 stays while its delivery does
    const left = await store!.db.all<{ id: string }>(sql`SELECT id FROM webhook_endpoints ORDER BY id`);
    expect(left.map((r) => r.id)).toEqual(["we_2", "we_kept"]);
  });

  test("the purge removes at most its limit", async () => {
    for (const id of ["we_1", "we_2", "we_3"]) {
      await add(id, a, 10);
      await endpoints.deleteEndpoint(id, a, 20);
    }
    expect(await endpoints.purgeDeleted(2)).toBe(2);
    expect(await endpoints.purgeDeleted(2)).toBe(1);
    expect(await endpoints.purgeDeleted(2)).toBe(0);
  });

  test("a transaction that throws leaves nothing behind", async () => {
    await expect(
      endpoints.transaction(async () => {
        await add("we_1", a, 10);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await endpoints.countEndpoints(a)).toBe(0);
  });

  /** The endpoints service as src/webhooks/index.ts builds it (a replica's: nothing shared but the store). */
  const service = () =>
    createWebhookEndpointsService({
      store: createWebhookStore(store!.db),
      clock: { now: () => Date.now() },
      ids: randomIds,
      log: silentLogger,
      allowPrivate: false,
      resolve: testResolver,
      onDeleted: (endpointId, now) => createDeliveryStore(store!.db).cancelForEndpoint(endpointId, now),
    });

  test("registrations at once, through as many replicas, on an account with one place left: one is made", async () => {
    for (let i = 1; i < MAX_ENDPOINTS_PER_ACCOUNT; i++) await add(`we_${i}`, a, i);
    const account = { id: a } as Account;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => service().create(account, `https://hooks.example.com/${i}`)),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const outcome of outcomes)
      if (outcome.status === "rejected")
        expect(outcome.reason.message).toBe(
          `an account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first`,
        );
    expect(await endpoints.countEndpoints(a)).toBe(MAX_ENDPOINTS_PER_ACCOUNT);
  });

  // PostgreSQL only: SQLite runs one transaction at a time, so these cannot interleave there.
  if (engine === "postgres")
    test("an endpoint deleted while an event is routed to it waits for it, then cancels its delivery too", async () => {
      const gone = await add("we_gone", a, 10);
      const kept = await add("we_kept", a, 20);
      const db = store!.db;
      // An event's transaction (a payment's status change, say), held open once the event is routed.
      const { release, done: event } = await holdRoutedEvent(db, a);
      const deleting = service().delete({ id: a } as Account, gone.id);
      await settledOrBlocked(db, deleting);
      release();
      await event;
      await deleting;
      const pending = await db.all<{ endpoint_id: string }>(
        sql`SELECT endpoint_id FROM webhook_deliveries WHERE event_id = 'evt_raced' AND state = 'pending'`,
      );
      expect(pending.map((d) => d.endpoint_id)).toEqual([kept.id]);
    });

  // PostgreSQL only: SQLite runs one transaction at a time, so these cannot interleave there.
  if (engine === "postgres")
    test("an event routed while an endpoint is being deleted waits for the deletion, then leaves the endpoint out", async () => {
      const gone = await add("we_gone", a, 10);
      const kept = await add("we_kept", a, 20);
      const db = store!.db;
      let release = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let canceled = () => {};
      const deleted = new Promise<void>((resolve) => (canceled = resolve));
      // A deletion held open once the endpoint's pending deliveries are canceled.
      const deleting = createWebhookEndpointsService({
        store: createWebhookStore(db),
        clock: { now: () => Date.now() },
        ids: randomIds,
        log: silentLogger,
        allowPrivate: false,
        resolve: testResolver,
        onDeleted: async (endpointId, now) => {
          await createDeliveryStore(db).cancelForEndpoint(endpointId, now);
          canceled();
          await gate;
        },
      }).delete({ id: a } as Account, gone.id);
      await deleted;
      const event = createEventStore(db, randomIds).insert({
        id: "evt_raced",
        account_id: a,
        type: "payment.confirmed",
        payment_id: null,
        payload: "{}",
        created_at: 1,
      });
      await settledOrBlocked(db, event);
      release();
      await deleting;
      await event;
      const pending = await db.all<{ endpoint_id: string }>(
        sql`SELECT endpoint_id FROM webhook_deliveries WHERE event_id = 'evt_raced' AND state = 'pending'`,
      );
      expect(pending.map((d) => d.endpoint_id)).toEqual([kept.id]);
    });
});
