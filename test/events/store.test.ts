/**
 * The events store (the outbox) on a real SQLite file and a real PostgreSQL database: an event
 * queues one delivery per live endpoint of its account, the stream's reads in order, a payment's
 * history, and the purge that spares events a delivery still refers to.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
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
  afterAll(async () => await opened?.close());

  const newShop = () => insertAccount(opened.db, `acct_events${++shops}`);
  async function event(accountId: string, at: number, paymentId: string | null = null): Promise<string> {
    const id = randomIds.prefixed("evt");
    await store.insert({
      id,
      account_id: accountId,
      type: "test",
      payment_id: paymentId,
      payload: `{"id":"${id}"}`,
      created_at: at,
    });
    return id;
  }
  async function endpoint(accountId: string, state: "live" | "disabled" | "deleted"): Promise<string> {
    const id = randomIds.prefixed("we");
    await opened.db.run(
      sql`INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at, disabled_at, deleted_at)
          VALUES (${id}, ${accountId}, 'https://hooks.example.com/x', 'whsec_x', ${T0},
                  ${state === "disabled" ? T0 : null}, ${state === "deleted" ? T0 : null})`,
    );
    return id;
  }
  const deliveriesOf = (eventId: string) =>
    opened.db.all<{ endpoint_id: string; state: string; next_attempt_at: number }>(
      sql`SELECT endpoint_id, state, next_attempt_at FROM webhook_deliveries WHERE event_id = ${eventId} ORDER BY endpoint_id`,
    );

  test("an event queues a pending delivery, due at once, for each live endpoint of its account only", async () => {
    const shop = await newShop();
    const live = [await endpoint(shop, "live"), await endpoint(shop, "live")].sort();
    await endpoint(shop, "disabled");
    await endpoint(shop, "deleted");
    await endpoint(await newShop(), "live");
    const id = await event(shop, T0 + 5);
    expect(await deliveriesOf(id)).toEqual(
      live.map((endpoint_id) => ({ endpoint_id, state: "pending", next_attempt_at: T0 + 5 })),
    );
    // Unrouted (a test ping): the caller queues it, so nothing is queued here.
    const ping = randomIds.prefixed("evt");
    await store.insertUnrouted({
      id: ping,
      account_id: shop,
      type: "ping",
      payment_id: null,
      payload: "{}",
      created_at: T0,
    });
    expect(await deliveriesOf(ping)).toEqual([]);
  });

  test("the stream reads an account's events after a seq, in order, and knows the newest", async () => {
    const shop = await newShop();
    expect(await store.newest(shop)).toBeNull();
    const ids = [await event(shop, T0), await event(shop, T0 + 1), await event(shop, T0 + 2)];
    await event(await newShop(), T0); // another account's
    const all = await store.listAfter(shop, 0, 10);
    expect(all.map((row) => row.id)).toEqual(ids);
    expect(typeof all[0]!.seq).toBe("number");
    expect((await store.listAfter(shop, all[0]!.seq, 1)).map((row) => row.id)).toEqual([ids[1]!]);
    expect(await store.newest(shop)).toEqual({ seq: all[2]!.seq, id: ids[2]! });
  });

  test("a payment's history, in the order written, for its own account only", async () => {
    const shop = await newShop();
    const payment = (await insertPayment(createPaymentStore(opened.db), paymentRow(shop, T0))).id;
    const ids = [await event(shop, T0 + 2, payment), await event(shop, T0 + 1, payment)];
    expect(await store.historyOfPayment(payment, shop)).toEqual([
      { id: ids[0]!, type: "test", created_at: T0 + 2 },
      { id: ids[1]!, type: "test", created_at: T0 + 1 },
    ]);
    expect((await store.listForPayment(payment)).map((row) => row.id)).toEqual(ids);
    expect(await store.historyOfPayment(payment, await newShop())).toEqual([]);
  });

  test("the purge deletes old events oldest first, up to the limit, and never one a delivery refers to", async () => {
    const shop = await newShop();
    const before = T0 - 1_000;
    const unqueued = await event(shop, before - 10);
    await endpoint(shop, "live"); // from now on each event of the shop is queued
    const queued = await event(shop, before - 5);
    await opened.db.run(sql`UPDATE webhook_endpoints SET deleted_at = ${T0} WHERE account_id = ${shop}`);
    const old = [await event(shop, before - 3), await event(shop, before - 2), await event(shop, before - 1)];
    const kept = await event(shop, before);
    expect(await deliveriesOf(unqueued)).toEqual([]);
    expect(await store.purgeOlderThan(before, 2)).toBe(3 - 1 + 0); // the two oldest ununqueued: unqueued and old[0]
    expect(await store.findForAccount(unqueued, shop)).toBeNull();
    expect(await store.findForAccount(old[0]!, shop)).toBeNull();
    expect(await store.purgeOlderThan(before, 10)).toBe(2);
    for (const id of [queued, kept]) expect((await store.findForAccount(id, shop))?.id).toBe(id);
  });
});
