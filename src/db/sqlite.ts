import type { Database, Statement } from "bun:sqlite";
import { checkedParameter, type Db, type ReadOptions } from "./engine.ts";
import { compilerFor, type Sql } from "./sql.ts";
import {
  afterCommit,
  currentTransaction,
  type OpenTransaction,
  runCommitted,
  withTransaction,
} from "./transaction-scope.ts";

const compile = compilerFor(() => "?");

interface SqliteTransaction extends OpenTransaction {
  depth: number;
  /** A savepoint open directly inside this one: its siblings must wait for it, not interleave. */
  child: boolean;
}

/**
 * bun:sqlite behind the asynchronous Db interface. SQLite answers in the calling thread, so a
 * statement costs no round trip; what the interface adds is the turn: one connection serves the
 * whole process, and a transaction's statements are spread over several turns of the event loop,
 * so only one transaction runs at a time (a queue, in order of arrival) and a statement from
 * outside waits for the transaction in progress rather than landing inside it.
 */
export class SqliteDb implements Db {
  readonly engine = "sqlite";
  readonly #statements = new Map<string, Statement>();
  #busy = false;
  #closed = false;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly database: Database) {}

  async get<Row>(query: Sql, options?: ReadOptions): Promise<Row | null> {
    return this.#statement(query, options, (statement, values) => statement.get(...values) as Row | null);
  }

  async all<Row>(query: Sql, options?: ReadOptions): Promise<Row[]> {
    return this.#statement(query, options, (statement, values) => statement.all(...values) as Row[]);
  }

  async run(query: Sql): Promise<number> {
    return this.#statement(query, undefined, (statement, values) => statement.run(...values).changes);
  }

  async exec(text: string): Promise<void> {
    await this.#inTurn(() => {
      this.database.run(text);
    });
  }

  inTransaction(): boolean {
    return currentTransaction(this) !== undefined;
  }

  afterCommit(fn: () => void): void {
    afterCommit(currentTransaction(this), fn);
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    const outer = currentTransaction<SqliteTransaction>(this);
    if (outer) return this.#savepoint(outer, fn);
    await this.#takeTurn();
    const tx: SqliteTransaction = { ended: false, committed: [], depth: 0, child: false };
    try {
      // IMMEDIATE: the write lock is taken at the start, so a transaction that reads and then
      // writes never fails half-way because another connection (the CLI) wrote in between.
      this.database.run("BEGIN IMMEDIATE");
      try {
        const result = await withTransaction(this, tx, fn);
        this.database.run("COMMIT");
        tx.ended = true;
        runCommitted(tx);
        return result;
      } catch (error) {
        if (this.database.inTransaction) this.database.run("ROLLBACK");
        throw error;
      }
    } finally {
      tx.ended = true;
      this.#passTurn();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#takeTurn();
    try {
      for (const statement of this.#statements.values()) statement.finalize();
      this.#statements.clear();
      this.database.close();
    } finally {
      // What waits for the turn now fails on the closed database rather than waiting forever.
      this.#passTurn();
    }
  }

  async #savepoint<T>(outer: SqliteTransaction, fn: () => Promise<T>): Promise<T> {
    if (outer.child) throw new Error("two savepoints of one transaction at once: run them one after the other");
    outer.child = true;
    const name = `sp${outer.depth + 1}`;
    const tx: SqliteTransaction = { ended: false, committed: [], depth: outer.depth + 1, child: false };
    this.database.run(`SAVEPOINT ${name}`);
    try {
      const result = await withTransaction(this, tx, fn);
      this.database.run(`RELEASE ${name}`);
      outer.committed.push(...tx.committed);
      return result;
    } catch (error) {
      this.database.run(`ROLLBACK TO ${name}`);
      this.database.run(`RELEASE ${name}`);
      throw error;
    } finally {
      tx.ended = true;
      outer.child = false;
    }
  }

  #statement<T>(
    query: Sql,
    options: ReadOptions | undefined,
    use: (statement: Statement, values: Array<string | number | bigint | boolean | null | Uint8Array>) => T,
  ): T | Promise<T> {
    const { text, values } = compile(query);
    let statement = this.#statements.get(text);
    if (!statement) this.#statements.set(text, (statement = this.database.prepare(text)));
    const bound = values.map(checkedParameter) as Array<string | number | bigint | boolean | null | Uint8Array>;
    return this.#inTurn(() => use(statement.safeIntegers(options?.bigints === true), bound));
  }

  /** Runs `work` now when no transaction is in progress or the caller is inside it; else after it. */
  #inTurn<T>(work: () => T): T | Promise<T> {
    if (!this.#busy || currentTransaction(this)) return work();
    return this.#takeTurn().then(() => {
      try {
        return work();
      } finally {
        this.#passTurn();
      }
    });
  }

  #takeTurn(): Promise<void> {
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #passTurn(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }
}
