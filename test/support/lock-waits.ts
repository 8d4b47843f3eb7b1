/**
 * How a test on PostgreSQL knows that a statement is held up by another transaction's lock: it
 * waits for this to count one, then lets the holder go on, and asserts what the two left behind.
 */
import { type Db, sql } from "../../src/db/engine.ts";
import { waitFor } from "./wait.ts";

/** Sessions on `db`'s database (each test has one of its own) waiting for a lock another holds. */
export async function lockWaits(db: Db): Promise<number> {
  const row = await db.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return Number(row?.n ?? 0);
}

/**
 * Resolves once `racing` has settled or is waiting for a lock: what it does next, if anything,
 * waits for the transaction the test holds open.
 */
export async function settledOrBlocked(db: Db, racing: Promise<unknown>): Promise<void> {
  let settled = false;
  racing.then(
    () => (settled = true),
    () => (settled = true),
  );
  await waitFor(async () => settled || (await lockWaits(db)) > 0, 10_000, "the racing change to end or wait", 10);
}
