import { type Sql, sql } from "./sql.ts";

export { list, raw, Sql, sql } from "./sql.ts";

export interface ReadOptions {
  /** Every integer column as bigint rather than number: for rows that carry amounts. */
  bigints?: boolean;
}

/**
 * What the stores use of a database, on either engine (src/db/sqlite.ts, src/db/postgres.ts).
 * Every call answers a promise: the event loop never waits on the database. A statement is a
 * `sql` template; where the engines' SQL differs a store picks its text with `sqlFor`.
 */
export interface Db {
  readonly engine: "sqlite" | "postgres";
  /** The first row, or null. */
  get<Row>(query: Sql, options?: ReadOptions): Promise<Row | null>;
  all<Row>(query: Sql, options?: ReadOptions): Promise<Row[]>;
  /** Runs a statement; answers how many rows it changed. */
  run(query: Sql): Promise<number>;
  /**
   * Runs `fn` in one transaction and answers what it answers; a throw rolls everything back and
   * is rethrown. Every statement `fn` makes, however deep in the stores, joins the transaction:
   * it is found through the async context, so stores need no transaction handle. Inside another
   * transaction it is a savepoint of that one. A transaction holds no network call but the
   * database's (`assertOutsideTransaction` guards the others), so it stays short.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** True when the caller runs inside one of this store's transactions. */
  inTransaction(): boolean;
  /**
   * Runs `fn` once the caller's transaction has committed (at once outside one; never after a
   * rollback): how a write wakes what reads it on other connections, which could not see it before.
   */
  afterCommit(fn: () => void): void;
  /** Statements separated by semicolons, without parameters: migrations and schema work. */
  exec(text: string): Promise<void>;
  close(): Promise<void>;
}

export const isPostgres = (db: Db): boolean => db.engine === "postgres";

/** The statement for this engine: `postgres` where the engines' SQL differs, else `sqlite`. */
export const sqlFor = (db: Db, sqlite: Sql, postgres: Sql): Sql => (isPostgres(db) ? postgres : sqlite);

/**
 * A table of the strings in `texts`, bound as one JSON array parameter: how a list of any
 * length is bound as one value on either engine (a statement's text stays the same whatever the
 * length, so it is prepared once). PostgreSQL gets it as text: a parameter typed json would be
 * sent JSON-encoded, a string scalar.
 */
export function textsIn(db: Db, texts: readonly string[]): Sql {
  const json = JSON.stringify(texts);
  return sqlFor(
    db,
    sql`SELECT value FROM json_each(${json})`,
    sql`SELECT value FROM json_array_elements_text(CAST(${json} AS TEXT)::json)`,
  );
}

/** What a statement's parameter may be; undefined is always a mistake and is refused. */
export function checkedParameter(value: unknown): unknown {
  if (value === undefined) throw new TypeError("a statement parameter is undefined");
  return value;
}
