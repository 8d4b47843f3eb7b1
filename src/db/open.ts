import { ConfigError } from "../lib/errors.ts";
import type { Db } from "./engine.ts";
import { openDb } from "./index.ts";
import { POSTGRES_MIGRATIONS } from "./migrations.ts";
import { PgDb, type PgOptions } from "./postgres.ts";
import { migratePostgres } from "./postgres-migrate.ts";
import { acquireServeLock } from "./serve-lock.ts";

type Env = Record<string, string | undefined>;

/** Where the store is: a PostgreSQL URL when one is set, else the SQLite file in the data directory. */
export interface StoreLocation {
  dataDir: string;
  databaseUrl: string | null;
}

const URL_VARIABLE = "STABLEGATE_DATABASE_URL";

export function storeLocationFrom(env: Env): StoreLocation {
  return { dataDir: dataDirFrom(env), databaseUrl: databaseUrl(env) };
}

export function dataDirFrom(env: Env): string {
  return env.STABLEGATE_DATA_DIR?.trim() || "./stablegate-data";
}

/** The store as a log line may name it: never the URL, which holds the password. */
export function describeStore(where: StoreLocation): string {
  if (!where.databaseUrl) return `sqlite in ${where.dataDir}`;
  const url = new URL(where.databaseUrl);
  return `postgresql at ${url.host}${url.pathname}`;
}

function databaseUrl(env: Env): string | null {
  const value = env[URL_VARIABLE]?.trim();
  return value ? checkedDatabaseUrl(value, URL_VARIABLE) : null;
}

/** A postgres:// URL, checked for shape only; a message never repeats it, since it holds the password. */
export function checkedDatabaseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(source, "not a URL; expected postgres://user:password@host:5432/database");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(source, `expected a postgres:// URL, got ${url.protocol}//`);
  }
  if (!url.hostname) throw new ConfigError(source, "the URL names no host");
  return value;
}

/** Opens and migrates the store, for the CLI and tools. */
export function openStore(where: StoreLocation, options: Partial<PgOptions> = {}): Db {
  if (!where.databaseUrl) return openDb(where.dataDir);
  const db = PgDb.open(where.databaseUrl, options);
  try {
    migratePostgres(db, POSTGRES_MIGRATIONS);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Opens the store for `serve`, after taking the data directory's serve lock: one server per data
 * directory, on either engine. A SQLite store is its data directory's alone; on PostgreSQL any
 * number of replicas, each with a data directory of its own, share the database, and the chain
 * side runs on one of them at a time, through a lease (src/leases/).
 */
export function openServeStore(where: StoreLocation): { db: Db; release(): void } {
  // The lock first: a second server must not so much as migrate the database.
  const release = acquireServeLock(where.dataDir);
  try {
    return { db: where.databaseUrl ? openStore(where) : openDb(where.dataDir), release };
  } catch (error) {
    release();
    throw error;
  }
}
