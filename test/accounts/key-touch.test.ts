/**
 * Recording a key's last use never makes a request wait for another's lock (PostgreSQL): while
 * another transaction holds the key's row, the touch skips it, since that one records the use.
 * A burst of requests on one key, on one replica or several, so never queues on that row.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createAccountStore } from "../../src/accounts/store.ts";
import { sql } from "../../src/db/engine.ts";
import { openTestStore, type TestStore } from "../support/store-engines.ts";

let store: TestStore;
beforeAll(async () => {
  store = await openTestStore("postgres");
});
afterAll(() => store.close());

test("a touch while another transaction holds the key's row skips it at once instead of waiting", async () => {
  const { db } = store;
  const accounts = createAccountStore(db);
  await accounts.insertAccount({
    id: "acct_t",
    name: "T",
    payout_address: `0x${"11".repeat(20)}`,
    fee_bps: null,
    created_at: 0,
  });
  await accounts.insertKey({ id: "key_t", account_id: "acct_t", key_hash: "h", key_hint: "abcd", created_at: 0 });
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holder = db.transaction(async () => {
    await db.all(sql`SELECT id FROM api_keys WHERE id = 'key_t' FOR UPDATE`);
    locked();
    await held;
  });
  await isLocked;
  // Outside the holder's transaction: a request of its own. Were it to wait, it would never
  // answer before the holder is released below.
  const touched = await accounts.touchKey("key_t", 1_000, 0);
  release();
  await holder;
  expect(touched).toBe(false);
  expect(await accounts.touchKey("key_t", 2_000, 1_500)).toBe(true);
});
