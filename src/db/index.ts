import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "./migrations.ts";

export type Db = Database;

/**
 * Opens (creating if needed) the one SQLite file in the data directory. WAL lets the CLI and
 * a running server share it; synchronous=FULL makes every committed payment survive a power
 * cut, not just a crashed process; the busy timeout turns brief write contention into a wait.
 */
export function openDb(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const db = new Database(join(dataDir, "stablegate.db"), { create: true, strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run("PRAGMA foreign_keys = ON");
  migrate(db);
  return db;
}

/** Applies pending forward-only migrations, each in its own transaction, recorded by version. */
export function migrate(db: Db): void {
  db.run(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
  );
  const applied = db.query<{ version: number }, []>("SELECT version FROM schema_migrations");
  const record = db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const migration of MIGRATIONS) {
    // IMMEDIATE: two processes starting at once must not both apply the same migration.
    db.transaction(() => {
      if (applied.all().some((row) => row.version === migration.version)) return;
      db.run(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }).immediate();
  }
}
