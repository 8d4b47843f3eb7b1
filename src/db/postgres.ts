import type { Changes, SQLQueryBindings } from "bun:sqlite";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { ConfigError } from "../lib/errors.ts";
import { type Bindings, type Db, type DbStatement, POSTGRES } from "./engine.ts";
import { type PostgresText, toPostgresPlaceholders } from "./placeholders.ts";
import { LOST_IN_TRANSACTION, type PgReply, type PgRequest } from "./postgres-protocol.ts";

const VARIABLE = "STABLEGATE_DATABASE_URL";
/**
 * The worker's module. In the compiled binary every module's import.meta.url is the binary's
 * (file:///$bunfs/root/stablegate), and the worker, a build entrypoint of its own (package.json
 * "build"), sits at db/postgres-worker.ts under that root.
 */
const WORKER = new URL(
  import.meta.url.startsWith("file:///$bunfs/") ? "./db/postgres-worker.ts" : "./postgres-worker.ts",
  import.meta.url,
);
/** Longer than the worker's own connection timeout, so its error is what a failure reports. */
const CONNECT_WAIT_MS = 15_000;

/**
 * PostgreSQL cancels a statement after `statementTimeoutMs` (an error, the connection kept);
 * PgDb gives up on a connection whose statement goes unanswered for `answerWithinMs`, longer, so
 * that is left for a connection or a server that answers nothing at all. PostgreSQL ends a session
 * left in a transaction with no statement for `idleInTransactionMs`: our transactions run without
 * a pause, so only a process frozen mid-transaction (paused, swapped out) is, and its row locks
 * must not hold up every other replica (a takeover of its lease, say) until it wakes.
 */
export interface PgOptions {
  statementTimeoutMs: number;
  answerWithinMs: number;
  idleInTransactionMs: number;
}
const DEFAULTS: PgOptions = { statementTimeoutMs: 25_000, answerWithinMs: 30_000, idleInTransactionMs: 5_000 };

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

/**
 * The PostgreSQL store behind the same synchronous API as bun:sqlite (src/db/engine.ts). One
 * worker thread holds the connection; each statement is posted to it and this thread waits for
 * the answer, as a SQLite call waits for its page reads. So a transaction stays a synchronous
 * function: no other request's statements can interleave with it, and every store and service
 * runs on PostgreSQL unchanged. The cost is one round trip of blocking per statement, which is
 * why replicas, not threads, are how a PostgreSQL deployment grows.
 */
export class PgDb implements Db {
  readonly [POSTGRES] = true;
  readonly #url: string;
  readonly #options: PgOptions;
  #worker: WorkerLink | null;
  readonly #texts = new Map<string, PostgresText>();
  #depth = 0;
  // Set when a statement went unanswered inside a transaction and its worker was replaced: the
  // transaction's work is gone, so its remaining statements fail until it ends.
  #lostInTransaction = false;
  #closed = false;

  private constructor(url: string, options: PgOptions, worker: WorkerLink) {
    this.#url = url;
    this.#options = options;
    this.#worker = worker;
  }

  /**
   * Connects, waiting up to CONNECT_WAIT_MS, and fails with a ConfigError that never shows the
   * password. Synchronous like opening a SQLite file, so the CLI opens either store alike.
   */
  static open(url: string, options: Partial<PgOptions> = {}): PgDb {
    const settings = { ...DEFAULTS, ...options };
    return new PgDb(url, settings, startWorker(url, settings));
  }

