import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../lib/errors.ts";
import { SQLITE_MIGRATIONS } from "./migrations.ts";
import { SqliteDb } from "./sqlite.ts";

export type { Db } from "./engine.ts";

/**
 * Opens (creating if needed) the one SQLite file in the data directory. WAL lets the CLI and
 * a running server share it; synchronous=FULL makes every committed payment survive a power
 * cut, not just a crashed process; the busy timeout turns brief write contention into a wait.
 */
export function openDb(dataDir: string): SqliteDb {
  ensureDataDir(dataDir);
  const path = databasePath(dataDir);
  let db: Database;
  try {
    // Owner-only like the directory: SQLite gives the -wal and -shm files the database's mode.
    private0600(path);
    for (const file of [`${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
    db = new Database(path, { create: true, strict: true });
  } catch (error) {
    throw new ConfigError("STABLEGATE_DATA_DIR", `cannot open ${path}: ${(error as Error).message}`);
  }
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run("PRAGMA foreign_keys = ON");
  migrate(db);
  return new SqliteDb(db);
}

/** The one database file of a data directory. */
export const databasePath = (dataDir: string): string => join(dataDir, "stablegate.db");

/** Creates the data directory owner-only (0700); one that cannot be created or used is a configuration mistake. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
  } catch (error) {
    throw new ConfigError(
      "STABLEGATE_DATA_DIR",
      `cannot create or use ${dataDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/**
 * Makes `file` owner-only, creating it empty if missing. An existing file is never opened:
 * closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
 * included.
 */
export function private0600(file: string): void {
  try {
    writeFileSync(file, "", { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  chmodSync(file, 0o600);
}

/** Applies pending forward-only migrations, each in its own transaction, recorded by version. */
export function migrate(db: Database): void {
  db.run(
    `CREATE TABLE IF NOT EXISTS schema_migrations
       (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
  );
  const applied = db.query<{ version: number }, []>("SELECT version FROM schema_migrations");
  const record = db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const migration of SQLITE_MIGRATIONS) {
    // IMMEDIATE: two processes starting at once must not both apply the same migration.
    db.transaction(() => {
      if (applied.all().some((row) => row.version === migration.version)) return;
      db.run(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }).immediate();
  }
}
