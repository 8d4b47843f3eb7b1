/**
 * The PostgreSQL schema (migrations/postgres/) against the SQLite one (migrations/sqlite/), both
 * read back from real databases: the same tables and columns with the same types, nullability
 * and defaults, the same foreign keys and number of CHECKs, an index on the same columns for every
 * index, the same triggers. A migration added to one engine only fails here.
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { openDb, type SqliteStore } from "../../src/db/index.ts";
import { POSTGRES_MIGRATIONS } from "../../src/db/migrations.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { makeTempDir } from "../support/server.ts";

interface Column {
  type: string;
  nullable: boolean;
  default: string | null;
}
/** Per table, its columns by name. */
type Columns = Map<string, Map<string, Column>>;
/** An index as both engines can state it: table, key columns (with a collation other than the default), uniqueness, partial. */
interface Index {
  name: string;
  signature: string;
}

// Created by migrate() itself, not by a migration; sqlite_sequence is SQLite's AUTOINCREMENT bookkeeping.
const NOT_FROM_MIGRATIONS = ["schema_migrations", "sqlite_sequence"];
const TYPES: Record<string, string> = { INTEGER: "bigint", TEXT: "text", REAL: "double precision" };
const ON_DELETE: Record<string, string> = {
  a: "NO ACTION",
  c: "CASCADE",
  r: "RESTRICT",
  n: "SET NULL",
  d: "SET DEFAULT",
};

const signature = (table: string, columns: string[], unique: boolean, partial: boolean) =>
  `${table}(${columns.join(", ")})${unique ? " unique" : ""}${partial ? " partial" : ""}`;

let dataDir: string;
let store: SqliteStore;
/** The schema is read through the store's own connection, as pragmas and sqlite_schema answer it. */
let sqlite: Database;
let pg: SQL;

beforeAll(async () => {
  dataDir = makeTempDir("stablegate-schema-");
  store = openDb(dataDir);
  sqlite = store.database;
  pg = new SQL(await createTestDatabase(), { max: 1 });
  for (const migration of POSTGRES_MIGRATIONS) await pg.unsafe(migration.sql);
});

