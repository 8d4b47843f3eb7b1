import type { Db } from "../db/index.ts";

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

export function createRefundStore(db: Db) {
  const insert = db
    .query<RefundRow, [Record<string, string | number | bigint | null>]>(
      `INSERT INTO refunds (${NEW_COLUMNS.join(", ")})
       VALUES (${NEW_COLUMNS.map((c) => `$${c}`).join(", ")}) RETURNING *`,
    )
    .safeIntegers(true);
  const findById = db.query<RefundRow, [string]>("SELECT * FROM refunds WHERE id = ?").safeIntegers(true);
  const findForAccount = db
    .query<RefundRow, [string, string]>("SELECT * FROM refunds WHERE id = ? AND account_id = ?")
    .safeIntegers(true);
  const findByClaimHash = db
    .query<RefundRow, [string]>("SELECT * FROM refunds WHERE claim_token_hash = ?")
    .safeIntegers(true);
  // The casts give PostgreSQL the type of a filter that may be null, which `IS NULL` alone does not.
  const list = db
    .query<RefundRow, Record<string, string | number | null>>(
      `SELECT * FROM refunds
        WHERE account_id = $account_id
          AND (CAST($before_seq AS BIGINT) IS NULL OR seq < $before_seq)
          AND (CAST($payment_id AS TEXT) IS NULL OR payment_id = $payment_id)
          AND (CAST($status AS TEXT) IS NULL OR status = $status)
          AND (CAST($created_gte AS BIGINT) IS NULL OR created_at >= $created_gte)
          AND (CAST($created_lt AS BIGINT) IS NULL OR created_at < $created_lt)
        ORDER BY seq DESC LIMIT $limit`,
    )
    .safeIntegers(true);
  // One statement checks the cap and takes from it, so two refunds at once can never both pass.
  const reserve = db.query(
    `UPDATE payments SET refund_reserved = refund_reserved + ?1, updated_at = ?2
      WHERE id = ?3 AND coalesce(amount_received, 0) - refund_reserved >= ?1`,
  );
  const release = db.query(
    "UPDATE payments SET refund_reserved = refund_reserved - ?, updated_at = ? WHERE id = ? AND refund_reserved >= ?",
  );
  const addRefunded = db.query(
    "UPDATE payments SET amount_refunded = amount_refunded + ?, updated_at = ? WHERE id = ?",
  );
  const setAddress = db.query(
    `UPDATE refunds SET status = 'awaiting_payment', refund_address = ?, payable_after_block = ?, payable_at = ?,
            updated_at = ? WHERE id = ? AND status = 'awaiting_address'`,
  );
  const cancel = db.query(
    `UPDATE refunds SET status = 'canceled', canceled_at = ?1, updated_at = ?1
      WHERE id = ?2 AND status IN ('awaiting_address', 'awaiting_payment') AND tx_hash IS NULL`,
  );
  const payable = db
    .query<RefundRow, [number]>(
      "SELECT * FROM refunds WHERE chain_id = ? AND status = 'awaiting_payment' ORDER BY payable_at, seq",
    )
    .safeIntegers(true);
  // A transfer that paid a refund already (seen again when a rescan passes its block) pays no other:
  // refused here rather than by the unique index, whose error would fail the watcher's whole range.
  const seeTransfer = db.query(
    `UPDATE refunds SET tx_hash = ?1, log_index = ?2, block_number = ?3, block_hash = ?4, updated_at = ?5
      WHERE id = ?6 AND status = 'awaiting_payment' AND tx_hash IS NULL
        AND NOT EXISTS (SELECT 1 FROM refunds paid
                         WHERE paid.chain_id = refunds.chain_id AND paid.tx_hash = ?1 AND paid.log_index = ?2)`,
  );
  const forgetTransfer = db.query(
    `UPDATE refunds SET tx_hash = NULL, log_index = NULL, block_number = NULL, block_hash = NULL, updated_at = ?
      WHERE id = ? AND status = 'awaiting_payment'`,
  );
  const succeed = db.query(
    `UPDATE refunds SET status = 'succeeded', succeeded_at = ?1, updated_at = ?1
      WHERE id = ?2 AND status = 'awaiting_payment' AND tx_hash IS NOT NULL`,
  );
  const countForPayment = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM refunds WHERE payment_id = ?");

  return {
    insert: (row: NewRefundRow): RefundRow =>
      normalise(insert.get(Object.fromEntries(NEW_COLUMNS.map((c) => [c, row[c]]))))!,
    findById: (id: string) => normalise(findById.get(id)),
    findForAccount: (id: string, accountId: string) => normalise(findForAccount.get(id, accountId)),
    findByClaimHash: (hash: string) => normalise(findByClaimHash.get(hash)),
    /** Newest first; asks for one row more than `limit` so the caller can tell has_more. */
    list: (filter: RefundListFilter): RefundRow[] =>
      list
        .all({
          account_id: filter.accountId,
          before_seq: filter.beforeSeq ?? null,
          payment_id: filter.paymentId ?? null,
          status: filter.status ?? null,
          created_gte: filter.createdGte ?? null,
          created_lt: filter.createdLt ?? null,
          limit: filter.limit + 1,
        })
        .map((row) => normalise(row)!),
    /** Takes `amount` from what the payment may still refund; false when that is less than `amount`. */
    reserve: (paymentId: string, amount: bigint, now: number) => reserve.run(amount, now, paymentId).changes > 0,
    /** Gives a canceled refund's amount back to what the payment may refund. */
    release: (paymentId: string, amount: bigint, now: number) => release.run(amount, now, paymentId, amount),
    addRefunded: (paymentId: string, amount: bigint, now: number) => addRefunded.run(amount, now, paymentId),
    /** Compare-and-set: only a refund still waiting for its address takes one. */
    setAddress: (id: string, address: string, afterBlock: number | null, now: number) =>
      setAddress.run(address, afterBlock, now, now, id).changes > 0,
    /** Compare-and-set: only an unpaid refund with no transfer seen for it is canceled. */
    cancel: (id: string, now: number) => cancel.run(now, id).changes > 0,
    /** Refunds on `chainId` with an address, waiting for their transfer: the oldest payable first. */
    payable: (chainId: number) => payable.all(chainId).map((row) => normalise(row)!),
    /** Compare-and-set: a transfer seen for a refund that had none, unless it paid another refund. */
    seeTransfer: (id: string, t: RefundTransfer, now: number) =>
      seeTransfer.run(t.txHash, t.logIndex, t.blockNumber, t.blockHash, now, id).changes > 0,
    /** A seen transfer a reorg took off the chain: the refund waits for its transfer again. */
    forgetTransfer: (id: string, now: number) => forgetTransfer.run(now, id).changes > 0,
    succeed: (id: string, now: number) => succeed.run(now, id).changes > 0,
    countForPayment: (paymentId: string) => Number(countForPayment.get(paymentId)!.n),
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
