/**
 * The events store's reads for one payment come from an index, not a scan of the account's events.
 * SQLite only: the plan is SQLite's EXPLAIN QUERY PLAN; PostgreSQL's schema has the same index
 * (test/db/postgres-schema.test.ts compares them), and its planner picks by table statistics.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "../../src/db/engine.ts";
import { type Db, openDb } from "../../src/db/index.ts";
import { makeTempDir } from "../support/server.ts";

let dataDir: string;
let db: Db;

beforeAll(() => {
  dataDir = makeTempDir();
  db = openDb(dataDir);
});
afterAll(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("a payment's status history is read through an index on payment_id", async () => {
  const plan = (
    await db.all<{ detail: string }>(
      sql`EXPLAIN QUERY PLAN SELECT id, type, created_at FROM events WHERE payment_id = 'p' AND account_id = 'a' ORDER BY seq`,
    )
  ).map((r) => r.detail);
  expect(plan.filter((line) => /^SCAN events\b|TEMP B-TREE/.test(line))).toEqual([]);
  expect(plan.join("\n")).toContain("events_payment_seq");
});
