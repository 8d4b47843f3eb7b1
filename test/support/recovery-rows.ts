import { sql } from "../../src/db/engine.ts";
import { withServerStore } from "./server-store.ts";

/**
 * A pending recovery of a payment's native coin on its settlement chain, written into the server's
 * store (its `env`: SQLite or PostgreSQL) as the API stores one. For the route sweeps, whose servers have no chain to check a
 * request against: with one under way, the owner's request answers it without asking a chain. Due
 * only in the far future, so the recoverer never touches it while a sweep compares the database.
 */
export async function insertPendingRecovery(env: Record<string, string>, paymentId: string): Promise<string> {
  const id = `rcv_${paymentId.slice(2, 26)}`;
  await withServerStore(env, (db) =>
    db.run(
      sql`INSERT INTO recoveries (id, payment_id, chain_id, token, decimals, payout_address, state,
            next_attempt_at, created_at, updated_at)
          SELECT ${id}, id, chain_id, NULL, 18, payout_address, 'pending', ${Number.MAX_SAFE_INTEGER}, created_at,
            created_at
          FROM payments WHERE id = ${paymentId}`,
    ),
  );
  return id;
}

/**
 * A pending recovery of `token` on `chainId`, due at once, written into the server's store as if
 * the API had accepted it then: for the recoverer's own checks, which a request that the API
 * refuses never reaches. Returns its id.
 */
export async function insertDueRecovery(
  env: Record<string, string>,
  row: { paymentId: string; chainId: number; token: string | null; now: number },
): Promise<string> {
  const id = `rcv_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  await withServerStore(env, (db) =>
    db.run(
      sql`INSERT INTO recoveries (id, payment_id, chain_id, token, decimals, payout_address, state,
            next_attempt_at, created_at, updated_at)
          SELECT ${id}, id, ${row.chainId}, ${row.token}, 18, payout_address, 'pending', 0, ${row.now}, ${row.now}
          FROM payments WHERE id = ${row.paymentId}`,
    ),
  );
  return id;
}