afterAll(async () => {
  await store?.close();
  await pg?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function sqliteTables(): string[] {
  return sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .all()
    .map((t) => t.name)
    .filter((name) => !NOT_FROM_MIGRATIONS.includes(name));
}

function sqliteColumns(): Columns {
  const tables: Columns = new Map();
  for (const table of sqliteTables()) {
    const rows = sqlite
      .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, [string]>(
        'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid',
      )
      .all(table);
    tables.set(
      table,
      new Map(
        rows.map((c) => [
          c.name,
          // A key column is NOT NULL in PostgreSQL; SQLite lets a TEXT key hold NULL, which no store ever writes.
          { type: TYPES[c.type] ?? c.type, nullable: c.notnull === 0 && c.pk === 0, default: c.dflt_value },
        ]),
      ),
    );
  }
  return tables;
}

async function postgresColumns(): Promise<Columns> {
  const rows: Array<{ table: string; name: string; type: string; nullable: string; default: string | null }> =
    await pg.unsafe(
      `SELECT table_name AS "table", column_name AS name, data_type AS type, is_nullable AS nullable,
              column_default AS "default"
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
  const tables: Columns = new Map();
  for (const c of rows) {
    if (!tables.has(c.table)) tables.set(c.table, new Map());
    // PostgreSQL states a text literal's type ('standard'::text): the same default as SQLite's 'standard'.
    const fallback = c.default?.replace(/^('[^']*')::text$/, "$1") ?? null;
    tables.get(c.table)!.set(c.name, { type: c.type, nullable: c.nullable === "YES", default: fallback });
  }
  return tables;
}

/**
 * The key of an index on one expression, as its CREATE INDEX says it (SQLite's pragmas name no
 * expression), in PostgreSQL's wording: lower(deposit_address) either way.
 */
function expressionOf(index: string): string {
  const { sql } = sqlite.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE name = ?").get(index)!;
  return sql.slice(sql.indexOf("(") + 1, sql.lastIndexOf(")"));
}

function sqliteIndexes(): Index[] {
  const indexes: Index[] = [];
  for (const table of sqliteTables()) {
    const list = sqlite
      .query<{ name: string; unique: number; partial: number }, [string]>(
        'SELECT name, "unique", partial FROM pragma_index_list(?)',
      )
      .all(table);
    for (const index of list) {
      const columns = sqlite
        .query<{ name: string | null; coll: string }, [string]>(
          "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno",
        )
        .all(index.name)
        .map((c) => {
          const key = c.name ?? expressionOf(index.name);
          return c.coll === "BINARY" ? key : `${key} COLLATE ${c.coll.toLowerCase()}`;
        });
      indexes.push({ name: index.name, signature: signature(table, columns, index.unique === 1, index.partial === 1) });
    }
  }
  return indexes;
}

async function postgresIndexes(): Promise<Index[]> {
  const rows: Array<{ table: string; name: string; unique: boolean; partial: boolean; columns: string[] }> =
    await pg.unsafe(
      `SELECT t.relname AS "table", i.relname AS name, ix.indisunique AS "unique", ix.indpred IS NOT NULL AS partial,
              (SELECT array_agg(pg_get_indexdef(ix.indexrelid, k, true) ||
                        coalesce((SELECT ' COLLATE ' || collname FROM pg_collation
                                   WHERE oid = ix.indcollation[k - 1] AND collname NOT IN ('default', 'C')), '')
                        ORDER BY k)
                 FROM generate_series(1, ix.indnkeyatts) AS k) AS columns
         FROM pg_index ix
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_class t ON t.oid = ix.indrelid
        WHERE t.relnamespace = 'public'::regnamespace`,
    );
  return rows.map((r) => ({ name: r.name, signature: signature(r.table, r.columns, r.unique, r.partial) }));
}

/** Whether a SQLite table has the implicit rowid (not a WITHOUT ROWID table). */
function hasRowid(table: string): boolean {
  try {
    sqlite.query(`SELECT rowid FROM ${table} LIMIT 0`).all();
    return true;
  } catch {
    return false;
  }
}

/** A PostgreSQL result as plain rows. */
const rows = async <T>(query: Promise<T[]>): Promise<T[]> => [...(await query)];

describe("the PostgreSQL schema matches the SQLite one", () => {
  test("every table and column of each is in the other, with the same type, nullability and default", async () => {
    const [lite, post] = [sqliteColumns(), await postgresColumns()];
    expect(lite.size).toBeGreaterThan(15);
    const problems: string[] = [];
    for (const [table, columns] of lite) {
      const other = post.get(table);
      if (!other) {
        problems.push(`${table}: no such table in PostgreSQL`);
        continue;
      }
      for (const [name, column] of columns) {
        const match = other.get(name);
        if (!match) problems.push(`${table}.${name}: no such column in PostgreSQL`);
        else if (JSON.stringify(match) !== JSON.stringify(column))
          problems.push(`${table}.${name}: SQLite ${JSON.stringify(column)}, PostgreSQL ${JSON.stringify(match)}`);
      }
      // The one column PostgreSQL may add: SQLite's implicit rowid, made explicit for the stores that read it.
      for (const name of other.keys())
        if (!columns.has(name) && name !== "rowid") problems.push(`${table}.${name}: no such column in SQLite`);
    }
    for (const table of post.keys()) if (!lite.has(table)) problems.push(`${table}: no such table in SQLite`);
    expect(problems).toEqual([]);
  });

  test("only tables with a rowid in SQLite get one in PostgreSQL, an identity that is unique", async () => {
    const withRowid: Array<{ table: string; identity: string }> = await rows(
      pg.unsafe(
        `SELECT table_name AS "table", is_identity AS identity FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name = 'rowid' ORDER BY table_name`,
      ),
    );
    expect(withRowid).toEqual([
      { table: "sign_in_failures", identity: "YES" },
      { table: "webhook_deliveries", identity: "YES" },
    ]);
    for (const { table } of withRowid) {
      expect(hasRowid(table)).toBe(true);
      expect((await postgresIndexes()).map((i) => i.signature)).toContain(signature(table, ["rowid"], true, false));
    }
  });

  test("every SQLite index has a PostgreSQL index on the same columns, and the other way round", async () => {
    const [lite, post] = [sqliteIndexes(), await postgresIndexes()];
    expect(lite.length).toBeGreaterThan(40);
    const problems: string[] = [];
    for (const index of lite) {
      // SQLite names the indexes of UNIQUE and PRIMARY KEY constraints itself; PostgreSQL too, differently.
      const auto = index.name.startsWith("sqlite_autoindex_");
      const match = auto
        ? post.find((p) => p.signature === index.signature)
        : post.find((p) => p.name === index.name && p.signature === index.signature);
      if (!match) problems.push(`${index.name}: ${index.signature} has no match in PostgreSQL`);
    }
    // What SQLite has without an index: an INTEGER PRIMARY KEY is the rowid, and the rowid is unique.
    const implicit = sqliteTables().flatMap((table) => {
      const keys = sqlite
        .query<{ name: string; type: string }, [string]>("SELECT name, type FROM pragma_table_info(?) WHERE pk > 0")
        .all(table);
      const rowidKey = keys.length === 1 && keys[0]!.type === "INTEGER" ? [keys[0]!.name] : [];
      return [...rowidKey, ...(hasRowid(table) ? ["rowid"] : [])].map((key) => signature(table, [key], true, false));
    });
    for (const index of post) {
      const named = lite.find((l) => l.name === index.name);
      if (
        named
          ? named.signature !== index.signature
          : !lite.some((l) => l.signature === index.signature) && !implicit.includes(index.signature)
      )
        problems.push(`${index.name}: ${index.signature} has no match in SQLite`);
    }
    expect(problems).toEqual([]);
  });

  test("the same foreign keys, with the same action on delete", async () => {
    const lite = sqliteTables().flatMap((table) =>
      sqlite
        .query<{ table: string; from: string; to: string; on_delete: string }, [string]>(
          'SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?)',
        )
        .all(table)
        .map((fk) => `${table}.${fk.from} -> ${fk.table}.${fk.to} on delete ${fk.on_delete}`),
    );
    const rows: Array<{ table: string; from: string; references: string; to: string; on_delete: string }> =
      await pg.unsafe(
        `SELECT c.conrelid::regclass::text AS "table", a.attname AS "from", c.confrelid::regclass::text AS "references",
                f.attname AS "to", c.confdeltype AS on_delete
           FROM pg_constraint c
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
           JOIN pg_attribute f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1]
          WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND cardinality(c.conkey) = 1`,
      );
    const post = rows.map(
      (fk) => `${fk.table}.${fk.from} -> ${fk.references}.${fk.to} on delete ${ON_DELETE[fk.on_delete]}`,
    );
    expect(lite.length).toBeGreaterThan(15);
    expect(post.sort()).toEqual(lite.sort());
  });

  test("the same number of CHECK constraints on each table", async () => {
    // SQLite keeps a CHECK only in the table's SQL text, so what both can say is how many there are.
    const lite = Object.fromEntries(
      sqliteTables().map((table) => {
        const { sql } = sqlite
          .query<{ sql: string }, [string]>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?")
          .get(table)!;
        return [table, sql.match(/\bCHECK\s*\(/gi)?.length ?? 0];
      }),
    );
    const counted: Array<{ table: string; n: string }> = await rows(
      pg.unsafe(
        `SELECT c.relname AS "table", count(k.oid) AS n FROM pg_class c
           LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'c'
          WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' GROUP BY c.relname`,
      ),
    );
    expect(Object.fromEntries(counted.map((r) => [r.table, Number(r.n)]))).toEqual(lite);
  });

  test("the same triggers, keeping payment_status_counts as SQLite's do", async () => {
    const lite = sqlite
      .query<{ name: string; table: string }, []>(
        "SELECT name, tbl_name AS \"table\" FROM sqlite_schema WHERE type = 'trigger' ORDER BY name",
      )
      .all();
    const post: Array<{ name: string; table: string }> = await rows(
      pg.unsafe(
        `SELECT DISTINCT trigger_name AS name, event_object_table AS "table" FROM information_schema.triggers
        WHERE trigger_schema = 'public' ORDER BY trigger_name`,
      ),
    );
    expect(post).toEqual(lite);

    // The same writes on both engines leave the same counts.
    const writes = [
      "INSERT INTO accounts (id, name, payout_address, created_at) VALUES ('acct_t', 'T', '0x11', 1)",
      ...["a", "b", "c"].map(
        (id) => `INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id,
                   token_address, deposit_address, expires_at, created_at, updated_at)
                 VALUES ('pay_${id}', 'acct_t', 'pending', 1, 0, '0x22', '0x11', 1, '0x33', '0x${id}', 1, 1, 1)`,
      ),
      "UPDATE payments SET status = 'confirmed' WHERE id IN ('pay_a', 'pay_b')",
      "UPDATE payments SET status = 'confirmed' WHERE id = 'pay_a'",
      "DELETE FROM payments WHERE id = 'pay_b'",
    ];
    // The counts as a reader sees them: the folded ones and the deltas the triggers append (migration 024).
    const counts = `SELECT status, CAST(sum(n) AS BIGINT) AS n
                      FROM (SELECT status, n FROM payment_status_counts WHERE account_id = 'acct_t'
                            UNION ALL SELECT status, n FROM payment_status_deltas WHERE account_id = 'acct_t') c
                     GROUP BY status ORDER BY status`;
    for (const sql of writes) {
      sqlite.run(sql);
      await pg.unsafe(sql);
    }
    const expected = [
      { status: "confirmed", n: 1 },
      { status: "pending", n: 1 },
    ];
    expect(sqlite.query(counts).all()).toEqual(expected);
    expect((await pg.unsafe(counts)).map((r: { status: string; n: string }) => ({ ...r, n: Number(r.n) }))).toEqual(
      expected,
    );
  });

  test("the store's `COLLATE NOCASE` runs unchanged on PostgreSQL, case-blind, from the email index", async () => {
    await pg.unsafe(`INSERT INTO accounts (id, name, payout_address, created_at) VALUES ('acct_e', 'E', '0x11', 1)`);
    await pg.unsafe(
      `INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id,
         token_address, deposit_address, expires_at, created_at, updated_at, customer_email)
       VALUES ('pay_e', 'acct_e', 'pending', 1, 0, '0x22', '0x11', 1, '0x33', '0xe', 1, 1, 1, 'Ada@Example.COM')`,
    );
    const search = "SELECT id FROM payments WHERE account_id = $1 AND customer_email = $2 COLLATE NOCASE";
    expect(await rows(pg.unsafe(search, ["acct_e", "ada@example.com"]))).toEqual([{ id: "pay_e" }]);
    expect(await rows(pg.unsafe(search, ["acct_e", "ada@example.org"]))).toEqual([]);
    // Off the table's few rows a sequential scan would win; the question is whether the index can serve it.
    await pg.unsafe("SET enable_seqscan = off");
    const plan: Array<{ "QUERY PLAN": string }> = await pg.unsafe(`EXPLAIN ${search}`, ["acct_e", "ada@example.com"]);
    await pg.unsafe("RESET enable_seqscan");
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("payments_account_email");
  });
});
