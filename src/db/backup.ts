import { Database } from "bun:sqlite";
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../lib/errors.ts";
import { databasePath, private0600 } from "./index.ts";

/** What `stablegate backup` prints: where the copy is, its size, its schema and what it holds. */
export interface BackupReport {
  path: string;
  bytes: number;
  /** The highest migration applied in the copy, as in the live database. */
  schema_version: number;
  /** Rows in the copy, per main table. */
  rows: Record<string, number>;
}

/** The tables an operator checks a copy by: the accounting record and what configures it. */
const COUNTED = [
  "accounts",
  "api_keys",
  "dashboard_users",
  "payments",
  "transfers",
  "settlements",
  "payment_links",
  "events",
  "webhook_endpoints",
  "webhook_deliveries",
] as const;

/**
 * Writes a consistent copy of the data directory's database to `file` while a server may be
 * writing to it. `VACUUM INTO` reads the database in one read transaction, so the copy is the
 * snapshot at its start; in WAL mode that takes no lock a writer waits for (writers share only
 * the disk and the CPU with it). The copy goes to a 0600 temporary file beside `file`, is checked
 * (integrity, same migrations as the source), flushed to disk and only then given its name: a
 * crash or a failed check never leaves a partial file under `file`. An existing `file` is
 * refused unless `force`, and then replaced only by a copy that passed its checks.
 */
export function backupDatabase(dataDir: string, file: string, opts: { force: boolean }): BackupReport {
  const source = databasePath(dataDir);
  const target = resolve(file);
  if (!existsSync(source)) throw new ConfigError("STABLEGATE_DATA_DIR", `no Stablegate database at ${source}`);
  refuseTarget(dataDir, target, opts.force);
  const temp = `${target}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  try {
    private0600(temp); // VACUUM INTO writes into an empty file and keeps its mode
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot write ${target}: ${code === "ENOENT" ? `no directory ${dirname(target)}` : code}`);
  }
  try {
    const migrations = copyInto(source, temp);
    const report = verify(temp, migrations);
    flush(temp);
    publish(temp, target, opts.force);
    flush(dirname(target)); // the new name itself survives a power cut
    return { path: target, ...report };
  } catch (error) {
    for (const leftover of [temp, `${temp}-journal`]) rmSync(leftover, { force: true });
    throw error;
  }
}

/**
 * Refuses a `target` in the data directory itself (--force there could replace the live
 * database, the serve lock or the relayer key), a directory, or an existing file without force.
 */
function refuseTarget(dataDir: string, target: string, force: boolean): void {
  const parent = dirname(target);
  if (existsSync(parent) && realpathSync(parent) === realpathSync(dataDir))
    throw new Error(`${target} is in the data directory; write the backup somewhere else`);
  if (!existsSync(target)) return;
  if (statSync(target).isDirectory()) throw new Error(`${target} is a directory; name the backup file`);
  if (!force) throw alreadyExists(target);
}

interface Migration {
  version: number;
  name: string;
}

/** Copies the database into the empty `temp` in one snapshot; returns its migrations as read just before. */
function copyInto(source: string, temp: string): Migration[] {
  // Not openDb: a backup must neither create, migrate nor reconfigure the database it copies.
  let db: Database | undefined;
  try {
    db = new Database(source, { readwrite: true, create: false });
    db.run("PRAGMA busy_timeout = 5000");
    const migrations = appliedMigrations(db);
    db.query("VACUUM INTO ?").run(temp);
    return migrations;
  } catch (error) {
    throw new Error(`cannot copy ${source}: ${(error as Error).message}`);
  } finally {
    db?.close();
  }
}

/** Opens the copy on its own and checks it before it gets its name. */
function verify(temp: string, sourceMigrations: Migration[]): Omit<BackupReport, "path"> {
  const db = new Database(temp, { readonly: true });
  try {
    const problems = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (problems.length !== 1 || problems[0]!.integrity_check !== "ok")
      throw new Error(`the copy failed its integrity check: ${problems[0]?.integrity_check ?? "no answer"}`);
    // The server migrated the live database when it started: the copy opens with nothing left to apply.
    const migrations = appliedMigrations(db);
    if (JSON.stringify(migrations) !== JSON.stringify(sourceMigrations))
      throw new Error("the copy's schema differs from the live database's; run the backup again");
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table'").all();
    const present = new Set(tables.map((t) => t.name));
    const rows: Record<string, number> = {};
    for (const table of COUNTED.filter((t) => present.has(t)))
      rows[table] = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
    return { bytes: statSync(temp).size, schema_version: migrations.at(-1)?.version ?? 0, rows };
  } finally {
    db.close();
  }
}

/** The migrations recorded in `db`, in order; a database without the table is not ours. */
function appliedMigrations(db: Database): Migration[] {
  try {
    return db.query<Migration, []>("SELECT version, name FROM schema_migrations ORDER BY version").all();
  } catch (error) {
    if (!/no such table/.test((error as Error).message)) throw error;
    throw new Error("not a Stablegate database (it has no schema_migrations table)");
  }
}

/**
 * Gives the verified copy its name. Without force, a hard link claims the name only if it is
 * still free (a file that appeared meanwhile is not replaced); with force, rename replaces the
 * old file in one step, so `target` is always either the old backup or the new one.
 */
function publish(temp: string, target: string, force: boolean): void {
  if (force) {
    renameSync(temp, target);
    return;
  }
  try {
    linkSync(temp, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw alreadyExists(target);
    if (!["EPERM", "ENOTSUP", "EOPNOTSUPP"].includes(code ?? "")) throw error;
    // A file system without hard links (FAT, some network mounts): check, then rename.
    if (existsSync(target)) throw alreadyExists(target);
    renameSync(temp, target);
    return;
  }
  rmSync(temp);
}

const alreadyExists = (target: string) =>
  new Error(`${target} already exists; choose another name, or pass --force to replace it`);

/** fsync: SQLite does not flush what VACUUM INTO writes, nor does rename flush the directory. */
function flush(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
