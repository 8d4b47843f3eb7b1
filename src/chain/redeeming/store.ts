import type { Db } from "../../db/index.ts";
import { int64 } from "../../db/int64.ts";

export type BurnState = "attesting" | "redeeming" | "redeemed" | "failed";

export interface BurnRow {
  id: string;
  payment_id: string;
  source_chain: string;
  source_domain: number;
  tx_hash: string;
  state: BurnState;
  amount: bigint | null;
  message: string | null;
  attestation: string | null;
  message_nonce: string | null;
  redeem_tx_hash: string | null;
  redeem_nonce: number | null;
  redeem_raw_tx: string | null;
  redeem_sent_at: number | null;
  error: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  updated_at: number;
  /** Set when the deposit address burned its own funds (src/chain/bridging/): the bridge it belongs to. */
  bridge_id: string | null;
}

export type BurnStore = ReturnType<typeof createBurnStore>;

export function createBurnStore(db: Db) {
  const insert = db.query(
    `INSERT INTO crosschain_burns
       (id, payment_id, source_chain, source_domain, tx_hash, state, amount, bridge_id, next_attempt_at, created_at,
        updated_at)
     VALUES ($id, $payment_id, $source_chain, $source_domain, $tx_hash, 'attesting', $amount, $bridge_id, $now, $now,
        $now)
     ON CONFLICT (source_domain, tx_hash, payment_id) DO NOTHING`,
  );
  const find = db
    .query<BurnRow, [number, string, string]>(
      "SELECT * FROM crosschain_burns WHERE source_domain = ? AND tx_hash = ? AND payment_id = ?",
    )
    .safeIntegers(true);
  const byMessageNonce = db
    .query<BurnRow, [string, string]>("SELECT * FROM crosschain_burns WHERE payment_id = ? AND message_nonce = ?")
    .safeIntegers(true);
  const attachBridge = db.query(
    "UPDATE crosschain_burns SET bridge_id = ?, updated_at = ? WHERE id = ? AND bridge_id IS NULL",
  );
  const maxRedeemNonce = db.query<{ n: number | null }, []>("SELECT max(redeem_nonce) AS n FROM crosschain_burns");
  const countUnchecked = db.query<{ n: number }, [string]>(
    `SELECT count(*) AS n FROM crosschain_burns
     WHERE payment_id = ? AND amount IS NULL AND state = 'attesting' AND bridge_id IS NULL`,
  );
  const forPayment = db
    .query<BurnRow, [string]>(
      "SELECT * FROM crosschain_burns WHERE payment_id = ? AND bridge_id IS NULL ORDER BY created_at",
    )
    .safeIntegers(true);
  const due = db
    .query<BurnRow, [number]>(
      `SELECT * FROM crosschain_burns
       WHERE state IN ('attesting', 'redeeming') AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT 50`,
    )
    .safeIntegers(true);
  const update = db.query(
    `UPDATE crosschain_burns SET state = $state, amount = $amount, message = $message, attestation = $attestation,
       message_nonce = $message_nonce, redeem_tx_hash = $redeem_tx_hash, redeem_nonce = $redeem_nonce,
       redeem_raw_tx = $redeem_raw_tx, redeem_sent_at = $redeem_sent_at, error = $error, attempts = $attempts,
       next_attempt_at = $next_attempt_at, updated_at = $now WHERE id = $id`,
  );

  return {
    /**
     * Records a burn for a payment once; returns the stored row, new or earlier. `amount` is
     * the burned amount when the source chain has already been read, else null.
     */
    record(row: {
      id: string;
      payment_id: string;
      source_chain: string;
      source_domain: number;
      tx_hash: string;
      amount: bigint | null;
      now: number;
      /** For a deposit address's own burn: its bridge. */
      bridge_id?: string;
    }): BurnRow {
      insert.run({
        ...row,
        amount: row.amount === null ? null : int64(row.amount, "burn amount"),
        bridge_id: row.bridge_id ?? null,
      });
      return normalise(find.get(row.source_domain, row.tx_hash, row.payment_id)!);
    },
    /** The payment's burn whose attested message has `nonce`, if one was posted and attested. */
    findByMessageNonce: (paymentId: string, nonce: string) => {
      const row = byMessageNonce.get(paymentId, nonce);
      return row ? normalise(row) : null;
    },
    /** A burn posted as a payer's that is the deposit address's own: carried by `bridgeId` from now on. */
    attachBridge: (id: string, bridgeId: string, now: number) => attachBridge.run(bridgeId, now, id),
    /** The burns payers made for a payment (a deposit address's own are shown with its transfers). */
    forPayment: (paymentId: string) => forPayment.all(paymentId).map(normalise),
    /** Relayer nonces signed for redemptions, so the nonce manager never hands one out twice. */
    maxRedeemNonce: () => maxRedeemNonce.get()?.n ?? null,
    /** A payment's burns not yet found on their source chain. */
    countUnchecked: (paymentId: string) => countUnchecked.get(paymentId)?.n ?? 0,
    /** The burn `txHash` as recorded for one payment (each payment has its own record). */
    find: (sourceDomain: number, txHash: string, paymentId: string) => {
      const row = find.get(sourceDomain, txHash, paymentId);
      return row ? normalise(row) : null;
    },
    due: (now: number) => due.all(now).map(normalise),
    save: (row: BurnRow, now: number) =>
      update.run({
        id: row.id,
        state: row.state,
        amount: row.amount === null ? null : int64(row.amount, "burn amount"),
        message: row.message,
        attestation: row.attestation,
        message_nonce: row.message_nonce,
        redeem_tx_hash: row.redeem_tx_hash,
        redeem_nonce: row.redeem_nonce,
        redeem_raw_tx: row.redeem_raw_tx,
        redeem_sent_at: row.redeem_sent_at,
        error: row.error,
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at,
        now,
      }),
  };
}

function normalise(row: BurnRow): BurnRow {
  return {
    ...row,
    source_domain: Number(row.source_domain),
    attempts: Number(row.attempts),
    redeem_nonce: row.redeem_nonce === null ? null : Number(row.redeem_nonce),
    redeem_sent_at: row.redeem_sent_at === null ? null : Number(row.redeem_sent_at),
    next_attempt_at: Number(row.next_attempt_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
