import { type Db, isPostgres, sql } from "../../db/engine.ts";

export type RecoveryState = "pending" | "submitted" | "succeeded" | "failed";

export interface RecoveryRow {
  id: string;
  payment_id: string;
  chain_id: number;
  /** ERC-20 address, or null for the native coin. */
  token: string | null;
  decimals: number | null;
  payout_address: string;
  state: RecoveryState;
  /** The Recovered event's amount in the token's smallest units, as a decimal string (it may pass 2^63). */
  amount_units: string | null;
  nonce: number | null;
  raw_tx: string | null;
  tx_hash: string | null;
  /** JSON list of every hash signed for `nonce`, oldest first. */
  tx_hashes: string | null;
  sent_at: number | null;
  block_number: number | null;
  error: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  updated_at: number;
}

export type RecoveryStore = ReturnType<typeof createRecoveryStore>;

/** SQL of recoveries: the requests and the transactions that carry them out. */
export function createRecoveryStore(db: Db) {
  const openFor = (paymentId: string, chainId: number, token: string | null) =>
    db.get<RecoveryRow>(
      sql`SELECT * FROM recoveries
          WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND coalesce(token, '') = ${token ?? ""}
            AND state IN ('pending', 'submitted')
          ORDER BY created_at LIMIT 1`,
    );
  return {
    async insert(row: {
      id: string;
      payment_id: string;
      chain_id: number;
      token: string | null;
      decimals: number | null;
      payout_address: string;
      now: number;
    }): Promise<void> {
      await db.run(
        sql`INSERT INTO recoveries
              (id, payment_id, chain_id, token, decimals, payout_address, state, next_attempt_at, created_at,
               updated_at)
            VALUES (${row.id}, ${row.payment_id}, ${row.chain_id}, ${row.token}, ${row.decimals},
               ${row.payout_address}, 'pending', ${row.now}, ${row.now}, ${row.now})`,
      );
    },
    findById: (id: string) => db.get<RecoveryRow>(sql`SELECT * FROM recoveries WHERE id = ${id}`),
    /** A payment's recoveries, newest first. */
    forPayment: (paymentId: string) =>
      db.all<RecoveryRow>(
        sql`SELECT * FROM recoveries WHERE payment_id = ${paymentId} ORDER BY created_at DESC, id DESC`,
      ),
    /** The recovery of this token on this chain still under way, if any. */
    openFor,
    due: (now: number) =>
      db.all<RecoveryRow>(
        sql`SELECT * FROM recoveries WHERE state IN ('pending', 'submitted') AND next_attempt_at <= ${now}
            ORDER BY next_attempt_at LIMIT 50`,
      ),
    /**
     * When this token of the payment was last asked for on this chain after `since` (ms), if it
     * was: the newest request for a payment's token on a chain, for the limits (./limits.ts).
     */
    latestFor: async (paymentId: string, chainId: number, token: string | null, since: number) =>
      (
        await db.get<{ at: number | null }>(
          sql`SELECT max(created_at) AS at FROM recoveries
              WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND coalesce(token, '') = ${token ?? ""}
                AND created_at > ${since}`,
        )
      )?.at ?? null,
    /**
     * When each of the account's recoveries asked after `since` (ms) was asked, oldest first, for
     * the limits (./limits.ts). It reads the recoveries, each with its payment by key, rather than
     * every payment the account ever made: the limits keep the table small.
     */
    askedByAccountSince: async (accountId: string, since: number) =>
      (
        await db.all<{ created_at: number }>(
          sql`SELECT created_at FROM recoveries r
              WHERE created_at > ${since}
                AND EXISTS (SELECT 1 FROM payments p WHERE p.id = r.payment_id AND p.account_id = ${accountId})
              ORDER BY created_at`,
        )
      ).map((row) => row.created_at),
    async save(row: RecoveryRow, now: number): Promise<void> {
      await db.run(
        sql`UPDATE recoveries SET state = ${row.state}, amount_units = ${row.amount_units}, nonce = ${row.nonce},
              raw_tx = ${row.raw_tx}, tx_hash = ${row.tx_hash}, tx_hashes = ${row.tx_hashes}, sent_at = ${row.sent_at},
              block_number = ${row.block_number}, error = ${row.error}, attempts = ${row.attempts},
              next_attempt_at = ${row.next_attempt_at}, updated_at = ${now}
            WHERE id = ${row.id}`,
      );
    },
    /**
     * The highest relayer nonce signed for a recovery on `chainId`, so a restart never reuses it.
     * Every nonce ever signed counts: a failed or replaced row's transaction may still be in a mempool.
     */
    maxNonceOn: async (chainId: number) =>
      (await db.get<{ n: number | null }>(sql`SELECT max(nonce) AS n FROM recoveries WHERE chain_id = ${chainId}`))
        ?.n ?? null,
    /**
     * Holds the account's other requests back until the caller's transaction ends, on PostgreSQL,
     * whose transactions run side by side: two asked at once are decided one after the other, the
     * second seeing the first's row and counting it. SQLite runs one transaction at a time already.
     */
    async lockAccount(accountId: string): Promise<void> {
      if (isPostgres(db)) await db.get(sql`SELECT id FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`);
    },
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}
