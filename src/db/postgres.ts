import { SQL } from "bun";
import { ConfigError, DatabaseUnavailableError } from "../lib/errors.ts";
import { checkedParameter, type Db, type ReadOptions } from "./engine.ts";
import { compilerFor, type Sql } from "./sql.ts";
import {
  afterCommit,
  currentTransaction,
  innermostTransaction,
  type OpenTransaction,
  runCommitted,
  withTransaction,
} from "./transaction-scope.ts";

const VARIABLE = "STABLEGATE_DATABASE_URL";
const compile = compilerFor((n) => `$${n}`);

/**
 * PostgreSQL cancels a statement after `statementTimeoutMs` (an error, the connection kept) and
 * ends a session left idle inside a transaction for `idleInTransactionMs`: our transactions run
 * without a pause, so only a process frozen mid-transaction is, and its row locks must not hold up
 * every other replica until it wakes. `answerWithinMs` is how long a caller waits for any one
 * answer (a connection from the pool, a statement, a commit) before it is told the database is
 * unavailable: a request fails with a 503 in time rather than hanging while the database stalls.
 * `poolSize` bounds the connections one process opens. Few pay best: a statement keeps a
 * database core busy for its whole turn, so connections beyond the database's cores only queue
 * inside PostgreSQL, where they contend for the same locks (WAL insertion, buffer headers) and
 * spend its CPU on it. Measured on two cores (bench/compare-builds.ts --db postgres): 2 to 5
 * connections alike, 10 spent a third more of PostgreSQL's CPU per create and made 0.8x the creates.
 */
export interface PgOptions {
  statementTimeoutMs: number;
  idleInTransactionMs: number;
  answerWithinMs: number;
  poolSize: number;
}
const DEFAULTS: PgOptions = {
  statementTimeoutMs: 25_000,
  idleInTransactionMs: 5_000,
  answerWithinMs: 10_000,
  poolSize: 4,
};

/** An error PostgreSQL answered a statement with; `code` is its SQLSTATE (23505: unique violation). */
export class PostgresError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = "PostgresError";
  }
}

/** A top-level transaction and its savepoints: they stall, and fail, together. */
interface PgRoot {
  /** Set when one of its waits outlasted answerWithinMs: the caller was answered, so the rest rolls back. */
  failed: boolean;
  stalled: Promise<never>;
  stall(): void;
}

interface PgTransaction extends OpenTransaction {
  sql: SQL;
  root: PgRoot;
}

/**
 * PostgreSQL on Bun's built-in client: a pool of connections, every statement asynchronous, so
 * one process has as many statements in flight as the pool has connections, and its event loop
 * serves HTTP, pages and the chain side while they run. Statements use PostgreSQL's own `$n`
 * placeholders (src/db/sql.ts); each connection prepares each statement once.
 */
export class PgDb implements Db {
  readonly engine = "postgres";
  readonly #pool: SQL;
  readonly #options: PgOptions;

  private constructor(pool: SQL, options: PgOptions) {
    this.#pool = pool;
    this.#options = options;
  }

  /** Connects (one round trip, to fail start-up on a bad URL), with a ConfigError that never shows the password. */
  static async open(url: string, options: Partial<PgOptions> = {}): Promise<PgDb> {
    const settings = { ...DEFAULTS, ...options };
    const pool = new SQL(url, {
      max: settings.poolSize,
      bigint: true,
      idleTimeout: 60,
      connectionTimeout: 10,
      connection: {
        statement_timeout: Math.trunc(settings.statementTimeoutMs),
        idle_in_transaction_session_timeout: Math.trunc(settings.idleInTransactionMs),
        application_name: "stablegate",
      },
    });
    try {
      await pool.unsafe("SELECT 1");
    } catch (error) {
      await pool.close({ timeout: 0 }).catch(() => {});
      throw new ConfigError(VARIABLE, `cannot connect: ${redact((error as Error).message, url)}`);
    }
    return new PgDb(pool, settings);
  }

  async get<Row>(query: Sql, options?: ReadOptions): Promise<Row | null> {
    return (await this.all<Row>(query, options))[0] ?? null;
  }

  async all<Row>(query: Sql, options?: ReadOptions): Promise<Row[]> {
    const rows = (await this.#execute(query)) as Record<string, unknown>[];
    const bigints = options?.bigints === true;
    const out = new Array<Row>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      for (const key in row) row[key] = normalise(row[key], bigints);
      out[i] = row as Row;
    }
    return out;
  }

