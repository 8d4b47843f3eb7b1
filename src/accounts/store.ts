import type { Db } from "../db/index.ts";
import { inTransaction } from "../db/transaction.ts";
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
}

export type AccountStore = ReturnType<typeof createAccountStore>;

export function createAccountStore(db: Db) {
  const insertAccount = db.query(
    `INSERT INTO accounts (id, name, payout_address, fee_bps, speed, created_at)
     VALUES ($id, $name, $payout_address, $fee_bps, $speed, $created_at)`,
  );
  const findAccount = db.query<AccountRow, [string]>("SELECT * FROM accounts WHERE id = ?");
  const listAccounts = db.query<AccountRow, []>("SELECT * FROM accounts ORDER BY created_at, id");
  const insertKey = db.query(
    `INSERT INTO api_keys (id, account_id, key_hash, key_hint, created_at)
     VALUES ($id, $account_id, $key_hash, $key_hint, $created_at)`,
  );
  // A request's key and its account in one statement: every API request starts with it.
  const findKeyByHash = db.query<KeyWithAccount, [string]>(
    `SELECT k.id, k.key_hash, k.revoked_at, k.last_used_at,
            a.id AS account_id, a.name AS account_name, a.payout_address, a.fee_bps, a.speed
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
  );
  const listAllKeys = db.query<ApiKeyRow, []>("SELECT * FROM api_keys ORDER BY created_at, id");
  const listAccountKeys = db.query<ApiKeyRow, [string]>(
    "SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id",
  );
  const revoke = db.query<ApiKeyRow, [number, string]>(
    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING *",
  );
  const revokeForAccount = db.query<ApiKeyRow, [number, string, string]>(
    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND account_id = ? RETURNING *",
  );
  const liveKey = db.query<{ id: string }, [string]>("SELECT id FROM api_keys WHERE id = ? AND revoked_at IS NULL");
  const touchKey = db.query(
    "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)",
  );
  const setPayout = db.query<AccountRow, [string, string]>(
    "UPDATE accounts SET payout_address = ? WHERE id = ? RETURNING *",
  );
  const setSpeed = db.query<AccountRow, [Speed | null, string]>(
    "UPDATE accounts SET speed = ? WHERE id = ? RETURNING *",
  );
  const countFeeAccounts = db.query<{ n: number }, []>("SELECT count(*) AS n FROM accounts WHERE fee_bps > 0");

  return {
    /** A new account follows the server's speed policy unless the row says otherwise. */
    insertAccount: (row: Omit<AccountRow, "speed"> & { speed?: Speed | null }) =>
      insertAccount.run({ speed: null, ...row }),
    findAccount: (id: string) => findAccount.get(id),
    listAccounts: () => listAccounts.all(),
    insertKey: (row: Omit<ApiKeyRow, "revoked_at" | "last_used_at">) => insertKey.run({ ...row }),
    findKeyByHash: (hash: string) => findKeyByHash.get(hash),
    listKeys: (accountId?: string) => (accountId ? listAccountKeys.all(accountId) : listAllKeys.all()),
    /** With `accountId`, only that account's key: another account's is as unknown as a missing one. */
    revokeKey: (id: string, now: number, accountId?: string) =>
      accountId === undefined ? revoke.get(now, id) : revokeForAccount.get(now, id, accountId),
    /** Whether the key exists and is not revoked. */
    isKeyLive: (id: string) => liveKey.get(id) != null,
    /** Records a use at `now` unless one at or after `staleBefore` is recorded already. */
    touchKey: (id: string, now: number, staleBefore: number) => touchKey.run(now, id, staleBefore).changes > 0,
    setPayoutAddress: (id: string, address: string) => setPayout.get(address, id),
    /** null: the account follows the server's default again. */
    setSpeed: (id: string, speed: Speed | null) => setSpeed.get(speed, id),
    countAccountsWithFee: () => countFeeAccounts.get()?.n ?? 0,
    transaction: <T>(fn: () => T): T => inTransaction(db, fn),
  };
}
