/**
 * The webhook endpoints store's SQL on both engines (a real SQLite file, a real PostgreSQL
 * database): an account's endpoints, soft deletion, and the purge of deleted ones.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createDeliveryStore } from "../../src/webhooks/delivery-store.ts";
import { createWebhookStore, type WebhookStore } from "../../src/webhooks/store.ts";
import { insertAccount } from "../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore | undefined;
let endpoints: WebhookStore;

afterEach(() => {
  store?.close();
  store = undefined;
});

describe.each(ENGINES)("webhook endpoints store (%s)", (engine) => {
  let a: string;
  let b: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    endpoints = createWebhookStore(store.db);
    a = insertAccount(store.db, "acct_a");
    b = insertAccount(store.db, "acct_b");
  });
  const add = (id: string, accountId: string, createdAt: number) => {
    const row = { id, account_id: accountId, url: `https://x.example.com/${id}`, secret: `whsec_${id}` };
    endpoints.insertEndpoint({ ...row, created_at: createdAt });
    return { ...row, created_at: createdAt, disabled_at: null, deleted_at: null };
  };

  test("an account's live endpoints, newest first; another account's are not found", () => {
    const first = add("we_1", a, 10);
    const second = add("we_2", a, 20);
    const third = add("we_3", a, 20);
    add("we_b", b, 30);
    expect(endpoints.listEndpoints(a)).toEqual([third, second, first]);
    expect(endpoints.countEndpoints(a)).toBe(3);
    expect(endpoints.findEndpoint("we_1", a)).toEqual(first);
    expect(endpoints.findEndpoint("we_b", a)).toBeNull();
    expect(endpoints.findEndpoint("we_none", a)).toBeNull();
  });

  test("a deleted endpoint is gone from the account's view, once; the purge removes it when no delivery refers to it", () => {
    add("we_1", a, 10);
    add("we_2", a, 20);
    add("we_kept", a, 30);
    const event = randomIds.prefixed("evt");
    createEventStore(store!.db, randomIds).insertUnrouted({
      id: event,
      account_id: a,
      type: "test",
      payment_id: null,
      payload: "{}",
      created_at: 1,
    });
    createDeliveryStore(store!.db).insertOne({
      id: "whd_1",
      event_id: event,
      endpoint_id: "we_2",
      account_id: a,
      now: 1,
    });

    expect(endpoints.deleteEndpoint("we_1", b, 40)).toBe(false); // not b's
    expect(endpoints.deleteEndpoint("we_1", a, 40)).toBe(true);
    expect(endpoints.deleteEndpoint("we_1", a, 50)).toBe(false);
    expect(endpoints.deleteEndpoint("we_2", a, 50)).toBe(true);
    expect(endpoints.findEndpoint("we_1", a)).toBeNull();
    expect(endpoints.listEndpoints(a).map((e) => e.id)).toEqual(["we_kept"]);
    expect(endpoints.countEndpoints(a)).toBe(1);

    expect(endpoints.purgeDeleted(10)).toBe(1); // we_2 stays while its delivery does
    const left = store!.db.query<{ id: string }, []>("SELECT id FROM webhook_endpoints ORDER BY id").all();
    expect(left.map((r) => r.id)).toEqual(["we_2", "we_kept"]);
  });

  test("the purge removes at most its limit", () => {
    for (const id of ["we_1", "we_2", "we_3"]) {
      add(id, a, 10);
      endpoints.deleteEndpoint(id, a, 20);
    }
    expect(endpoints.purgeDeleted(2)).toBe(2);
    expect(endpoints.purgeDeleted(2)).toBe(1);
    expect(endpoints.purgeDeleted(2)).toBe(0);
  });

  test("a transaction that throws leaves nothing behind", () => {
    expect(() =>
      endpoints.transaction(() => {
        add("we_1", a, 10);
        throw new Error("changed my mind");
      }),
    ).toThrow("changed my mind");
    expect(endpoints.countEndpoints(a)).toBe(0);
  });
});
