/**
 * The burn records' SQL against a real SQLite file: migration 005 keys a burn by the payment it
 * was posted for, keeping every row recorded before it, and amounts that would wrap are refused.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createBurnStore } from "../../src/crosschain/store.ts";
import { migrate, openDb } from "../../src/db/index.ts";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { makeTempDir } from "../support/server.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
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
  test("keeps every burn recorded before it, and lets another payment record the same transaction", () => {
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
        db.query<{ version: number }, []>("SELECT max(version) AS version FROM schema_migrations").get()!.version,
      ).toBe(SQLITE_MIGRATIONS.length);
      // Every row kept as it was; 013 adds bridge_id (null: a payer's burn).
      expect(db.query("SELECT * FROM crosschain_burns").all()).toEqual(
        before.map((row) => ({ ...(row as object), bridge_id: null })),
      );
      const indexes = db
        .query<{ name: string }, []>(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'crosschain_burns' AND sql IS NOT NULL ORDER BY name",
        )
        .all();
      expect(indexes.map((i) => i.name)).toEqual(["crosschain_burns_due", "crosschain_burns_payment"]);

      const burns = createBurnStore(db);
      const right = burns.record({
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
        burns.record({
          id: "burn_dup",
          payment_id: "0xright",
          source_chain: "src",
          source_domain: 7,
          tx_hash: TX,
          amount: null,
          now: 7,
        }).id,
      ).toBe("burn_new");
      expect(burns.find(7, TX, "0xwrong")!.id).toBe("burn_old");
      expect(db.query("SELECT id FROM crosschain_burns ORDER BY id").all()).toEqual([
        { id: "burn_new" },
        { id: "burn_old" },
      ]);
      migrate(db); // applied once: running again changes nothing
      expect(db.query("SELECT count(*) AS n FROM crosschain_burns").get()).toEqual({ n: 2 });
    } finally {
      db.close();
    }
  });
});
