/**
 * The burn records' SQL: on both engines (a real SQLite file, a real PostgreSQL database) a burn
 * is recorded once per payment, followed and saved, and amounts that would wrap are refused; on
 * SQLite, migration 005 keys a burn by the payment it was posted for, keeping every row recorded
 * before it (PostgreSQL's schema starts past 005, so it has no such upgrade).
 */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type BurnStore, createBurnStore } from "../../../src/chain/redeeming/store.ts";
import { sql } from "../../../src/db/engine.ts";
import { migrate, openDb } from "../../../src/db/index.ts";
import { SQLITE_MIGRATIONS } from "../../../src/db/migrations.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../../support/payment-rows.ts";
import { makeTempDir } from "../../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../../support/store-engines.ts";

const dirs: string[] = [];
let store: TestStore | undefined;
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await store?.close();
  store = undefined;
});

const TX = `0x${"ab".repeat(32)}`;

function addPayment(db: Database, id: string, deposit: string) {
  db.query(
    `INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id, token_address,
       deposit_address, expires_at, created_at, updated_at)
     VALUES (?, 'acct_x', 'pending', 5000000, 0, ?, ?, 31337, ?, ?, 2, 1, 1)`,
  ).run(id, deposit, deposit, deposit, deposit);
}

describe("migration 005", () => {
  test("keeps every burn recorded before it, and lets another payment record the same transaction", async () => {
    const dir = makeTempDir("stablegate-burns-");
    dirs.push(dir);
    // A data dir as a server before 005 left it, with a burn a wrong payment posted first.
    const old = new Database(join(dir, "stablegate.db"), { create: true, strict: true });
    old.run("PRAGMA foreign_keys = ON");
    old.run(
      "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
    );
    for (const m of SQLITE_MIGRATIONS.filter((m) => m.version <= 4)) {
      old.run(m.sql);
      old.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 1)").run(m.version, m.name);
    }
    old.run(
      "INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_x', 'X', '0x1111111111111111111111111111111111111111', NULL, 1)",
    );
    addPayment(old, "0xwrong", "0x2222222222222222222222222222222222222222");
    addPayment(old, "0xright", "0x3333333333333333333333333333333333333333");
    old.run(
      `INSERT INTO crosschain_burns (id, payment_id, source_chain, source_domain, tx_hash, state, amount, message, error, attempts, next_attempt_at, created_at, updated_at)
       VALUES ('burn_old', '0xwrong', 'src', 7, '${TX}', 'failed', 5000000, '0xfeed', 'the burn mints to another address', 3, 10, 4, 5)`,
    );
    const before = old.query("SELECT * FROM crosschain_burns").all();
    old.close();

    const db = openDb(dir);
    try {
      expect(
        (await db.get<{ version: number }>(sql`SELECT max(version) AS version FROM schema_migrations`))!.version,
      ).toBe(SQLITE_MIGRATIONS.length);
      // Every row kept as it was; 013 adds bridge_id (null: a payer's burn).
      expect(await db.all(sql`SELECT * FROM crosschain_burns`)).toEqual(
        before.map((row) => ({ ...(row as object), bridge_id: null })),
      );
      const indexes = await db.all<{ name: string }>(
        sql`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'crosschain_burns' AND sql IS NOT NULL ORDER BY name`,
      );
      expect(indexes.map((i) => i.name)).toEqual(["crosschain_burns_due", "crosschain_burns_payment"]);

      const burns = createBurnStore(db);
      const right = await burns.record({
        id: "burn_new",
        payment_id: "0xright",
        source_chain: "src",
        source_domain: 7,
        tx_hash: TX,
        amount: null,
        now: 6,
      });
      expect(right).toMatchObject({ id: "burn_new", payment_id: "0xright", state: "attesting" });
      // Recorded once per payment: a repeat answers the earlier row.
      expect(
        (
          await burns.record({
            id: "burn_dup",
            payment_id: "0xright",
            source_chain: "src",
            source_domain: 7,
            tx_hash: TX,
            amount: null,
            now: 7,
          })
        ).id,
      ).toBe("burn_new");
      expect((await burns.find(7, TX, "0xwrong"))!.id).toBe("burn_old");
      expect(await db.all(sql`SELECT id FROM crosschain_burns ORDER BY id`)).toEqual([
        { id: "burn_new" },
        { id: "burn_old" },
      ]);
      migrate(db.database); // applied once: running again changes nothing
      expect(await db.get(sql`SELECT count(*) AS n FROM crosschain_burns`)).toEqual({ n: 2 });
    } finally {
      await db.close();
    }
  });
});

