/**
 * Store tests run on both engines: `describe.each(ENGINES)("...", (engine) => ...)` with
 * `openTestStore(engine)`, a real SQLite file in a temp dir or a fresh database on the test
 * suite's real PostgreSQL server, migrated as the server would migrate it. A block named by the
 * engine alone ("%s") is left out of `bun run test`'s second pass on PostgreSQL, having run on
 * both already.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/db/engine.ts";
import { openStore } from "../../src/db/open.ts";
import { createTestDatabase } from "./postgres.ts";

export type Engine = "sqlite" | "postgres";
export const ENGINES: readonly Engine[] = ["sqlite", "postgres"];

export interface TestStore {
  db: Db;
  /** Where it is, for a test that opens a second connection to it: the SQLite file's directory, */
  dataDir: string;
  /** or the PostgreSQL database's URL (null on SQLite). */
  databaseUrl: string | null;
  close(): Promise<void>;
}

export async function openTestStore(engine: Engine): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), "stablegate-test-"));
  const databaseUrl = engine === "postgres" ? await createTestDatabase() : null;
  const db = await openStore({ dataDir, databaseUrl });
  return {
    db,
    dataDir,
    databaseUrl,
    async close() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The engine a test server's store uses unless the test names one: STABLEGATE_TEST_ENGINE, else SQLite. */
export async function defaultTestDatabaseUrl(): Promise<string | null> {
  const engine = process.env.STABLEGATE_TEST_ENGINE ?? "sqlite";
  if (engine !== "sqlite" && engine !== "postgres") throw new Error(`STABLEGATE_TEST_ENGINE: ${engine}?`);
  return engine === "postgres" ? createTestDatabase() : null;
}
