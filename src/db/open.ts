import type { StoreLocation } from "../lib/store-location.ts";
import type { Db } from "./engine.ts";
import { openDb } from "./index.ts";
import { POSTGRES_MIGRATIONS } from "./migrations.ts";
import { PgDb, type PgOptions } from "./postgres.ts";
import { migratePostgres } from "./postgres-migrate.ts";
import { acquireServeLock } from "./serve-lock.ts";

// The commands that open the store find where it is here too, beside the openers.
export {
  checkedDatabaseUrl,
  dataDirFrom,
  describeStore,
  type StoreLocation,
  storeLocationFrom,
} from "../lib/store-location.ts";

/** Opens and migrates the store, for the CLI and tools. */
export async function openStore(where: StoreLocation, options: Partial<PgOptions> = {}): Promise<Db> {
  if (!where.databaseUrl) return openDb(where.dataDir);
  const db = await PgDb.open(where.databaseUrl, options);
  try {
    await migratePostgres(db, POSTGRES_MIGRATIONS);
  } catch (error) {
    await db.close();
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
export async function openServeStore(where: StoreLocation): Promise<{ db: Db; release(): void }> {
  // The lock first: a second server must not so much as migrate the database.
  const release = acquireServeLock(where.dataDir);
  try {
    return { db: where.databaseUrl ? await openStore(where) : openDb(where.dataDir), release };
  } catch (error) {
    release();
    throw error;
  }
}
