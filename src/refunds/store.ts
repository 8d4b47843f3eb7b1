import { type Db, list, raw, sql, sqlFor } from "../db/engine.ts";

export type RefundStatus = "awaiting_address" | "awaiting_payment" | "succeeded" | "canceled";
export const REFUND_STATUSES: readonly RefundStatus[] = [
  "awaiting_address",
  "awaiting_payment",
  "succeeded",
  "canceled",
];

/** A refunds row as stored. Amounts are bigint micro-USDC; times are epoch milliseconds. */
export interface RefundRow {
  seq: number;
  id: string;
  account_id: string;
  payment_id: string;
  amount: bigint;
  status: RefundStatus;
  reason: string | null;
  metadata: string | null;
  claim_token_hash: string;
  chain_id: number;
  refund_address: string | null;
  payable_after_block: number | null;
  tx_hash: string | null;
  log_index: number | null;
  block_number: number | null;
  block_hash: string | null;
  created_at: number;
  updated_at: number;
  payable_at: number | null;
  succeeded_at: number | null;
  canceled_at: number | null;
}

export type NewRefundRow = Pick<
  RefundRow,
  | "id"
  | "account_id"
  | "payment_id"
  | "amount"
  | "status"
  | "reason"
  | "metadata"
  | "claim_token_hash"
  | "chain_id"
  | "refund_address"
  | "payable_after_block"
  | "created_at"
  | "updated_at"
  | "payable_at"
>;

/** A transfer that pays a refund, as the watcher saw it. */
export interface RefundTransfer {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
}

export interface RefundListFilter {
  accountId: string;
  limit: number;
  beforeSeq?: number;
  paymentId?: string;
  status?: RefundStatus;
  createdGte?: number;
  createdLt?: number;
}

export type RefundStore = ReturnType<typeof createRefundStore>;

const NEW_COLUMNS = [
  "id",
  "account_id",
  "payment_id",
  "amount",
  "status",
  "reason",
  "metadata",
  "claim_token_hash",
  "chain_id",
  "refund_address",
  "payable_after_block",
  "created_at",
  "updated_at",
  "payable_at",
] as const;

const INSERT_COLUMNS = raw(NEW_COLUMNS.join(", "));
const BIGINTS = { bigints: true };

