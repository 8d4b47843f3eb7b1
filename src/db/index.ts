import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../lib/errors.ts";
import type { Db } from "./engine.ts";
import { SQLITE_MIGRATIONS } from "./migrations.ts";
import { SqliteDb } from "./sqlite.ts";

export type { Db } from "./engine.ts";

/**
 * The stores open in this process, by file. One process never holds two connections to one file:
 * a transaction spans several turns of the event loop, and a second connection of the same
 * process waiting for its lock (busy_timeout) would block the very thread that must finish it.
 * A command run in-process beside a server (`stablegate dev`, the tests) shares the server's.
 */
const openFiles = new Map<string, { store: SqliteDb; users: number }>();

/** How many WAL pages a COMMIT lets accumulate before it checkpoints them into the database. */
export const WAL_CHECKPOINT_PAGES = 4000;

/** A SQLite store, with its connection for what only SQLite has (backups, pragmas, the tests' schema checks). */
export type SqliteStore = Db & { readonly database: Database };

/**
 * Opens (creating if needed) the one SQLite file in the data directory. WAL lets the CLI and
 * a running server share it; synchronous=FULL makes every committed payment survive a power
 * cut, not just a crashed process; the busy timeout turns brief write contention into a wait;
 * the sub-journal in memory and a longer checkpoint interval keep a create's own cost down.
 */
export function openDb(dataDir: string): SqliteStore {
  ensureDataDir(dataDir);
  const path = databasePath(dataDir);
  const open = openFiles.get(path);
  if (open) return handle(path, open);
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
  // Group commit runs each write of a batch in a savepoint, and SQLite keeps the pages a savepoint
  // changes in a sub-journal: in memory up to 64 KiB, then in a temporary file that stays one for
  // the rest of the transaction. A payment's insert changes about 13 pages (its indexes), close to
  // that limit, so most batches spilled and every later page went through two more write() calls:
  // a third of a create's system time (`strace -c` of a create burst: 34 writes a create, now 9).
  db.run("PRAGMA temp_store = MEMORY");
  // A checkpoint copies every page the WAL holds into the database, however often each changed:
  // at SQLite's default of 1,000 pages it runs in every dozenth batch's COMMIT and copies the same
  // hot index pages again and again. At 4,000 (a WAL of up to 16 MiB) it copies them a quarter as
  // often; creates/s rose by about a fifth (bench/compare-builds.ts). Durability is unchanged: a
  // commit still waits for its WAL fsync.
  db.run(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  migrate(db);
  const shared = { store: new SqliteDb(db), users: 0 };
  openFiles.set(path, shared);
  return handle(path, shared);
}

/** One user's hold on a shared store: closing it twice closes it once; the file closes with the last. */
function handle(path: string, shared: { store: SqliteDb; users: number }): SqliteStore {
  const { store } = shared;
  shared.users++;
  let closed = false;
  return {
    engine: "sqlite",
    database: store.database,
    get: (query, options) => store.get(query, options),
    all: (query, options) => store.all(query, options),
    run: (query) => store.run(query),
    exec: (text) => store.exec(text),
    transaction: (fn) => store.transaction(fn),
    inTransaction: () => store.inTransaction(),
    afterCommit: (fn) => store.afterCommit(fn),
    async close() {
      if (closed) return;
      closed = true;
      if (--shared.users > 0) return;
      openFiles.delete(path);
      await store.close();
    },
  };
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
  const isApplied = (version: number) => applied.all().some((row) => row.version === version);
  for (const migration of SQLITE_MIGRATIONS) {
    // Read first: a store opened on an up-to-date file takes no write lock at all.
    if (isApplied(migration.version)) continue;
    // IMMEDIATE: two processes starting at once must not both apply the same migration.
    db.transaction(() => {
      if (isApplied(migration.version)) return;
      db.run(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }).immediate();
  }
}
