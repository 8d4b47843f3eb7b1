import { type Db, isPostgres, sql } from "../../db/engine.ts";

/** An authorizations row as stored (migrations/*\/027_authorizations.sql). */
export interface AuthorizationRow {
  id: string;
  payment_id: string | null;
  account_id: string;
  chain_id: number;
  token: string;
  from_address: string;
  to_address: string;
  value: string;
  /** Unix seconds as signed, decimal: a uint256, which may be past any integer column. */
  valid_after: string;
  valid_before: string;
  nonce: string;
  signature: string;
  source: "checkout" | "x402" | "facilitator";
  client: string;
  resource: string | null;
  status: "pending" | "submitted" | "succeeded" | "failed";
  relayer_nonce: number | null;
  raw_tx: string | null;
  tx_hashes: string | null;
  tx_hash: string | null;
  sent_at: number | null;
  from_block: number;
  /** An AuthorizationFailure (./types.ts). */
  failure_code: string | null;
  failure_message: string | null;
  last_error: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  updated_at: number;
}

export type NewAuthorization = Omit<
  AuthorizationRow,
  | "status"
  | "relayer_nonce"
  | "raw_tx"
  | "tx_hashes"
  | "tx_hash"
  | "sent_at"
  | "failure_code"
  | "failure_message"
  | "last_error"
  | "attempts"
  | "next_attempt_at"
  | "updated_at"
>;

export type AuthorizationStore = ReturnType<typeof createAuthorizationStore>;

/** SQL of signed authorizations: what was accepted, and the transactions that carry them. */
export function createAuthorizationStore(db: Db) {
  return {
    /** Inserts a pending row; false when one with the same (chain, token, from, nonce) is there already. */
    async insert(row: NewAuthorization): Promise<boolean> {
      const changed = await db.run(
        sql`INSERT INTO authorizations
              (id, payment_id, account_id, chain_id, token, from_address, to_address, value, valid_after,
               valid_before, nonce, signature, source, client, resource, status, from_block, next_attempt_at,
               created_at, updated_at)
            VALUES (${row.id}, ${row.payment_id}, ${row.account_id}, ${row.chain_id}, ${row.token},
               ${row.from_address}, ${row.to_address}, ${row.value}, ${row.valid_after}, ${row.valid_before},
               ${row.nonce}, ${row.signature}, ${row.source}, ${row.client}, ${row.resource}, 'pending',
               ${row.from_block}, ${row.created_at}, ${row.created_at}, ${row.created_at})
            ON CONFLICT (chain_id, token, from_address, nonce) DO NOTHING`,
      );
      return changed > 0;
    },
    findById: (id: string) => db.get<AuthorizationRow>(sql`SELECT * FROM authorizations WHERE id = ${id}`),
    /** The row of this authorization, the token's own key for it. */
    findByKey: (chainId: number, token: string, from: string, nonce: string) =>
      db.get<AuthorizationRow>(
        sql`SELECT * FROM authorizations
            WHERE chain_id = ${chainId} AND token = ${token} AND from_address = ${from} AND nonce = ${nonce}`,
      ),
    /** A payment's authorizations, oldest first. */
    forPayment: (paymentId: string) =>
      db.all<AuthorizationRow>(
        sql`SELECT * FROM authorizations WHERE payment_id = ${paymentId} ORDER BY created_at, id`,
      ),
    /** The payment's authorization still on its way (accepted or sent, not yet done), if any. */
    openForPayment: (paymentId: string) =>
      db.get<AuthorizationRow>(
        sql`SELECT * FROM authorizations WHERE payment_id = ${paymentId} AND status IN ('pending', 'submitted')
            ORDER BY created_at LIMIT 1`,
      ),
    /**
     * Rows the submitter has work on now: to send, sent and to follow, or succeeded (or failed with
     * a transaction of theirs signed) and watched for a reorg until deep enough; then, as failed ones
     * that never signed one, next_attempt_at is ./relayer-transactions.ts NEVER.
     */
    due: (now: number) =>
      db.all<AuthorizationRow>(
        sql`SELECT * FROM authorizations WHERE next_attempt_at <= ${now} ORDER BY next_attempt_at LIMIT 50`,
      ),
    /** How many were accepted after `since` (ms) for the payment, from the client, for the account: the limits. */
    /** With when the oldest of them was accepted: the per-payment limit lifts when it leaves the window. */
    countForPaymentSince: async (paymentId: string, since: number) => {
      const row = await db.get<{ n: number | bigint | string; oldest: number | bigint | string | null }>(
        sql`SELECT count(*) AS n, min(created_at) AS oldest FROM authorizations
            WHERE payment_id = ${paymentId} AND created_at > ${since}`,
      );
      return { n: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
    },
    countForClientSince: async (client: string, since: number) =>
      count(db, sql`SELECT count(*) AS n FROM authorizations WHERE client = ${client} AND created_at > ${since}`),
    countForAccountSince: async (accountId: string, since: number) =>
      count(
        db,
        sql`SELECT count(*) AS n FROM authorizations WHERE account_id = ${accountId} AND created_at > ${since}`,
      ),
    /**
     * Holds other accepts with the same keys back until the caller's transaction ends, on
     * PostgreSQL, whose transactions run side by side: two at once are counted one after the
     * other. SQLite runs one transaction at a time already.
     */
    async lockKeys(keys: string[]): Promise<void> {
      if (!isPostgres(db)) return;
      for (const key of [...keys].sort())
        await db.get(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`authorizations:${key}`}, 0))`);
    },
    /**
     * Writes the row's new state. `updated_at` is the time of the last change to what the record
     * shows (status, transaction, failure): the submitter's own bookkeeping (the next look, a
     * retried error) moves only its own columns. The right-hand sides read the row as it was.
     */
    async save(row: AuthorizationRow, now: number): Promise<void> {
      await db.run(
        sql`UPDATE authorizations SET status = ${row.status}, relayer_nonce = ${row.relayer_nonce},
              raw_tx = ${row.raw_tx}, tx_hashes = ${row.tx_hashes}, tx_hash = ${row.tx_hash}, sent_at = ${row.sent_at},
              failure_code = ${row.failure_code}, failure_message = ${row.failure_message},
              last_error = ${row.last_error}, attempts = ${row.attempts}, next_attempt_at = ${row.next_attempt_at},
              updated_at = CASE
                WHEN status = ${row.status} AND tx_hash IS NOT DISTINCT FROM ${row.tx_hash}
                 AND failure_code IS NOT DISTINCT FROM ${row.failure_code}
                 AND failure_message IS NOT DISTINCT FROM ${row.failure_message} THEN updated_at
                ELSE ${now} END
            WHERE id = ${row.id}`,
      );
    },
    /**
     * The highest relayer nonce signed for an authorization on `chainId`, so a restart never reuses
     * it. Every nonce ever signed counts: a failed or replaced row's transaction may still be in a mempool.
     */
    maxNonceOn: async (chainId: number) =>
      (
        await db.get<{ n: number | null }>(
          sql`SELECT max(relayer_nonce) AS n FROM authorizations WHERE chain_id = ${chainId}`,
        )
      )?.n ?? null,
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}

async function count(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  return Number((await db.get<{ n: number | bigint }>(query))?.n ?? 0);
}