export function createRefundStore(db: Db) {
  const findById = async (id: string) =>
    normalise(await db.get<RefundRow>(sql`SELECT * FROM refunds WHERE id = ${id}`, BIGINTS));

  return {
    async insert(row: NewRefundRow): Promise<RefundRow> {
      const values = list(NEW_COLUMNS.map((c) => sql`${row[c]}`));
      return normalise(
        await db.get<RefundRow>(sql`INSERT INTO refunds (${INSERT_COLUMNS}) VALUES (${values}) RETURNING *`, BIGINTS),
      )!;
    },
    findById,
    findForAccount: async (id: string, accountId: string) =>
      normalise(
        await db.get<RefundRow>(sql`SELECT * FROM refunds WHERE id = ${id} AND account_id = ${accountId}`, BIGINTS),
      ),
    findByClaimHash: async (hash: string) =>
      normalise(await db.get<RefundRow>(sql`SELECT * FROM refunds WHERE claim_token_hash = ${hash}`, BIGINTS)),
    /**
     * findForAccount and findByClaimHash for a change their transaction then makes (a cancel, a
     * claim): on PostgreSQL, whose transactions run side by side, the row stays locked until that
     * transaction ends, so a second change decides from what the first wrote and is answered as if
     * it came after it ("canceled already"), not refused as a lost race. SQLite runs one at a time.
     */
    findForAccountToUpdate: async (id: string, accountId: string) =>
      normalise(
        await db.get<RefundRow>(
          sqlFor(
            db,
            sql`SELECT * FROM refunds WHERE id = ${id} AND account_id = ${accountId}`,
            sql`SELECT * FROM refunds WHERE id = ${id} AND account_id = ${accountId} FOR NO KEY UPDATE`,
          ),
          BIGINTS,
        ),
      ),
    findByClaimHashToUpdate: async (hash: string) =>
      normalise(
        await db.get<RefundRow>(
          sqlFor(
            db,
            sql`SELECT * FROM refunds WHERE claim_token_hash = ${hash}`,
            sql`SELECT * FROM refunds WHERE claim_token_hash = ${hash} FOR NO KEY UPDATE`,
          ),
          BIGINTS,
        ),
      ),
    /**
     * Newest first; asks for one row more than `limit` so the caller can tell has_more. The casts
     * give PostgreSQL the type of a filter that may be null, which `IS NULL` alone does not.
     */
    async list(filter: RefundListFilter): Promise<RefundRow[]> {
      const beforeSeq = filter.beforeSeq ?? null;
      const paymentId = filter.paymentId ?? null;
      const status = filter.status ?? null;
      const createdGte = filter.createdGte ?? null;
      const createdLt = filter.createdLt ?? null;
      const rows = await db.all<RefundRow>(
        sql`SELECT * FROM refunds
             WHERE account_id = ${filter.accountId}
               AND (CAST(${beforeSeq} AS BIGINT) IS NULL OR seq < ${beforeSeq})
               AND (CAST(${paymentId} AS TEXT) IS NULL OR payment_id = ${paymentId})
               AND (CAST(${status} AS TEXT) IS NULL OR status = ${status})
               AND (CAST(${createdGte} AS BIGINT) IS NULL OR created_at >= ${createdGte})
               AND (CAST(${createdLt} AS BIGINT) IS NULL OR created_at < ${createdLt})
             ORDER BY seq DESC LIMIT ${filter.limit + 1}`,
        BIGINTS,
      );
      return rows.map((row) => normalise(row)!);
    },
    /**
     * Takes `amount` from what the payment may still refund; false when that is less than `amount`.
     * One statement checks the cap and takes from it, so two refunds at once can never both pass.
     */
    reserve: async (paymentId: string, amount: bigint, now: number) =>
      (await db.run(
        sql`UPDATE payments SET refund_reserved = refund_reserved + ${amount}, updated_at = ${now}
             WHERE id = ${paymentId} AND coalesce(amount_received, 0) - refund_reserved >= ${amount}`,
      )) > 0,
    /** Gives a canceled refund's amount back to what the payment may refund. */
    release: (paymentId: string, amount: bigint, now: number) =>
      db.run(
        sql`UPDATE payments SET refund_reserved = refund_reserved - ${amount}, updated_at = ${now}
             WHERE id = ${paymentId} AND refund_reserved >= ${amount}`,
      ),
    addRefunded: (paymentId: string, amount: bigint, now: number) =>
      db.run(
        sql`UPDATE payments SET amount_refunded = amount_refunded + ${amount}, updated_at = ${now}
            WHERE id = ${paymentId}`,
      ),
    /** Compare-and-set: only a refund still waiting for its address takes one. */
    setAddress: async (id: string, address: string, afterBlock: number | null, now: number) =>
      (await db.run(
        sql`UPDATE refunds SET status = 'awaiting_payment', refund_address = ${address},
                   payable_after_block = ${afterBlock}, payable_at = ${now},
                   updated_at = ${now} WHERE id = ${id} AND status = 'awaiting_address'`,
      )) > 0,
    /** Compare-and-set: only an unpaid refund with no transfer seen for it is canceled. */
    cancel: async (id: string, now: number) =>
      (await db.run(
        sql`UPDATE refunds SET status = 'canceled', canceled_at = ${now}, updated_at = ${now}
             WHERE id = ${id} AND status IN ('awaiting_address', 'awaiting_payment') AND tx_hash IS NULL`,
      )) > 0,
    /** Refunds on `chainId` with an address, waiting for their transfer: the oldest payable first. */
    payable: async (chainId: number) =>
      (
        await db.all<RefundRow>(
          sql`SELECT * FROM refunds WHERE chain_id = ${chainId} AND status = 'awaiting_payment'
              ORDER BY payable_at, seq`,
          BIGINTS,
        )
      ).map((row) => normalise(row)!),
    /**
     * Compare-and-set: a transfer seen for a refund that had none, unless it paid another refund.
     * A transfer that paid a refund already (seen again when a rescan passes its block) pays no
     * other: refused here rather than by the unique index, whose error would fail the watcher's
     * whole range.
     */
    seeTransfer: async (id: string, t: RefundTransfer, now: number) =>
      (await db.run(
        sql`UPDATE refunds SET tx_hash = ${t.txHash}, log_index = ${t.logIndex}, block_number = ${t.blockNumber},
                   block_hash = ${t.blockHash}, updated_at = ${now}
             WHERE id = ${id} AND status = 'awaiting_payment' AND tx_hash IS NULL
               AND NOT EXISTS (SELECT 1 FROM refunds paid
                                WHERE paid.chain_id = refunds.chain_id AND paid.tx_hash = ${t.txHash}
                                  AND paid.log_index = ${t.logIndex})`,
      )) > 0,
    /** A seen transfer a reorg took off the chain: the refund waits for its transfer again. */
    forgetTransfer: async (id: string, now: number) =>
      (await db.run(
        sql`UPDATE refunds SET tx_hash = NULL, log_index = NULL, block_number = NULL, block_hash = NULL,
                   updated_at = ${now}
             WHERE id = ${id} AND status = 'awaiting_payment'`,
      )) > 0,
    succeed: async (id: string, now: number) =>
      (await db.run(
        sql`UPDATE refunds SET status = 'succeeded', succeeded_at = ${now}, updated_at = ${now}
             WHERE id = ${id} AND status = 'awaiting_payment' AND tx_hash IS NOT NULL`,
      )) > 0,
    countForPayment: async (paymentId: string) =>
      Number((await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM refunds WHERE payment_id = ${paymentId}`))!.n),
  };
}

/** Everything but the amount back to number (all well inside 2^53). */
function normalise(row: RefundRow | null | undefined): RefundRow | null {
  if (!row) return null;
  const n = (value: number | null) => (value === null ? null : Number(value));
  return {
    ...row,
    seq: Number(row.seq),
    chain_id: Number(row.chain_id),
    payable_after_block: n(row.payable_after_block),
    log_index: n(row.log_index),
    block_number: n(row.block_number),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    payable_at: n(row.payable_at),
    succeeded_at: n(row.succeeded_at),
    canceled_at: n(row.canceled_at),
  };
}
