import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { ConfigError } from "../lib/errors.ts";
import type { Db } from "./engine.ts";
import { databasePath, openDb } from "./index.ts";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "./migrations.ts";
import { PgDb } from "./postgres.ts";
import { migratePostgres } from "./postgres-migrate.ts";
import { acquireServeLock } from "./serve-lock.ts";
import { inTransaction } from "./transaction.ts";

export interface CopyReport {
  /** Rows copied per table, each equal in source and target after the copy. */
  rows: Record<string, number>;
  schema_version: number;
}

const BATCH = 500;

/**
 * Copies a SQLite data directory's database into an empty PostgreSQL database, for moving up
 * to PostgreSQL. The data directory's serve lock is held throughout, so no server writes while
 * the copy reads (and none can start on it meanwhile). Everything goes in one PostgreSQL
 * transaction, with row counts compared before the commit: the target is either the whole copy
 * or untouched. Identity sequences are moved past the copied ids, so new rows never collide.
 */
export function copySqliteToPostgres(dataDir: string, url: string): CopyReport {
  if (!existsSync(databasePath(dataDir))) {
    throw new ConfigError("STABLEGATE_DATA_DIR", `no Stablegate database at ${databasePath(dataDir)}`);
  }
  let release: () => void;
  try {
    release = acquireServeLock(dataDir);
  } catch (error) {
    throw new Error(`${(error as Error).message.replace(/; stop it first$/, "")}: stop it before copying`);
  }
  const source = openDb(dataDir);
  const target = PgDb.open(url);
  try {
    migratePostgres(target, POSTGRES_MIGRATIONS);
    const version = SQLITE_MIGRATIONS.at(-1)!.version;
    const rows = inTransaction(target, () => {
      const tables = tablesInOrder(source);
      const full = tables.filter((table) => count(target, table) > 0);
      if (full.length > 0) throw new Error(`the target database is not empty (rows in ${full.join(", ")})`);
      const rows: Record<string, number> = {};
      for (const table of tables) {
        // A table the target's triggers filled from the rows copied before it (the payment
        // counts per status) is compared with the source rather than copied over them.
        rows[table] = count(target, table) > 0 ? compareTable(source, target, table) : copyTable(source, target, table);
      }
      for (const table of tables) {
        const copied = count(target, table);
        if (copied !== rows[table]) throw new Error(`${table}: ${rows[table]} rows read but ${copied} in the target`);
      }
      advanceIdentities(target);
      return rows;
    });
    return { rows, schema_version: version };
  } finally {
    target.close();
    source.close();
    release();
  }
}

/** The tables to copy, every table after the ones its foreign keys point at. */
function tablesInOrder(db: Database): string[] {
  const names = db
    .query<{ name: string }, []>(
      `SELECT name FROM sqlite_schema WHERE type = 'table'
          AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`,
    )
    .all()
    .map((row) => row.name);
  const parents = new Map(
    names.map((name) => [
      name,
      db
        .query<{ table: string }, []>(`SELECT "table" FROM pragma_foreign_key_list('${name}')`)
        .all()
        .map((row) => row.table)
        .filter((parent) => parent !== name),
    ]),
  );
  const ordered: string[] = [];
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    for (const parent of parents.get(name) ?? []) visit(parent);
    ordered.push(name);
  };
  names.forEach(visit);
  return ordered;
}

function count(db: Db, table: string): number {
  return db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
}

/** Copies one table in batches, amounts as exact bigints, SQLite's rowid into the column that stands for it. */
function copyTable(source: Database, target: PgDb, table: string): number {
  const targetColumns = new Set(
    target
      .query<{ column_name: string }, [string]>(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?",
      )
      .all(table)
      .map((row) => row.column_name),
  );
  const sourceColumns = source
    .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`)
    .all()
    .map((row) => row.name);
  const missing = sourceColumns.filter((column) => !targetColumns.has(column));
  if (missing.length > 0) throw new Error(`${table}: no column ${missing.join(", ")} in the target`);
  const withoutRowid = source
    .query<{ wr: number }, [string]>("SELECT wr FROM pragma_table_list WHERE name = ?")
    .get(table)!.wr;
  const columns = targetColumns.has("rowid") ? ["rowid", ...sourceColumns.filter((c) => c !== "rowid")] : sourceColumns;
  let copied = 0;
  for (const batch of batches(source, table, columns, withoutRowid === 1)) {
    const placeholders = batch.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ");
    target.run(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${placeholders}`,
      batch.flatMap((row) => columns.map((column) => row[column] as never)),
    );
    copied += batch.length;
  }
  return copied;
}

/** A table's rows in pages by rowid, integers as bigint; a WITHOUT ROWID table (a small summary) in one. */
function* batches(source: Database, table: string, columns: string[], withoutRowid: boolean) {
  if (withoutRowid) {
    const rows = source
      .query<Record<string, unknown>, []>(`SELECT ${columns.join(", ")} FROM ${table}`)
      .safeIntegers(true)
      .all();
    if (rows.length > 0) yield rows;
    return;
  }
  const page = source
    .query<Record<string, unknown>, [bigint, number]>(
      `SELECT rowid AS _page, ${columns.join(", ")} FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    )
    .safeIntegers(true);
  for (let after = 0n; ; ) {
    const batch = page.all(after, BATCH);
    if (batch.length === 0) return;
    yield batch;
    after = batch.at(-1)!._page as bigint;
  }
}

/** The rows of a table the target filled itself must be the source's, exactly. */
function compareTable(source: Database, target: PgDb, table: string): number {
  const read = (db: Db) =>
    db
      .query<Record<string, unknown>, []>(`SELECT * FROM ${table}`)
      .safeIntegers(true)
      .all()
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            .sort()
            .map((key) => String(row[key])),
        ),
      )
      .sort();
  const [expected, actual] = [read(source), read(target)];
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    throw new Error(`${table}: the target's own rows differ from the source's`);
  }
  return actual.length;
}

/** Moves every identity sequence past the largest id copied into its column. */
function advanceIdentities(target: PgDb): void {
  const identities = target
    .query<{ table_name: string; column_name: string }, []>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND is_identity = 'YES'`,
    )
    .all();
  for (const { table_name: table, column_name: column } of identities) {
    const sequence = `pg_get_serial_sequence('${table}', '${column}')`;
    target.run(`SELECT setval(${sequence}, COALESCE(MAX(${column}), 0) + 1, false) FROM ${table}`);
  }
}