describe.each(ENGINES)("burn store (%s)", (engine) => {
  let burns: BurnStore;
  let payment: string;
  let other: string;
  beforeEach(async () => {
    store = await openTestStore(engine);
    const payments = createPaymentStore(store.db);
    const account = await insertAccount(store.db, "acct_x");
    payment = (await insertPayment(payments, paymentRow(account, 0))).id;
    other = (await insertPayment(payments, paymentRow(account, 0))).id;
    burns = createBurnStore(store.db);
  });
  const burn = (
    id: string,
    paymentId: string,
    fields: { amount?: bigint | null; now?: number; bridge_id?: string; tx_hash?: string },
  ) =>
    burns.record({
      id,
      payment_id: paymentId,
      source_chain: "src",
      source_domain: 7,
      tx_hash: TX,
      amount: null,
      now: 1,
      ...fields,
    });

  test("a burn is recorded once per payment, the first record kept, with its amount exact", async () => {
    const max = 2n ** 63n - 1n;
    const first = await burn("burn_1", payment, { amount: max, now: 5 });
    expect(first).toEqual({
      id: "burn_1",
      payment_id: payment,
      source_chain: "src",
      source_domain: 7,
      tx_hash: TX,
      state: "attesting",
      amount: max,
      message: null,
      attestation: null,
      message_nonce: null,
      redeem_tx_hash: null,
      redeem_nonce: null,
      redeem_raw_tx: null,
      redeem_sent_at: null,
      error: null,
      attempts: 0,
      next_attempt_at: 5,
      created_at: 5,
      updated_at: 5,
      bridge_id: null,
    });
    expect(await burn("burn_dup", payment, { amount: 1n, now: 6 })).toEqual(first);
    expect((await burn("burn_2", other, {})).id).toBe("burn_2"); // the same transaction posted for another payment
    expect(await burns.find(7, TX, payment)).toEqual(first);
    expect(await burns.find(8, TX, payment)).toBeNull();
    await expect(burn("burn_big", payment, { amount: max + 1n })).rejects.toThrow(RangeError);
  });

  test("a payment's payer burns, the unchecked ones, what is due, and a save", async () => {
    const checked = await burn("burn_1", payment, { amount: 5n, now: 1 });
    const unchecked = await burn("burn_2", other, { now: 2 });
    await burn("burn_3", payment, { tx_hash: `0x${"cd".repeat(32)}`, now: 3 });
    await burn("burn_4", payment, { tx_hash: `0x${"ef".repeat(32)}`, now: 4, bridge_id: "brg_1" });
    expect((await burns.forPayment(payment)).map((b) => b.id)).toEqual(["burn_1", "burn_3"]); // not the bridge's own
    expect(await burns.countUnchecked(payment)).toBe(1);
    expect(await burns.maxRedeemNonce()).toBeNull();

    await burns.save({ ...checked, state: "redeeming", redeem_nonce: 9, redeem_sent_at: 4, next_attempt_at: 50 }, 4);
    await burns.save({ ...unchecked, state: "failed", error: "no such burn", attempts: 3 }, 4);
    expect((await burns.due(10)).map((b) => b.id)).toEqual(["burn_3", "burn_4"]);
    expect((await burns.due(50)).map((b) => b.id)).toEqual(["burn_3", "burn_4", "burn_1"]);
    expect(await burns.find(7, TX, payment)).toMatchObject({ state: "redeeming", redeem_nonce: 9, updated_at: 4 });
    expect(await burns.find(7, TX, other)).toMatchObject({ state: "failed", error: "no such burn", attempts: 3 });
    expect(await burns.maxRedeemNonce()).toBe(9);
  });
});
