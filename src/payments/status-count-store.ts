import { type Db, sql } from "../db/engine.ts";
import type { PaymentStatus } from "./store.ts";

/** Deltas folded per run at most: a fold stays one short transaction however far behind it is. */
const FOLD_BATCH = 10_000;

export type StatusCountStore = ReturnType<typeof createStatusCountStore>;

type Row = { status: PaymentStatus; n: number };

/** The folded counts and the deltas' sums, added up; a status with none is absent. */
function added(rows: Row[]): Map<PaymentStatus, number> {
  const counts = new Map<PaymentStatus, number>();
  for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + Number(row.n));
  for (const [status, n] of counts) if (n === 0) counts.delete(status);
  return counts;
}

/**
 * Payments per account and status, kept by triggers as append-only deltas (migration 024) so
 * that no create waits for another's lock on a shared count row. A read takes the folded counts
 * and the deltas' sums in one statement, so it sees one snapshot of both however a fold
 * interleaves; each half is answered in index order (no sort), and the two are added up here.
 */
export function createStatusCountStore(db: Db) {
  return {
    /** One account's payments by status. */
    forAccount: async (accountId: string): Promise<Map<PaymentStatus, number>> =>
      added(
        await db.all<Row>(
          sql`SELECT status, n FROM payment_status_counts WHERE account_id = ${accountId}
              UNION ALL
              SELECT status, CAST(sum(n) AS BIGINT) AS n FROM payment_status_deltas
               WHERE account_id = ${accountId} GROUP BY status`,
        ),
      ),

    /** Every account's payments by status (the metrics). */
    all: async (): Promise<Map<PaymentStatus, number>> =>
      added(
        await db.all<Row>(
          sql`SELECT status, CAST(sum(n) AS BIGINT) AS n FROM payment_status_counts GROUP BY status
              UNION ALL
              SELECT status, CAST(sum(n) AS BIGINT) AS n FROM payment_status_deltas GROUP BY status`,
        ),
      ),

    /**
     * Moves the oldest deltas into the counts; answers 0 once there were none left. On PostgreSQL one
     * statement deletes exactly the deltas it adds (a delta whose transaction commits meanwhile
     * is left for the next fold, never lost); on SQLite the transaction has the only writer.
     */
    async fold(): Promise<number> {
      if (db.engine === "postgres") {
        return db.run(
          sql`WITH folded AS (
                DELETE FROM payment_status_deltas
                 WHERE id IN (SELECT id FROM payment_status_deltas ORDER BY id LIMIT ${FOLD_BATCH})
                RETURNING account_id, status, n)
              INSERT INTO payment_status_counts (account_id, status, n)
              SELECT account_id, status, sum(n) FROM folded GROUP BY account_id, status
              ON CONFLICT (account_id, status) DO UPDATE SET n = payment_status_counts.n + excluded.n`,
        );
      }
      return db.transaction(async () => {
        const last = await db.get<{ id: number | null }>(
          sql`SELECT max(id) AS id FROM (SELECT id FROM payment_status_deltas ORDER BY id LIMIT ${FOLD_BATCH}) d`,
        );
        if (last?.id == null) return 0;
        await db.run(
          sql`INSERT INTO payment_status_counts (account_id, status, n)
              SELECT account_id, status, sum(n) FROM payment_status_deltas WHERE id <= ${last.id}
               GROUP BY account_id, status
              ON CONFLICT (account_id, status) DO UPDATE SET n = n + excluded.n`,
        );
        return db.run(sql`DELETE FROM payment_status_deltas WHERE id <= ${last.id}`);
      });
    },
  };
}
