import { existsSync } from "node:fs";
import { ConfigError } from "../lib/errors.ts";
import { type Db, list, raw, sql } from "./engine.ts";
import { databasePath, openDb } from "./index.ts";
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "./migrations.ts";
import { PgDb } from "./postgres.ts";
import { migratePostgres } from "./postgres-migrate.ts";
import { acquireServeLock } from "./serve-lock.ts";

export interface CopyReport {
  /** Rows copied per table, each equal in source and target after the copy. */
  rows: Record<string, number>;
  schema_version: number;
}

const BATCH = 500;
const BIGINTS = { bigints: true };
/**
 * The payments per account and status, which the target's triggers keep as the payments are
 * copied (migration 024): folded counts plus the deltas not yet folded. The source's deltas are
 * its history of status changes, the target's one per copied payment, so neither table is copied
 * or compared row by row: what both must agree on is their sum.
 */
const STATUS_COUNTS = ["payment_status_counts", "payment_status_deltas"];
/**
 * Tables whose one row each store's migrations made and its triggers keep (migration 025: the
 * version the API key caches read): state of that store, not data to move.
 */
const OWN_ROWS = ["account_changes"];

/**
 * Copies a SQLite data directory's database into an empty PostgreSQL database, for moving up
 * to PostgreSQL. The data directory's serve lock is held throughout, so no server writes while
 * the copy reads (and none can start on it meanwhile). Everything goes in one PostgreSQL
 * transaction, with row counts compared before the commit: the target is either the whole copy
 * or untouched. Identity sequences are moved past the copied ids, so new rows never collide.
 * The SQLite source is read inside that transaction: its reads are local, not network calls.
 */
export async function copySqliteToPostgres(dataDir: string, url: string): Promise<CopyReport> {
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
  const target = await PgDb.open(url);
  try {
    await migratePostgres(target, POSTGRES_MIGRATIONS);
    const version = SQLITE_MIGRATIONS.at(-1)!.version;
    const rows = await target.transaction(async () => {
      const tables = await tablesInOrder(source);
      const full: string[] = [];
      for (const table of tables) {
        if (!OWN_ROWS.includes(table) && (await count(target, table)) > 0) full.push(table);
      }
      if (full.length > 0) throw new Error(`the target database is not empty (rows in ${full.join(", ")})`);
      const rows: Record<string, number> = {};
      for (const table of tables) {
        if (OWN_ROWS.includes(table)) rows[table] = await count(target, table);
        if (STATUS_COUNTS.includes(table) || OWN_ROWS.includes(table)) continue;
        // A table the target's triggers filled from the rows copied before it is compared with
        // the source rather than copied over them.
        rows[table] =
          (await count(target, table)) > 0
            ? await compareTable(source, target, table)
            : await copyTable(source, target, table);
      }
      await compareStatusCounts(source, target);
      for (const table of tables.filter((t) => STATUS_COUNTS.includes(t))) rows[table] = await count(target, table);
      for (const table of tables) {
        const copied = await count(target, table);
        if (copied !== rows[table]) throw new Error(`${table}: ${rows[table]} rows read but ${copied} in the target`);
      }
      await advanceIdentities(target);
      return rows;
    });
    return { rows, schema_version: version };
  } finally {
    await target.close();
    await source.close();
    release();
  }
}

/** The tables to copy, every table after the ones its foreign keys point at. */
async function tablesInOrder(db: Db): Promise<string[]> {
  const names = (
    await db.all<{ name: string }>(
      sql`SELECT name FROM sqlite_schema WHERE type = 'table'
          AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`,
    )
  ).map((row) => row.name);
  const parents = new Map<string, string[]>();
  for (const name of names) {
    const rows = await db.all<{ table: string }>(sql`SELECT "table" FROM pragma_foreign_key_list(${name})`);
    parents.set(
      name,
      rows.map((row) => row.table).filter((parent) => parent !== name),
    );
  }
  const ordered: string[] = [];
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    for (const parent of parents.get(name) ?? []) visit(parent);
    ordered.push(name);
  };
  names.forEach(visit);
  return ordered;
}