  async run(query: Sql): Promise<number> {
    return Number((await this.#execute(query)).count ?? 0);
  }

  async exec(text: string): Promise<void> {
    const tx = this.#transaction();
    await this.#answered((tx?.sql ?? this.#pool).unsafe(text), tx);
  }

  inTransaction(): boolean {
    return currentTransaction(this) !== undefined;
  }

  afterCommit(fn: () => void): void {
    afterCommit(currentTransaction(this), fn);
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    const outer = currentTransaction<PgTransaction>(this);
    if (outer) return this.#savepoint(outer, fn);
    const limit = this.#options.answerWithinMs;
    let stall = () => {};
    const stalled = new Promise<never>((_, reject) => {
      stall = () => {
        root.failed = true;
        reject(unavailable(limit));
      };
    });
    stalled.catch(() => {});
    const root: PgRoot = { failed: false, stalled, stall: () => stall() };
    const tx: PgTransaction = { sql: this.#pool, ended: false, committed: [], root };
    // Waits outside any statement: for a connection and BEGIN, then for COMMIT.
    let timer = setTimeout(root.stall, limit);
    const work = this.#pool.begin(async (sql) => {
      clearTimeout(timer);
      if (root.failed) throw unavailable(limit);
      tx.sql = sql;
      const result = await withTransaction(this, tx, fn);
      // A stall answered the caller already: what is left rolls back rather than commits.
      if (root.failed) throw unavailable(limit);
      timer = setTimeout(root.stall, limit);
      return result;
    }) as Promise<T>;
    // The transaction's scope ends with its callback, not with the caller's answer: after a
    // stall its remaining statements must fail inside it, never run on their own.
    work.then(
      () => {
        tx.ended = true;
      },
      () => {
        root.failed = true;
        tx.ended = true;
      },
    );
    return Promise.race([work.catch(translate), stalled])
      .then((result) => {
        runCommitted(tx);
        return result;
      })
      .finally(() => clearTimeout(timer));
  }

  #savepoint<T>(outer: PgTransaction, fn: () => Promise<T>): Promise<T> {
    const inner: PgTransaction = { ...outer, ended: false, committed: [] };
    const savepoint = (outer.sql as SQL & { savepoint<R>(fn: (sql: SQL) => Promise<R>): Promise<R> }).savepoint(
      (sql) => {
        inner.sql = sql;
        return withTransaction(this, inner, fn);
      },
    );
    return this.#answered(savepoint, outer)
      .then((result) => {
        outer.committed.push(...inner.committed);
        return result;
      })
      .finally(() => {
        inner.ended = true;
      });
  }

  async close(): Promise<void> {
    await this.#pool.close({ timeout: 5 });
  }

  /**
   * The transaction a statement joins. One whose callback goes on after it failed (a stall, a
   * lost connection) fails its statements too: run on their own, they would commit half of it.
   */
  #transaction(): PgTransaction | undefined {
    const tx = innermostTransaction<PgTransaction>(this);
    if (tx?.root.failed) throw unavailable(this.#options.answerWithinMs);
    return tx && !tx.ended ? tx : undefined;
  }

  #execute(query: Sql): Promise<Record<string, unknown>[] & { count?: number | null }> {
    const { text, values } = compile(query);
    const tx = this.#transaction();
    const statement = (tx?.sql ?? this.#pool).unsafe(text, values.map(parameter));
    return this.#answered(statement, tx);
  }

  /**
   * The answer, or DatabaseUnavailableError once answerWithinMs has passed without one; a
   * statement not yet sent is then cancelled, so it never runs later. Inside a transaction the
   * whole transaction stalls: its caller is answered at once, and when the database wakes the
   * transaction's next statement fails and it rolls back.
   */
  async #answered<T>(statement: Promise<T> & { cancel?: () => unknown }, tx?: PgTransaction): Promise<T> {
    if (tx?.root.failed) {
      statement.catch(() => {});
      statement.cancel?.();
      throw unavailable(this.#options.answerWithinMs);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        statement.catch(() => {});
        statement.cancel?.();
        tx?.root.stall();
        reject(unavailable(this.#options.answerWithinMs));
      }, this.#options.answerWithinMs);
    });
    try {
      return await Promise.race(tx ? [statement, late, tx.root.stalled] : [statement, late]);
    } catch (error) {
      // A lost connection takes its transaction with it: nothing more of it may run.
      if (tx && isConnectionLoss(error as { errno?: string; code?: string })) tx.root.failed = true;
      return translate(error);
    } finally {
      clearTimeout(timer);
    }
  }
}

function unavailable(ms: number): DatabaseUnavailableError {
  return new DatabaseUnavailableError(`the database did not answer within ${ms / 1000} s`);
}

/**
 * Bun's errors as the stores expect them: a statement PostgreSQL refused is a PostgresError with
 * its SQLSTATE; a connection that cannot be made or was lost is DatabaseUnavailableError.
 */
function translate(error: unknown): never {
  if (error instanceof DatabaseUnavailableError || error instanceof PostgresError) throw error;
  const failure = error as Error & { errno?: string; code?: string };
  if (isConnectionLoss(failure)) throw new DatabaseUnavailableError(`the database is unreachable`);
  if (failure && typeof failure === "object" && "errno" in failure && typeof failure.errno === "string") {
    throw new PostgresError(failure.message, failure.errno);
  }
  throw error;
}

/**
 * SQLSTATE class 08 is a connection exception, 57P01-57P03 a server shutting the session down and
 * 25P03 the session ended for idling in a transaction; Bun reports a closed socket with its own codes.
 */
function isConnectionLoss(error: { errno?: string; code?: string }): boolean {
  const state = typeof error.errno === "string" ? error.errno : "";
  return (
    state.startsWith("08") ||
    /^57P0[123]$|^25P03$/.test(state) ||
    /CONNECTION_CLOSED|CONNECTION_REFUSED|CONNECTION_TIMEOUT|SOCKET/.test(error.code ?? "")
  );
}

/** Integers go as int8: a millisecond time does not fit the int4 a JS number might be sent as. */
function parameter(value: unknown): unknown {
  checkedParameter(value);
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  return value;
}

/** A value as bun:sqlite would read it: integers as number, or bigint when asked; booleans as 0 and 1. */
function normalise(value: unknown, bigints: boolean): unknown {
  if (typeof value === "boolean") value = value ? 1n : 0n;
  if (typeof value === "bigint") return bigints ? value : Number(value);
  if (bigints && typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  return value;
}

/** The message without the URL's password, wherever the driver quoted it. */
function redact(message: string, url: string): string {
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return message.replaceAll(url, "<the URL>");
  }
  return password ? message.replaceAll(password, "***") : message;
}
