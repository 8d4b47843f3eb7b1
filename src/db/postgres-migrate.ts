import { sql } from "./engine.ts";
import type { PgDb } from "./postgres.ts";

/** The advisory lock every replica takes to migrate: one applies, the others wait and find nothing to do. */
const MIGRATION_LOCK = 0x5354_4731; // "STG1"

/**
 * Applies pending migrations in one transaction under a transaction-scoped advisory lock, so
 * replicas starting at the same moment apply each migration once; PostgreSQL's DDL is
 * transactional, so a failure leaves the schema as it was.
 */
export async function migratePostgres(
  db: PgDb,
  migrations: ReadonlyArray<{ version: number; name: string; sql: string }>,
): Promise<void> {
  await db.transaction(async () => {
    await db.run(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations
                     (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
    const rows = await db.all<{ version: number }>(sql`SELECT version FROM schema_migrations`);
    const applied = new Set(rows.map((row) => row.version));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await db.exec(migration.sql);
      await db.run(
        sql`INSERT INTO schema_migrations (version, name, applied_at)
            VALUES (${migration.version}, ${migration.name}, ${Date.now()})`,
      );
    }
  });
}
