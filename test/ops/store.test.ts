/** The health endpoints' one question to the database, asked of a real SQLite file. */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { openDb } from "../../src/db/index.ts";
import { createOpsStore } from "../../src/ops/store.ts";
import { makeTempDir } from "../support/server.ts";

const dataDir = makeTempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("the database is reachable while open and unreachable once closed, without throwing", () => {
  const db = openDb(dataDir);
  const store = createOpsStore(db);
  expect(store.reachable()).toBe(true);
  db.close();
  expect(store.reachable()).toBe(false);
});
