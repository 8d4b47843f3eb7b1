/**
 * How a test on PostgreSQL knows that a statement is held up by another transaction's lock: it
 * waits for this to count one, then lets the holder go on, and asserts what the two left behind.
 */
import { type Db, sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { randomIds } from "../../src/lib/ids.ts";
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

/**
 * An event's transaction (a payment's status change, say) that routes `eventId` of `accountId` to
 * its endpoints and is then held open: `routed` resolves once it is, `release()` lets it commit,
 * and `done` settles with it.
 */
export async function holdRoutedEvent(db: Db, accountId: string, eventId = "evt_raced") {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let routed = () => {};
  const written = new Promise<void>((resolve) => (routed = resolve));
  const done = db.transaction(async () => {
    await createEventStore(db, randomIds).insert({
      id: eventId,
      account_id: accountId,
      type: "payment.confirmed",
      payment_id: null,
      payload: "{}",
      created_at: 1,
    });
    routed();
    await gate;
  });
  await written;
  return { release, done };
}
