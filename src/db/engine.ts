import type { Changes, SQLQueryBindings } from "bun:sqlite";

/**
 * What the stores use of a database: the part of bun:sqlite's Database that PgDb offers too
 * (src/db/postgres.ts), so each store's SQL runs on either engine, synchronously, unchanged
 * wherever it is valid on both.
 */
export interface Db {
  query<Row, Params extends SQLQueryBindings | SQLQueryBindings[]>(sql: string): DbStatement<Row, Bindings<Params>>;
  run<Params extends SQLQueryBindings[]>(sql: string, ...bindings: Params[]): Changes;
  transaction<A extends unknown[], T>(fn: (...args: A) => T): { (...args: A): T; immediate: (...args: A) => T };
  close(throwOnError?: boolean): void;
}

export interface DbStatement<Row, Params extends SQLQueryBindings[]> {
  all(...params: Params): Row[];
  get(...params: Params): Row | null;
  iterate(...params: Params): IterableIterator<Row>;
  run(...params: Params): Changes;
  /** Integer columns as bigint rather than number. */
  safeIntegers(enabled: boolean): DbStatement<Row, Params>;
}

/** A statement's parameters as bun:sqlite types them, so that its Database is a Db. */
// biome-ignore lint/suspicious/noExplicitAny: bun:sqlite's own conditional, which `unknown[]` does not match.
export type Bindings<Params> = Params extends any[] ? Params : [Params];

/** Marks the PostgreSQL store, for the few statements that need a variant per engine. */
export const POSTGRES = Symbol("postgres");

export const isPostgres = (db: Db): boolean => POSTGRES in db;

/** The statement text for this engine: `postgres` where the engines' SQL differs, else `sqlite`. */
export const sqlFor = (db: Db, sqlite: string, postgres: string): string => (isPostgres(db) ? postgres : sqlite);

/**
 * A table of the strings in one JSON array parameter (`param`, as "?" or "?2"): how a list of
 * any length is bound as one value on either engine. PostgreSQL gets it as text: a parameter
 * typed json would be sent JSON-encoded, a string scalar.
 */
export const textsIn = (db: Db, param: string): string =>
  sqlFor(
    db,
    `SELECT value FROM json_each(${param})`,
    `SELECT value FROM json_array_elements_text(CAST(${param} AS TEXT)::json)`,
  );
