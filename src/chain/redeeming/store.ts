import { type Db, sql } from "../../db/engine.ts";
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

/** Amounts can pass 2^53: rows are read with bigints, then normalised. */
const BIGINTS = { bigints: true };

export function createBurnStore(db: Db) {
  const find = async (sourceDomain: number, txHash: string, paymentId: string) => {
    const row = await db.get<BurnRow>(
      sql`SELECT * FROM crosschain_burns
          WHERE source_domain = ${sourceDomain} AND tx_hash = ${txHash} AND payment_id = ${paymentId}`,
      BIGINTS,
    );
    return row ? normalise(row) : null;
  };

  return {
    /**
     * Records a burn for a payment once; returns the stored row, new or earlier. `amount` is
     * the burned amount when the source chain has already been read, else null.
     */
    async record(row: {
      id: string;
      payment_id: string;
      source_chain: string;
      source_domain: number;
      tx_hash: string;
      amount: bigint | null;
      now: number;
      /** For a deposit address's own burn: its bridge. */
      bridge_id?: string;
    }): Promise<BurnRow> {
      const amount = row.amount === null ? null : int64(row.amount, "burn amount");
      const bridgeId = row.bridge_id ?? null;
      await db.run(
        sql`INSERT INTO crosschain_burns
              (id, payment_id, source_chain, source_domain, tx_hash, state, amount, bridge_id, next_attempt_at,
               created_at, updated_at)
            VALUES (${row.id}, ${row.payment_id}, ${row.source_chain}, ${row.source_domain}, ${row.tx_hash},
               'attesting', ${amount}, ${bridgeId}, ${row.now}, ${row.now}, ${row.now})
            ON CONFLICT (source_domain, tx_hash, payment_id) DO NOTHING`,
      );
      return (await find(row.source_domain, row.tx_hash, row.payment_id))!;
    },
    /** The payment's burn whose attested message has `nonce`, if one was posted and attested. */
    findByMessageNonce: async (paymentId: string, nonce: string) => {
      const row = await db.get<BurnRow>(
        sql`SELECT * FROM crosschain_burns WHERE payment_id = ${paymentId} AND message_nonce = ${nonce}`,
        BIGINTS,
      );
      return row ? normalise(row) : null;
    },
    /** A burn posted as a payer's that is the deposit address's own: carried by `bridgeId` from now on. */
    attachBridge: (id: string, bridgeId: string, now: number) =>
      db.run(
        sql`UPDATE crosschain_burns SET bridge_id = ${bridgeId}, updated_at = ${now}
            WHERE id = ${id} AND bridge_id IS NULL`,
      ),
    /** The burns payers made for a payment (a deposit address's own are shown with its transfers). */
    forPayment: async (paymentId: string) =>
      (
        await db.all<BurnRow>(
          sql`SELECT * FROM crosschain_burns WHERE payment_id = ${paymentId} AND bridge_id IS NULL ORDER BY created_at`,
          BIGINTS,
        )
      ).map(normalise),
    /** Relayer nonces signed for redemptions, so the nonce manager never hands one out twice. */
    maxRedeemNonce: async () =>
      (await db.get<{ n: number | null }>(sql`SELECT max(redeem_nonce) AS n FROM crosschain_burns`))?.n ?? null,
    /** A payment's burns not yet found on their source chain. */
    countUnchecked: async (paymentId: string) =>
      (
        await db.get<{ n: number }>(
          sql`SELECT count(*) AS n FROM crosschain_burns
              WHERE payment_id = ${paymentId} AND amount IS NULL AND state = 'attesting' AND bridge_id IS NULL`,
        )
      )?.n ?? 0,
    /** The burn `txHash` as recorded for one payment (each payment has its own record). */
    find,
    due: async (now: number) =>
      (
        await db.all<BurnRow>(
          sql`SELECT * FROM crosschain_burns
              WHERE state IN ('attesting', 'redeeming') AND next_attempt_at <= ${now}
              ORDER BY next_attempt_at LIMIT 50`,
          BIGINTS,
        )
      ).map(normalise),
    async save(row: BurnRow, now: number): Promise<number> {
      const amount = row.amount === null ? null : int64(row.amount, "burn amount");
      return db.run(
        sql`UPDATE crosschain_burns SET state = ${row.state}, amount = ${amount}, message = ${row.message},
              attestation = ${row.attestation}, message_nonce = ${row.message_nonce},
              redeem_tx_hash = ${row.redeem_tx_hash}, redeem_nonce = ${row.redeem_nonce},
              redeem_raw_tx = ${row.redeem_raw_tx}, redeem_sent_at = ${row.redeem_sent_at}, error = ${row.error},
              attempts = ${row.attempts}, next_attempt_at = ${row.next_attempt_at}, updated_at = ${now}
            WHERE id = ${row.id}`,
      );
    },
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
