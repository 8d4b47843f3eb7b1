import type { Db } from "../db/index.ts";

/** What the health endpoints ask of the database. */
export function createOpsStore(db: Db) {
  const ping = db.query("SELECT 1 AS ok");
  return {
    /** Whether the database answers a query at all (closed or broken: false). */
    reachable(): boolean {
      try {
        return ping.get() !== null;
      } catch {
        return false;
      }
    },
  };
}
