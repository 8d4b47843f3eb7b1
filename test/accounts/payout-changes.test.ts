/**
 * Payout address changes made at once (two operators, two replicas) over a real SQLite file and a
 * real PostgreSQL database: each is decided from what the one before it wrote, so the record of
 * `account.updated` events reads as if they had come one after another.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { createPayoutService } from "../../src/accounts/payout.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { insertAccount } from "../support/payment-rows.ts";
import { TEST_PAYOUT } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const clock = { now: () => Date.UTC(2031, 0, 10, 9) };
/** A checksummed payout address of its own for each `n`. */
const address = (n: number) => getAddress(`0x${n.toString(16).padStart(40, "a")}`);

let store: TestStore;

/** The payout service as another replica on the same database has it: nothing shared but the store. */
const replica = () =>
  createPayoutService({
    store: createAccountStore(store.db),
    events: createEventStore(store.db, randomIds),
    clock,
    ids: randomIds,
    defaultSpeed: "final",
  });

/** The account's changes in the order they were recorded: [previous, new] addresses. */
async function changes(accountId: string): Promise<Array<[string, string]>> {
  const rows = await store.db.all<{ payload: string }>(
    sql`SELECT payload FROM events WHERE account_id = ${accountId} AND type = 'account.updated' ORDER BY seq`,
  );
  return rows.map(({ payload }) => {
    const { data } = JSON.parse(payload);
    return [data.previous_attributes.payout_address, data.account.payout_address];
  });
}

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(() => store?.close());

  test("one new address set at once through as many replicas: changed and recorded once", async () => {
    const accountId = await insertAccount(store.db, "acct_same");
    await Promise.all(Array.from({ length: 20 }, () => replica().setPayoutAddress(accountId, address(1))));
    expect(await changes(accountId)).toEqual([[TEST_PAYOUT, address(1)]]);
  });

  test("different addresses set at once: each change names the address the one before it set", async () => {
    const accountId = await insertAccount(store.db, "acct_many");
    const set = await Promise.all(
      Array.from({ length: 10 }, (_, i) => replica().setPayoutAddress(accountId, address(i + 2))),
    );
    const recorded = await changes(accountId);
    expect(recorded).toHaveLength(10);
    expect(recorded.map(([previous]) => previous)).toEqual([TEST_PAYOUT, ...recorded.slice(0, -1).map(([, to]) => to)]);
    // The account ends with the address the last change set.
    const last = recorded.at(-1)![1];
    expect(set.map((account) => account.payout_address)).toContain(last);
    expect((await createAccountStore(store.db).findAccount(accountId))!.payout_address).toBe(last);
  });
});
