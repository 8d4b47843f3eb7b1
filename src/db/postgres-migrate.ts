import type { PgDb } from "./postgres.ts";
import { inTransaction } from "./transaction.ts";

/** The advisory lock every replica takes to migrate: one applies, the others wait and find nothing to do. */
const MIGRATION_LOCK = 0x5354_4731; // "STG1"

/**
 * Applies pending migrations in one transaction under a transaction-scoped advisory lock, so
 * replicas starting at the same moment apply each migration once; PostgreSQL's DDL is
 * transactional, so a failure leaves the schema as it was.
 */
export function migratePostgres(db: PgDb, migrations: ReadonlyArray<{ version: number; name: string; sql: string }>) {
  inTransaction(db, () => {
    db.run("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK]);
    db.run(`CREATE TABLE IF NOT EXISTS schema_migrations
              (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
    const applied = new Set(
      db
        .query<{ version: number }, []>("SELECT version FROM schema_migrations")
        .all()
        .map((row) => row.version),
    );
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      db.run(migration.sql);
      db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        migration.version,
        migration.name,
        Date.now(),
      ]);
    }
  });
}
