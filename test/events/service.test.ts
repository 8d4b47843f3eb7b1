/**
 * The events service over a real SQLite file with the clock injected: the list window is the
 * last 30 days (src/ops/retention.ts), its cursor is the account's own event, and retrieval
 * finds whatever is still kept, listed or not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import type { Db } from "../../src/db/engine.ts";
import { createEventsService } from "../../src/events/service.ts";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { RETENTION_MS } from "../../src/ops/retention.ts";
import { TEST_PAYOUT } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const DAY = 24 * 3_600_000;
const NOW = Date.UTC(2026, 5, 1);
const clock = { at: NOW, now: () => clock.at };

let opened: TestStore;
let db: Db;
let events: ReturnType<typeof createEventsService>;
let store: ReturnType<typeof createEventStore>;
let accounts: ReturnType<typeof createAccountsService>;

async function newAccount(name: string) {
  const id = (await accounts.createAccount({ name, payoutAddress: TEST_PAYOUT })).account.id;
  return (await accounts.findAccount(id))!;
}

/** An event of `account` created at `at`; its payload is its own text, so the list shows which. */
async function event(account: { id: string }, at: number, type = "test"): Promise<string> {
  const id = randomIds.prefixed("evt");
  await store.insertUnrouted({
    id,
    account_id: account.id,
    type,
    payment_id: null,
    payload: `{"id":"${id}","at":${at}}`,
    created_at: at,
  });
  return id;
}

const listed = (page: { payloads: string[] }) => page.payloads.map((text) => JSON.parse(text).id as string);

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    opened = await openTestStore(engine);
    db = opened.db;
    store = createEventStore(db, randomIds);
    events = createEventsService({ store, clock });
    accounts = createAccountsService({ store: createAccountStore(db), clock, ids: randomIds });
  });
  afterAll(async () => await opened?.close());

  describe("events service", () => {
    test("lists the last 30 days newest first: the boundary millisecond in, one before it out; retrieval still finds the older", async () => {
      const account = await newAccount("Window");
      clock.at = NOW;
      const older = await event(account, NOW - RETENTION_MS - 1);
      const boundary = await event(account, NOW - RETENTION_MS);
      const recent = await event(account, NOW - DAY);
      expect(listed(await events.list(account, { limit: 10 }))).toEqual([recent, boundary]);
      expect(JSON.parse(await events.retrieve(account, older)).id).toBe(older);

      // The window moves with the clock, not with the data.
      clock.at = NOW + DAY;
      expect(listed(await events.list(account, { limit: 10 }))).toEqual([recent]);
      clock.at = NOW - 2 * DAY;
      expect(listed(await events.list(account, { limit: 10 }))).toEqual([recent, boundary, older]);
      clock.at = NOW;
    });

    test("pages with starting_after and has_more, filtered by type", async () => {
      const account = await newAccount("Pager");
      const ids: string[] = [];
      for (const i of [0, 1, 2, 3, 4])
        ids.push(await event(account, NOW - (5 - i) * 60_000, i % 2 === 0 ? "test" : "payment.confirmed"));
      const [a, b, d, e] = [ids[0]!, ids[1]!, ids[3]!, ids[4]!];
      const first = await events.list(account, { limit: 2 });
      expect(listed(first)).toEqual([e, d]);
      expect(first.hasMore).toBe(true);
      const last = await events.list(account, { limit: 2, startingAfter: b });
      expect(listed(last)).toEqual([a]);
      expect(last.hasMore).toBe(false);
      expect(listed(await events.list(account, { limit: 10, type: "payment.confirmed" }))).toEqual([d, b]);
    });

    test("another account's event is neither a cursor nor retrievable, exactly as an unknown one", async () => {
      const mine = await newAccount("Mine");
      const theirs = await event(await newAccount("Theirs"), NOW);
      const unknown = randomIds.prefixed("evt");
      await expect(events.list(mine, { limit: 10, startingAfter: theirs })).rejects.toThrow(
        `starting_after: no event ${theirs}`,
      );
      await expect(events.list(mine, { limit: 10, startingAfter: unknown })).rejects.toThrow(
        `starting_after: no event ${unknown}`,
      );
      await expect(events.retrieve(mine, theirs)).rejects.toThrow(`no event ${theirs}`);
      await expect(events.retrieve(mine, unknown)).rejects.toThrow(`no event ${unknown}`);
    });
  });
});
