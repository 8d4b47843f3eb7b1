import { type Db, sql, sqlFor } from "../db/engine.ts";
import type { Speed } from "../lib/speed.ts";

export interface AccountRow {
  id: string;
  name: string;
  payout_address: string;
  fee_bps: number | null;
  /** Its speed policy (docs/speed.md); null: it follows the server's STABLEGATE_SPEED. */
  speed: Speed | null;
  created_at: number;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  key_hash: string;
  key_hint: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** A key as authentication needs it, with its account. */
export interface KeyWithAccount extends Pick<ApiKeyRow, "id" | "key_hash" | "revoked_at" | "last_used_at"> {
  account_id: string;
  account_name: string;
  payout_address: string;
  fee_bps: number | null;
  speed: Speed | null;
  /**
   * The version of everything a key's authentication reads (migration 025's `account_changes`,
   * moved by triggers at every revocation and account change), read in the same statement.
   */
  version: number;
}

export type AccountStore = ReturnType<typeof createAccountStore>;

export function createAccountStore(db: Db) {
  return {
    /** A new account follows the server's speed policy unless the row says otherwise. */
    insertAccount: (row: Omit<AccountRow, "speed"> & { speed?: Speed | null }) =>
      db.run(
        sql`INSERT INTO accounts (id, name, payout_address, fee_bps, speed, created_at)
             VALUES (${row.id}, ${row.name}, ${row.payout_address}, ${row.fee_bps}, ${row.speed ?? null},
             ${row.created_at})`,
      ),
    findAccount: (id: string) => db.get<AccountRow>(sql`SELECT * FROM accounts WHERE id = ${id}`),
    /**
     * findAccount for a change its transaction then makes and records (the payout address and its
     * event): on PostgreSQL, whose transactions run side by side, the row stays locked until that
     * transaction ends, so a second change starts from what the first wrote. SQLite runs one at a time.
     */
    findAccountToUpdate: (id: string) =>
      db.get<AccountRow>(
        sqlFor(
          db,
          sql`SELECT * FROM accounts WHERE id = ${id}`,
          sql`SELECT * FROM accounts WHERE id = ${id} FOR NO KEY UPDATE`,
        ),
      ),
    listAccounts: () => db.all<AccountRow>(sql`SELECT * FROM accounts ORDER BY created_at, id`),
    insertKey: (row: Omit<ApiKeyRow, "revoked_at" | "last_used_at">) =>
      db.run(
        sql`INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at)
             VALUES (${row.id}, ${row.account_id}, ${row.key_hash}, ${row.key_hint}, ${row.created_at})`,
      ),
    /** A request's key and its account in one statement: every API request starts with it. */
    findKeyByHash: (hash: string) =>
      db.get<KeyWithAccount>(
        sql`SELECT k.id, k.key_hash, k.revoked_at, k.last_used_at,
                   a.id AS account_id, a.name AS account_name, a.payout_address, a.fee_bps, a.speed,
                   (SELECT n FROM account_changes) AS version
              FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ${hash}`,
      ),
    listKeys: (accountId?: string) =>
      accountId
        ? db.all<ApiKeyRow>(sql`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`)
        : db.all<ApiKeyRow>(sql`SELECT * FROM api_keys ORDER BY created_at, id`),
    /** With `accountId`, only that account's key: another account's is as unknown as a missing one. */
    revokeKey: (id: string, now: number, accountId?: string) =>
      accountId === undefined
        ? db.get<ApiKeyRow>(
            sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${id} RETURNING *`,
          )
        : db.get<ApiKeyRow>(
            sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${now}) WHERE id = ${id}
                AND account_id = ${accountId}
                 RETURNING *`,
          ),
    /** Whether the key exists and is not revoked. */
    isKeyLive: async (id: string) =>
      (await db.get<{ id: string }>(sql`SELECT id FROM api_keys WHERE id = ${id} AND revoked_at IS NULL`)) != null,
    /**
     * Records a use at `now` unless one at or after `staleBefore` is recorded already. On
     * PostgreSQL a key another request is recording right now is skipped rather than waited for:
     * that one records the use, and a burst of requests on one key never queues on its row.
     */
    touchKey: async (id: string, now: number, staleBefore: number) =>
      (await db.run(
        sqlFor(
          db,
          sql`UPDATE api_keys SET last_used_at = ${now}
               WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${staleBefore})`,
          sql`UPDATE api_keys SET last_used_at = ${now}
               WHERE id = (SELECT id FROM api_keys
                            WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${staleBefore})
                            FOR UPDATE SKIP LOCKED)`,
        ),
      )) > 0,
    setPayoutAddress: (id: string, address: string) =>
      db.get<AccountRow>(sql`UPDATE accounts SET payout_address = ${address} WHERE id = ${id} RETURNING *`),
    /** null: the account follows the server's default again. */
    setSpeed: (id: string, speed: Speed | null) =>
      db.get<AccountRow>(sql`UPDATE accounts SET speed = ${speed} WHERE id = ${id} RETURNING *`),
    countAccountsWithFee: async () =>
      (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM accounts WHERE fee_bps > 0`))?.n ?? 0,
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}