  query<Row, Params extends SQLQueryBindings | SQLQueryBindings[]>(sql: string): DbStatement<Row, Bindings<Params>> {
    return new PgStatement<Row, Bindings<Params>>(this, this.#text(sql));
  }

  run<Params extends SQLQueryBindings[]>(sql: string, ...bindings: Params[]): Changes {
    // bun:sqlite takes the parameters as one array or spread out.
    const values: unknown[] = bindings.length === 1 && Array.isArray(bindings[0]) ? bindings[0] : bindings;
    return changes(this.execute(this.#text(sql), values, false).changes);
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): { (...args: A): T; immediate: (...args: A) => T } {
    const run = (...args: A) => this.#inTransaction(() => fn(...args));
    return Object.assign(run, { immediate: run });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#worker?.stop();
    this.#worker = null;
  }

  /** Runs one statement and waits for its answer, with rows normalised as bun:sqlite gives them. */
  execute(text: PostgresText, bindings: unknown[], safeIntegers: boolean, flags: Partial<PgRequest> = {}) {
    const reply = this.#call({ sql: text.text, params: parameters(text, bindings), ...flags });
    if (reply.error) throw new PostgresError(reply.error.message, reply.error.code);
    for (const row of reply.rows) for (const key in row) row[key] = normalise(row[key], safeIntegers);
    return reply;
  }

  #call(request: PgRequest): PgReply {
    if (this.#closed) throw new Error("the PostgreSQL store is closed");
    if (this.#lostInTransaction) {
      if (!request.ends) return { error: { message: LOST_IN_TRANSACTION, code: "08006" } };
      this.#lostInTransaction = false;
      return { rows: [], changes: 0 }; // nothing is left on the server to commit or roll back
    }
    this.#worker ??= startWorker(this.#url, this.#options);
    const reply = this.#worker.call(request);
    if (reply) return reply;
    // No answer in time: the connection or the server is stuck. A new worker and connection
    // serve the next statements; a transaction in progress is lost with the old connection.
    this.#worker.stop();
    this.#worker = null;
    if (this.#depth > 0 && !request.ends) this.#lostInTransaction = true;
    const seconds = this.#options.answerWithinMs / 1000;
    return { error: { message: `no answer from PostgreSQL within ${seconds} s`, code: "08006" } };
  }

  #text(sql: string): PostgresText {
    let text = this.#texts.get(sql);
    if (!text) this.#texts.set(sql, (text = toPostgresPlaceholders(sql)));
    return text;
  }

  /** BEGIN (a savepoint when nested), fn, COMMIT; any throw rolls back and rethrows, as bun:sqlite's. */
  #inTransaction<T>(fn: () => T): T {
    const depth = this.#depth;
    const point = `sp${depth}`;
    const statement = (sql: string, flags: Partial<PgRequest> = {}) =>
      this.execute({ text: sql, names: null }, [], false, flags);
    statement(depth === 0 ? "BEGIN ISOLATION LEVEL READ COMMITTED" : `SAVEPOINT ${point}`, { begins: depth === 0 });
    this.#depth = depth + 1;
    try {
      const result = fn();
      statement(depth === 0 ? "COMMIT" : `RELEASE SAVEPOINT ${point}`, { ends: depth === 0 });
      return result;
    } catch (error) {
      statement(depth === 0 ? "ROLLBACK" : `ROLLBACK TO SAVEPOINT ${point}`, { ends: depth === 0 });
      throw error;
    } finally {
      this.#depth = depth;
    }
  }
}

interface WorkerLink {
  /** The answer, or null when none came within answerWithinMs. */
  call(request: PgRequest): PgReply | null;
  stop(): void;
}

/** A worker thread with its connection made, or a ConfigError saying why it could not connect. */
function startWorker(url: string, options: PgOptions): WorkerLink {
  const signal = new SharedArrayBuffer(4);
  const flag = new Int32Array(signal);
  const { port1: port, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, {
    workerData: {
      url,
      signal,
      port: port2,
      statementTimeoutMs: options.statementTimeoutMs,
      idleInTransactionMs: options.idleInTransactionMs,
    },
    transferList: [port2],
  });
  const stop = () => {
    port.close();
    void worker.terminate();
  };
  const woke = Atomics.wait(flag, 0, 0, CONNECT_WAIT_MS);
  const ready = receiveMessageOnPort(port)?.message as { ready: boolean; message?: string } | undefined;
  if (woke === "timed-out" || !ready?.ready) {
    stop();
    const problem = ready?.message ? redact(ready.message, url) : `no answer within ${CONNECT_WAIT_MS / 1000} s`;
    throw new ConfigError(VARIABLE, `cannot connect: ${problem}`);
  }
  return {
    call(request) {
      Atomics.store(flag, 0, 0);
      port.postMessage(request);
      if (Atomics.wait(flag, 0, 0, options.answerWithinMs) === "timed-out") return null;
      // The worker posts before it wakes this thread; spin only in case the message lags the wake-up.
      for (;;) {
        const received = receiveMessageOnPort(port);
        if (received) return received.message as PgReply;
      }
    },
    stop,
  };
}

class PgStatement<Row, Params extends SQLQueryBindings[]> implements DbStatement<Row, Params> {
  #safeIntegers = false;
  constructor(
    private readonly db: PgDb,
    private readonly text: PostgresText,
  ) {}
  safeIntegers(enabled: boolean): this {
    this.#safeIntegers = enabled;
    return this;
  }
  all(...params: Params): Row[] {
    return this.db.execute(this.text, params, this.#safeIntegers).rows as Row[];
  }
  get(...params: Params): Row | null {
    return this.all(...params)[0] ?? null;
  }
  iterate(...params: Params): IterableIterator<Row> {
    return this.all(...params)[Symbol.iterator]();
  }
  run(...params: Params): Changes {
    return changes(this.db.execute(this.text, params, this.#safeIntegers).changes);
  }
}

/** bun:sqlite's Changes; PostgreSQL has no rowid to report, so a store needing the new id uses RETURNING. */
function changes(count: number): Changes {
  return {
    changes: count,
    get lastInsertRowid(): never {
      throw new Error("lastInsertRowid is SQLite's: use RETURNING");
    },
  };
}

/** SQLite-style bindings (positional, or one object of names) as the `$n` parameters. */
function parameters(text: PostgresText, bindings: unknown[]): unknown[] {
  const values = text.names ? text.names.map((name) => (bindings[0] as Record<string, unknown>)[name]) : bindings;
  return values.map((value) => {
    if (value === undefined) throw new TypeError("a statement parameter is undefined");
    if (typeof value === "boolean") return value ? 1n : 0n;
    // Integers go as int8: a millisecond time does not fit the int4 a JS number might be sent as.
    if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
    return value;
  });
}

/** A value as bun:sqlite would read it: integers as number, or bigint when asked; booleans as 0 and 1. */
function normalise(value: unknown, safeIntegers: boolean): unknown {
  if (typeof value === "boolean") value = value ? 1n : 0n;
  if (typeof value === "bigint") return safeIntegers ? value : Number(value);
  if (safeIntegers && typeof value === "number" && Number.isInteger(value)) return BigInt(value);
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
