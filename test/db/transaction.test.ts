/**
 * Every store's transactions (db.transaction, src/db/sqlite.ts) begin IMMEDIATE, so a transaction
 * that reads and then writes holds the write lock from its start. Two real connections to one
 * SQLite file, as the server and the CLI have.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { sql } from "../../src/db/engine.ts";
import { openDb, type SqliteStore } from "../../src/db/index.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createWebhookStore } from "../../src/webhooks/store.ts";
import { makeTempDir } from "../support/server.ts";

let dataDir: string;
let db: SqliteStore;
let other: Database;

beforeAll(() => {
  dataDir = makeTempDir();
  db = openDb(dataDir);
  // Another process's connection (the CLI's), which does not wait for locks.
  other = new Database(join(dataDir, "stablegate.db"));
  other.run("PRAGMA busy_timeout = 0");
});
afterAll(async () => {
  other.close();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const PAYOUT = `0x${"11".repeat(20)}`;
const addAccount = (conn: Database, id: string) =>
  conn.run("INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES (?, 'Tx', ?, NULL, 0)", [
    id,
    PAYOUT,
  ]);

test("a store's read-then-write transaction holds the write lock from the start: another writer waits, it never fails half-way", async () => {
  const store = createWebhookStore(db);
  const accountId = randomIds.prefixed("acct");
  await db.run(
    sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES (${accountId}, 'Tx', ${PAYOUT}, NULL, 0)`,
  );
  const endpointId = randomIds.prefixed("we");
  let otherWrite: unknown = "not attempted";

  await store.transaction(async () => {
    expect(await store.countEndpoints(accountId)).toBe(0);
    try {
      addAccount(other, randomIds.prefixed("acct"));
      otherWrite = "written";
    } catch (error) {
      otherWrite = (error as { code?: string }).code;
    }
    await store.insertEndpoint({
      id: endpointId,
      account_id: accountId,
      url: "https://hooks.example.com/tx",
      secret: "whsec_x",
      created_at: 0,
    });
  });

  expect(otherWrite).toBe("SQLITE_BUSY");
  expect((await store.findEndpoint(endpointId, accountId))?.id).toBe(endpointId);
});
