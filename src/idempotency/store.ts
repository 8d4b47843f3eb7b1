import type { Db } from "../db/index.ts";

export interface IdempotencyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: number;
}

/** The idempotency_keys table: one row per (account, key), claimed, then completed or released. */
export function createIdempotencyStore(db: Db) {
  const find = db.query<IdempotencyRow, [string, string]>(
    "SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ?",
  );
  const claim = db.query(
    `INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash, created_at = excluded.created_at,
       status_code = NULL, response_body = NULL`,
  );
  const complete = db.query(
    "UPDATE idempotency_keys SET status_code = ?, response_body = ? WHERE account_id = ? AND key = ?",
  );
  const release = db.query("DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND status_code IS NULL");
  const purge = db.query(
    `DELETE FROM idempotency_keys
     WHERE (account_id, key) IN (SELECT account_id, key FROM idempotency_keys WHERE created_at < ? LIMIT ?)`,
  );
  return {
    find: (accountId: string, key: string) => find.get(accountId, key),
    /** Takes the key for a new request (over an expired or abandoned row), with nothing stored yet. */
    claim: (accountId: string, key: string, hash: string, now: number) => void claim.run(accountId, key, hash, now),
    complete: (accountId: string, key: string, status: number, body: string) =>
      void complete.run(status, body, accountId, key),
    /** Frees a claim whose request stored nothing; a completed row stays. */
    release: (accountId: string, key: string) => void release.run(accountId, key),
    /** Deletes up to `limit` rows created before `before`; returns how many. */
    purgeBefore: (before: number, limit: number) => purge.run(before, limit).changes,
  };
}
