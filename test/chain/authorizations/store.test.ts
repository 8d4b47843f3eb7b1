/**
 * The authorization store on both engines: a record's `updated_at` is when what it shows last
 * changed (status, transaction, failure), not when the submitter last looked at it. A succeeded
 * record is watched to depth, and each look saves its bookkeeping; the record a caller got when
 * it succeeded must stay the record it finds afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAuthorizationStore } from "../../../src/chain/authorizations/store.ts";
import { randomIds } from "../../../src/lib/ids.ts";
import { insertAccount } from "../../support/payment-rows.ts";
import { ENGINES, openTestStore, type TestStore } from "../../support/store-engines.ts";

const T0 = 1_800_000_000_000;

describe.each(ENGINES)("%s", (engine) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(() => store.close());

  test("updated_at moves with the record's status, transaction and failure, and only with them", async () => {
    const authorizations = createAuthorizationStore(store.db);
    const accountId = await insertAccount(store.db, randomIds.prefixed("acct"));
    const id = randomIds.prefixed("auth");
    const inserted = await authorizations.insert({
      id,
      payment_id: null,
      account_id: accountId,
      chain_id: 31337,
      token: `0x${"1".repeat(40)}`,
      from_address: `0x${"2".repeat(40)}`,
      to_address: `0x${"3".repeat(40)}`,
      value: "2000000",
      valid_after: "0",
      valid_before: String(T0 / 1000 + 600),
      nonce: `0x${"4".repeat(64)}`,
      signature: `0x${"5".repeat(130)}`,
      source: "facilitator",
      client: "127.0.0.1",
      resource: null,
      from_block: 1,
      created_at: T0,
    });
    expect(inserted).toBe(true);
    const row = (await authorizations.findById(id))!;
    expect(row.updated_at).toBe(T0);

    const succeeded = { ...row, status: "succeeded" as const, tx_hash: `0x${"6".repeat(64)}`, attempts: 1 };
    await authorizations.save(succeeded, T0 + 1_000);
    expect((await authorizations.findById(id))!.updated_at).toBe(T0 + 1_000);

    // The watch to depth: the next look and an RPC error retried, nothing the record shows.
    await authorizations.save(
      { ...succeeded, next_attempt_at: T0 + 9_000, last_error: "timeout", attempts: 2 },
      T0 + 2_000,
    );
    const watched = (await authorizations.findById(id))!;
    expect(watched).toMatchObject({ updated_at: T0 + 1_000, next_attempt_at: T0 + 9_000, last_error: "timeout" });

    const failed = { ...watched, status: "failed" as const, failure_code: "reverted", failure_message: "reverted" };
    await authorizations.save(failed, T0 + 3_000);
    expect((await authorizations.findById(id))!.updated_at).toBe(T0 + 3_000);
    await authorizations.save({ ...failed, failure_message: "the transfer reverted" }, T0 + 4_000);
    expect((await authorizations.findById(id))!.updated_at).toBe(T0 + 4_000);
  });
});
