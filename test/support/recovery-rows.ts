import { openStore, storeLocationFrom } from "../../src/db/open.ts";

/**
 * A pending recovery of a payment's native coin on its settlement chain, written into the server's
 * store (its `env`: SQLite or PostgreSQL) as the API stores one. For the route sweeps, whose servers have no chain to check a
 * request against: with one under way, the owner's request answers it without asking a chain. Due
 * only in the far future, so the recoverer never touches it while a sweep compares the database.
 */
export function insertPendingRecovery(env: Record<string, string>, paymentId: string): string {
  const id = `rcv_${paymentId.slice(2, 26)}`;
  const db = openStore(storeLocationFrom(env));
  try {
    db.query(
      `INSERT INTO recoveries (id, payment_id, chain_id, token, decimals, payout_address, state,
         next_attempt_at, created_at, updated_at)
       SELECT ?, id, chain_id, NULL, 18, payout_address, 'pending', ?, created_at, created_at
       FROM payments WHERE id = ?`,
    ).run(id, Number.MAX_SAFE_INTEGER, paymentId);
  } finally {
    db.close();
  }
  return id;
}
