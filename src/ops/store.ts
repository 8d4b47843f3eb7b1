import { type Db, sql } from "../db/engine.ts";

/** What the health endpoints ask of the database. */
export function createOpsStore(db: Db) {
  return {
    /** Whether the database answers a query at all (closed or broken: false). */
    async reachable(): Promise<boolean> {
      try {
        return (await db.get(sql`SELECT 1 AS ok`)) !== null;
      } catch {
        return false;
      }
    },
  };
}
