import type { Db } from "../../db/index.ts";
import { inTransaction } from "../../db/transaction.ts";

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
  const insert = db.query(
    `INSERT INTO recoveries
       (id, payment_id, chain_id, token, decimals, payout_address, state, next_attempt_at, created_at, updated_at)
     VALUES ($id, $payment_id, $chain_id, $token, $decimals, $payout_address, 'pending', $now, $now, $now)`,
  );
  const findById = db.query<RecoveryRow, [string]>("SELECT * FROM recoveries WHERE id = ?");
  const forPayment = db.query<RecoveryRow, [string]>(
    "SELECT * FROM recoveries WHERE payment_id = ? ORDER BY created_at DESC, id DESC",
  );
  const openFor = db.query<RecoveryRow, [string, number, string]>(
    `SELECT * FROM recoveries
     WHERE payment_id = ? AND chain_id = ? AND coalesce(token, '') = ? AND state IN ('pending', 'submitted')
     ORDER BY created_at LIMIT 1`,
  );
  const due = db.query<RecoveryRow, [number]>(
    `SELECT * FROM recoveries WHERE state IN ('pending', 'submitted') AND next_attempt_at <= ?
     ORDER BY next_attempt_at LIMIT 50`,
  );
  const update = db.query(
    `UPDATE recoveries SET state = $state, amount_units = $amount_units, nonce = $nonce, raw_tx = $raw_tx,
       tx_hash = $tx_hash, tx_hashes = $tx_hashes, sent_at = $sent_at, block_number = $block_number,
       error = $error, attempts = $attempts, next_attempt_at = $next_attempt_at, updated_at = $now
     WHERE id = $id`,
  );
  // The limits on requests (./limits.ts): the newest request for a payment's token on a chain, and
  // every request of an account's payments, since a time. The second reads the recoveries, each
  // with its payment by key, rather than every payment the account ever made: the limits keep
  // the table small.
  const latestFor = db.query<{ at: number | null }, [string, number, string, number]>(
    `SELECT max(created_at) AS at FROM recoveries
     WHERE payment_id = ? AND chain_id = ? AND coalesce(token, '') = ? AND created_at > ?`,
  );
  const accountSince = db.query<{ created_at: number }, [number, string]>(
    `SELECT created_at FROM recoveries r
     WHERE created_at > ? AND EXISTS (SELECT 1 FROM payments p WHERE p.id = r.payment_id AND p.account_id = ?)
     ORDER BY created_at`,
  );
  // Every nonce ever signed counts: a failed or replaced row's transaction may still be in a mempool.
  const maxNonceOn = db.query<{ n: number | null }, [number]>(
    "SELECT max(nonce) AS n FROM recoveries WHERE chain_id = ?",
  );

  return {
    insert: (row: {
      id: string;
      payment_id: string;
      chain_id: number;
      token: string | null;
      decimals: number | null;
      payout_address: string;
      now: number;
    }) => void insert.run(row),
    findById: (id: string) => findById.get(id),
    /** A payment's recoveries, newest first. */
    forPayment: (paymentId: string) => forPayment.all(paymentId),
    /** The recovery of this token on this chain still under way, if any. */
    openFor: (paymentId: string, chainId: number, token: string | null) => openFor.get(paymentId, chainId, token ?? ""),
    due: (now: number) => due.all(now),
    /** When this token of the payment was last asked for on this chain after `since` (ms), if it was. */
    latestFor: (paymentId: string, chainId: number, token: string | null, since: number) =>
      latestFor.get(paymentId, chainId, token ?? "", since)?.at ?? null,
    /** When each of the account's recoveries asked after `since` (ms) was asked, oldest first. */
    askedByAccountSince: (accountId: string, since: number) =>
      accountSince.all(since, accountId).map((row) => row.created_at),
    save: (row: RecoveryRow, now: number) =>
      void update.run({
        id: row.id,
        state: row.state,
        amount_units: row.amount_units,
        nonce: row.nonce,
        raw_tx: row.raw_tx,
        tx_hash: row.tx_hash,
        tx_hashes: row.tx_hashes,
        sent_at: row.sent_at,
        block_number: row.block_number,
        error: row.error,
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at,
        now,
      }),
    /** The highest relayer nonce signed for a recovery on `chainId`, so a restart never reuses it. */
    maxNonceOn: (chainId: number) => maxNonceOn.get(chainId)?.n ?? null,
    transaction: <T>(fn: () => T): T => inTransaction(db, fn),
  };
}
