import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Which transactions the running code is inside, found through the async context rather than
 * passed down: a store's statement joins its database's open transaction wherever the call
 * comes from. One scope for every database of the process, so a transaction of one (the target
 * of `db copy`) never captures the statements of another (its source).
 */
interface Scope {
  db: object;
  tx: OpenTransaction;
  outer: Scope | undefined;
}

/** What an engine keeps of a transaction; `ended` once it committed or rolled back. */
export interface OpenTransaction {
  ended: boolean;
  /** What `afterCommit` queued inside it: run once the outermost transaction commits, dropped on a rollback. */
  committed: Array<() => void>;
}

/**
 * Queues `fn` for after the commit of `tx` (a savepoint's go to its parent when it is released),
 * or runs it at once outside a transaction.
 */
export function afterCommit(tx: OpenTransaction | undefined, fn: () => void): void {
  if (tx) tx.committed.push(fn);
  else fn();
}

/** Runs what a committed transaction queued; one that throws does not keep the others from running. */
export function runCommitted(tx: OpenTransaction, log: (error: unknown) => void = reportError): void {
  for (const fn of tx.committed.splice(0)) {
    try {
      fn();
    } catch (error) {
      log(error);
    }
  }
}

const scope = new AsyncLocalStorage<Scope>();

/**
 * The innermost open transaction of `db` around the caller, if any. An ended one is skipped: a
 * timer set inside a transaction keeps its async context, but runs outside it.
 */
export function currentTransaction<Tx extends OpenTransaction>(db: object): Tx | undefined {
  for (let at = scope.getStore(); at; at = at.outer) if (at.db === db && !at.tx.ended) return at.tx as Tx;
  return undefined;
}

/** The innermost transaction of `db` around the caller, ended or not. */
export function innermostTransaction<Tx extends OpenTransaction>(db: object): Tx | undefined {
  for (let at = scope.getStore(); at; at = at.outer) if (at.db === db) return at.tx as Tx;
  return undefined;
}

/** Runs `fn` with `tx` as `db`'s innermost transaction. */
export function withTransaction<T>(db: object, tx: OpenTransaction, fn: () => Promise<T>): Promise<T> {
  return scope.run({ db, tx, outer: scope.getStore() }, fn);
}

/**
 * Throws when called inside a database transaction: a network call there (an RPC, a webhook,
 * an email) would hold the transaction's locks, and SQLite's process-wide write turn, for as
 * long as a remote peer cares to take. The outbound clients call this before they send.
 */
export function assertOutsideTransaction(what: string): void {
  for (let at = scope.getStore(); at; at = at.outer)
    if (!at.tx.ended) throw new Error(`${what} inside a database transaction: do it before or after`);
}
