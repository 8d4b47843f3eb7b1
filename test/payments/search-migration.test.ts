/**
 * Migration 009 on a database that already holds payments: status counts start from the rows
 * there, and money settled before it is in the fee column and the daily totals.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { SqliteDb } from "../../src/db/sqlite.ts";
import { createPaymentSearch } from "../../src/payments/search.ts";
import { createSearchStore } from "../../src/payments/search-store.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { makeTempDir } from "../support/server.ts";

const DAY_MS = 86_400_000;
const BIG = 2n ** 62n;
const BIG_FEE = (BIG * 150n) / 10_000n;
const dataDir = makeTempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("009 counts existing payments by status and backfills the settled fee and daily totals", async () => {
  const db = new Database(join(dataDir, "stablegate.db"), { create: true, strict: true });
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version < 9)) db.run(m.sql);
  db.run(
    "INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_old', 'Old', '0x1111111111111111111111111111111111111111', 150, 0)",
  );
  const day = Date.parse("2031-01-10T00:00:00.000Z");
  const insert = db.query(
    `INSERT INTO payments (id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address,
       chain_id, token_address, deposit_address, expires_at, created_at, updated_at, amount_settled)
     VALUES (?, 'acct_old', ?, ?, ?, 150, '0x2', '0x1', 1, '0x3', ?, 0, ?, ?, ?)`,
  );
  // 1,000,001 micro at 1.5%: floor(15000.015) = 15000. The second swept 2^62 units (a custom
  // token can): 2^62 * 150 passes 2^63, so the fee must be computed without that product.
  insert.run("p1", "confirmed", 1_000_001, 1_000_001, "d1", day, day + 5, 1_000_001);
  insert.run("p2", "confirmed", 10n ** 15n, BIG, "d2", day, day + DAY_MS + 5, BIG);
  insert.run("p3", "pending", 5_000_000, null, "d3", day, day, 0);
  insert.run("p4", "underpaid", 5_000_000, 1, "d4", day, day, 0);
  insert.run("p5", "pending", 5_000_000, null, "d5", day, day, 0);

  // 009 and every later one, as an upgrade runs them: the stores below read their columns too.
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version >= 9)) db.run(m.sql);

  // The stores on the same connection, as the server opens it over the migrated file.
  const store = new SqliteDb(db);
  const payments = createPaymentStore(store);
  expect((await payments.findById("p1"))!.fee_settled).toBe(15_000n);
  expect((await payments.findById("p2"))!.fee_settled).toBe(BIG_FEE);
  expect((await payments.findById("p3"))!.fee_settled).toBe(0n);
  const search = createPaymentSearch({ store: createSearchStore(store), clock: { now: () => day + DAY_MS + 60_000 } });
  const home = await search.home("acct_old");
  expect(home.counts).toMatchObject({ confirmed: 2, pending: 2, underpaid: 1, failed: 0 });
  expect(home.totals.today).toEqual({ gross: BIG, fee: BIG_FEE, net: BIG - BIG_FEE });
  expect(home.daily.at(-2)).toEqual({ day: "2031-01-10", gross: 1_000_001n });
  expect(home.totals.week.fee).toBe(BIG_FEE + 15_000n);
  // New payments are counted from here on by the triggers.
  insert.run("p6", "pending", 5_000_000, null, "d6", day, day, 0);
  expect((await search.home("acct_old")).counts.pending).toBe(3);
  await store.close();
});
