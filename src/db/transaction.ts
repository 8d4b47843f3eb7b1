import type { Db } from "./engine.ts";

/**
 * Runs `fn` in one transaction, begun IMMEDIATE: the write lock is taken at the start, so a
 * transaction that reads and then writes (count the endpoints, then insert one) can never fail
 * half-way because another connection (the CLI, say) wrote in between; that connection waits
 * instead (busy_timeout). Inside another transaction it runs as a savepoint of that one.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
