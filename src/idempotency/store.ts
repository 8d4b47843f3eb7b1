import { type Db, sql } from "../db/engine.ts";

export interface IdempotencyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: number;
}

/** No row is old enough to be taken over. */
const NOTHING_FREE = { expiredAt: Number.MIN_SAFE_INTEGER, abandonedAt: Number.MIN_SAFE_INTEGER };

/** The idempotency_keys table: one row per (account, key), claimed, then completed or released. */
export function createIdempotencyStore(db: Db) {
  return {
    find: (accountId: string, key: string) =>
      db.get<IdempotencyRow>(sql`SELECT * FROM idempotency_keys WHERE account_id = ${accountId} AND key = ${key}`),
    /**
     * Takes the key for a new request, with nothing stored yet: a new row, or over one that expired
     * (created at or before `expiredAt`) or a claim abandoned mid-flight (unanswered, claimed at or
     * before `abandonedAt`); without `free`, only a new row. True when this call took it. One
     * statement decides, so of requests claiming one key at once, on any replica, exactly one takes
     * it: the others wait for its row lock, then find the key taken.
     */
    claim: async (
      accountId: string,
      key: string,
      hash: string,
      now: number,
      free: { expiredAt: number; abandonedAt: number } = NOTHING_FREE,
    ): Promise<boolean> =>
      (await db.get(
        sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at)
             VALUES (${accountId}, ${key}, ${hash}, ${now})
             ON CONFLICT (account_id, key) DO UPDATE
               SET request_hash = excluded.request_hash, created_at = excluded.created_at,
                   status_code = NULL, response_body = NULL
             WHERE idempotency_keys.created_at <= ${free.expiredAt}
                OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at <= ${free.abandonedAt})
             RETURNING 1 AS claimed`,
      )) !== null,
    complete: async (accountId: string, key: string, status: number, body: string): Promise<void> =>
      void (await db.run(
        sql`UPDATE idempotency_keys SET status_code = ${status}, response_body = ${body}
             WHERE account_id = ${accountId} AND key = ${key}`,
      )),
    /** Frees a claim whose request stored nothing; a completed row stays. */
    /** Frees a claim still unanswered, the one made at `claimedAt` only: never a later request's. */
    release: async (accountId: string, key: string, claimedAt: number): Promise<void> =>
      void (await db.run(
        sql`DELETE FROM idempotency_keys
             WHERE account_id = ${accountId} AND key = ${key} AND status_code IS NULL AND created_at = ${claimedAt}`,
      )),
    /** Deletes up to `limit` rows created before `before`; returns how many. */
    purgeBefore: (before: number, limit: number) =>
      db.run(
        sql`DELETE FROM idempotency_keys
             WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys
             WHERE created_at < ${before} LIMIT ${limit})`,
      ),
  };
}
