import type { Db } from "../../src/db/engine.ts";

/**
 * `db` as the code under test sees it, with a count of the transactions (and savepoints) begun
 * through its `transaction`: how a test tells how many a piece of work opened.
 */
export function countingTransactions(db: Db): { counted: Db; transactions: () => number } {
  let begun = 0;
  const counted = new Proxy(db, {
    get(target, key) {
      if (key === "transaction") {
        return (fn: () => Promise<unknown>) => {
          begun++;
          return target.transaction(fn);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { counted, transactions: () => begun };
}