async function count(db: Db, table: string): Promise<number> {
  return (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${raw(table)}`))!.n;
}

/** Copies one table in batches, amounts as exact bigints, SQLite's rowid into the column that stands for it. */
async function copyTable(source: Db, target: PgDb, table: string): Promise<number> {
  const targetColumns = new Set(
    (
      await target.all<{ column_name: string }>(
        sql`SELECT column_name FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = ${table}`,
      )
    ).map((row) => row.column_name),
  );
  const sourceColumns = (await source.all<{ name: string }>(sql`SELECT name FROM pragma_table_info(${table})`)).map(
    (row) => row.name,
  );
  const missing = sourceColumns.filter((column) => !targetColumns.has(column));
  if (missing.length > 0) throw new Error(`${table}: no column ${missing.join(", ")} in the target`);
  const withoutRowid = (await source.get<{ wr: number }>(sql`SELECT wr FROM pragma_table_list WHERE name = ${table}`))!
    .wr;
  const columns = targetColumns.has("rowid") ? ["rowid", ...sourceColumns.filter((c) => c !== "rowid")] : sourceColumns;
  let copied = 0;
  for await (const batch of batches(source, table, columns, withoutRowid === 1)) {
    const values = list(batch.map((row) => sql`(${list(columns.map((column) => sql`${row[column]}`))})`));
    await target.run(sql`INSERT INTO ${raw(table)} (${raw(columns.join(", "))}) VALUES ${values}`);
    copied += batch.length;
  }
  return copied;
}

/** A table's rows in pages by rowid, integers as bigint; a WITHOUT ROWID table (a small summary) in one. */
async function* batches(source: Db, table: string, columns: string[], withoutRowid: boolean) {
  const selected = raw(columns.join(", "));
  if (withoutRowid) {
    const rows = await source.all<Record<string, unknown>>(sql`SELECT ${selected} FROM ${raw(table)}`, BIGINTS);
    if (rows.length > 0) yield rows;
    return;
  }
  for (let after = 0n; ; ) {
    const batch = await source.all<Record<string, unknown>>(
      sql`SELECT rowid AS _page, ${selected} FROM ${raw(table)} WHERE rowid > ${after} ORDER BY rowid LIMIT ${BATCH}`,
      BIGINTS,
    );
    if (batch.length === 0) return;
    yield batch;
    after = batch.at(-1)!._page as bigint;
  }
}

/** The rows of a table the target filled itself must be the source's, exactly. */
async function compareTable(source: Db, target: PgDb, table: string): Promise<number> {
  const read = async (db: Db) =>
    (await db.all<Record<string, unknown>>(sql`SELECT * FROM ${raw(table)}`, BIGINTS))
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            .sort()
            .map((key) => String(row[key])),
        ),
      )
      .sort();
  const [expected, actual] = [await read(source), await read(target)];
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    throw new Error(`${table}: the target's own rows differ from the source's`);
  }
  return actual.length;
}

/** The payments per account and status, as each store's readers add them up, must be the source's. */
async function compareStatusCounts(source: Db, target: PgDb): Promise<void> {
  // Sorted here, not by ORDER BY: PostgreSQL's collation may order text unlike SQLite's.
  const read = async (db: Db) =>
    JSON.stringify(
      (
        await db.all<{ account_id: string; status: string; n: number }>(
          sql`SELECT account_id, status, CAST(sum(n) AS BIGINT) AS n
                FROM (SELECT account_id, status, n FROM payment_status_counts
                      UNION ALL SELECT account_id, status, n FROM payment_status_deltas) c
               GROUP BY account_id, status HAVING sum(n) <> 0`,
        )
      )
        .map((row) => `${row.account_id} ${row.status} ${row.n}`)
        .sort(),
    );
  if ((await read(source)) !== (await read(target))) {
    throw new Error("payment status counts: the target's differ from the source's");
  }
}

/** Moves every identity sequence past the largest id copied into its column. */
async function advanceIdentities(target: PgDb): Promise<void> {
  const identities = await target.all<{ table_name: string; column_name: string }>(
    sql`SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  );
  for (const { table_name: table, column_name: column } of identities) {
    const sequence = raw(`pg_get_serial_sequence('${table}', '${column}')`);
    await target.run(sql`SELECT setval(${sequence}, COALESCE(MAX(${raw(column)}), 0) + 1, false) FROM ${raw(table)}`);
  }
}
