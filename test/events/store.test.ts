/**
 * The events store (the outbox) on a real SQLite file and a real PostgreSQL database: an event
 * queues one delivery per live endpoint of its account, the stream's reads in order, a payment's
 * history, and the purge that spares events a delivery still refers to.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createEventStore, type EventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const T0 = Date.parse("2031-04-01T00:00:00.000Z");

describe.each(ENGINES)("%s", (engine) => {
  let opened: TestStore;
  let store: EventStore;
  let shops = 0;

  beforeAll(async () => {
    opened = await openTestStore(engine);
    store = createEventStore(opened.db, randomIds);
  });
  afterAll(() => opened?.close());

  const newShop = () => insertAccount(opened.db, `acct_events${++shops}`);
  function event(accountId: string, at: number, paymentId: string | null = null): string {
    const id = randomIds.prefixed("evt");
    store.insert({
      id,
      account_id: accountId,
      type: "test",
      payment_id: paymentId,
      payload: `{"id":"${id}"}`,
      created_at: at,
    });
    return id;
  }
  function endpoint(accountId: string, state: "live" | "disabled" | "deleted"): string {
    const id = randomIds.prefixed("we");
    opened.db.run(
      `INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at, disabled_at, deleted_at)
       VALUES (?, ?, 'https://hooks.example.com/x', 'whsec_x', ?, ?, ?)`,
      [id, accountId, T0, state === "disabled" ? T0 : null, state === "deleted" ? T0 : null],
    );
    return id;
  }
  const deliveriesOf = (eventId: string) =>
    opened.db
      .query<{ endpoint_id: string; state: string; next_attempt_at: number }, [string]>(
        "SELECT endpoint_id, state, next_attempt_at FROM webhook_deliveries WHERE event_id = ? ORDER BY endpoint_id",
      )
      .all(eventId);

  test("an event queues a pending delivery, due at once, for each live endpoint of its account only", () => {
    const shop = newShop();
    const live = [endpoint(shop, "live"), endpoint(shop, "live")].sort();
    endpoint(shop, "disabled");
    endpoint(shop, "deleted");
    endpoint(newShop(), "live");
    const id = event(shop, T0 + 5);
    expect(deliveriesOf(id)).toEqual(
      live.map((endpoint_id) => ({ endpoint_id, state: "pending", next_attempt_at: T0 + 5 })),
    );
    // Unrouted (a test ping): the caller queues it, so nothing is queued here.
    const ping = randomIds.prefixed("evt");
    store.insertUnrouted({ id: ping, account_id: shop, type: "ping", payment_id: null, payload: "{}", created_at: T0 });
    expect(deliveriesOf(ping)).toEqual([]);
  });

  test("the stream reads an account's events after a seq, in order, and knows the newest", () => {
    const shop = newShop();
    expect(store.newest(shop)).toBeNull();
    const ids = [event(shop, T0), event(shop, T0 + 1), event(shop, T0 + 2)];
    event(newShop(), T0); // another account's
    const all = store.listAfter(shop, 0, 10);
    expect(all.map((row) => row.id)).toEqual(ids);
    expect(typeof all[0]!.seq).toBe("number");
    expect(store.listAfter(shop, all[0]!.seq, 1).map((row) => row.id)).toEqual([ids[1]!]);
    expect(store.newest(shop)).toEqual({ seq: all[2]!.seq, id: ids[2]! });
  });

  test("a payment's history, in the order written, for its own account only", () => {
    const shop = newShop();
    const payment = insertPayment(createPaymentStore(opened.db), paymentRow(shop, T0)).id;
    const ids = [event(shop, T0 + 2, payment), event(shop, T0 + 1, payment)];
    expect(store.historyOfPayment(payment, shop)).toEqual([
      { id: ids[0]!, type: "test", created_at: T0 + 2 },
      { id: ids[1]!, type: "test", created_at: T0 + 1 },
    ]);
    expect(store.listForPayment(payment).map((row) => row.id)).toEqual(ids);
    expect(store.historyOfPayment(payment, newShop())).toEqual([]);
  });

  test("the purge deletes old events oldest first, up to the limit, and never one a delivery refers to", () => {
    const shop = newShop();
    const before = T0 - 1_000;
    const unqueued = event(shop, before - 10);
    endpoint(shop, "live"); // from now on each event of the shop is queued
    const queued = event(shop, before - 5);
    opened.db.run("UPDATE webhook_endpoints SET deleted_at = ? WHERE account_id = ?", [T0, shop]);
    const old = [event(shop, before - 3), event(shop, before - 2), event(shop, before - 1)];
    const kept = event(shop, before);
    expect(deliveriesOf(unqueued)).toEqual([]);
    expect(store.purgeOlderThan(before, 2)).toBe(3 - 1 + 0); // the two oldest ununqueued: unqueued and old[0]
    expect(store.findForAccount(unqueued, shop)).toBeNull();
    expect(store.findForAccount(old[0]!, shop)).toBeNull();
    expect(store.purgeOlderThan(before, 10)).toBe(2);
    for (const id of [queued, kept]) expect(store.findForAccount(id, shop)?.id).toBe(id);
  });
});
