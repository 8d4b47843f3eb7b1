import type { Db } from "../db/index.ts";

/** A payments row as stored. Amounts are bigint micro-USDC; times are epoch milliseconds. */
export interface PaymentRow {
  seq: number;
  id: string;
  account_id: string;
  status: PaymentStatus;
  amount: bigint;
  amount_received: bigint | null;
  fee_bps: number;
  fee_recipient: string;
  payout_address: string;
  chain_id: number;
  token_address: string;
  deposit_address: string;
  description: string | null;
  reference: string | null;
  success_url: string | null;
  customer_email: string | null;
  customer_name: string | null;
  invoice_number: string | null;
  due_at: number | null;
  metadata: string | null;
  line_items: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

export type PaymentStatus = "pending" | "settling" | "confirmed" | "underpaid" | "overpaid" | "expired" | "failed";
export const PAYMENT_STATUSES: readonly PaymentStatus[] = ["pending", "settling", "confirmed", "underpaid", "overpaid", "expired", "failed"];

const COLUMNS = [
  "id", "account_id", "status", "amount", "amount_received", "fee_bps", "fee_recipient", "payout_address", "chain_id",
  "token_address", "deposit_address", "description", "reference", "success_url", "customer_email", "customer_name",
  "invoice_number", "due_at", "metadata", "line_items", "expires_at", "created_at", "updated_at",
] as const;

export type NewPaymentRow = Omit<PaymentRow, "seq">;

export interface ListFilter {
  accountId: string;
  limit: number;
  beforeSeq?: number;
  status?: PaymentStatus;
  createdGte?: number;
  createdLt?: number;
}

export type PaymentStore = ReturnType<typeof createPaymentStore>;

export function createPaymentStore(db: Db) {
  const insert = db.query(`INSERT INTO payments (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `$${c}`).join(", ")})`);
  // safeIntegers: amounts can exceed 2^53 micro-USDC in the worst case; rows are then normalised.
  const findForAccount = db.query<PaymentRow, [string, string]>("SELECT * FROM payments WHERE id = ? AND account_id = ?").safeIntegers(true);
  const findById = db.query<PaymentRow, [string]>("SELECT * FROM payments WHERE id = ?").safeIntegers(true);
  const list = db
    .query<PaymentRow, Record<string, string | number | null>>(
      `SELECT * FROM payments
        WHERE account_id = $account_id
          AND ($before_seq IS NULL OR seq < $before_seq)
          AND ($status IS NULL OR status = $status)
          AND ($created_gte IS NULL OR created_at >= $created_gte)
          AND ($created_lt IS NULL OR created_at < $created_lt)
        ORDER BY seq DESC LIMIT $limit`,
    )
    .safeIntegers(true);
  const allDepositAddresses = db.query<{ deposit_address: string }, []>("SELECT deposit_address FROM payments");

  return {
    insert(row: NewPaymentRow) {
      insert.run(Object.fromEntries(COLUMNS.map((c) => [c, row[c]])) as Record<string, string | number | bigint | null>);
    },
    findForAccount: (id: string, accountId: string) => normalise(findForAccount.get(id, accountId)),
    findById: (id: string) => normalise(findById.get(id)),
    /** Newest first; asks for one row more than `limit` so the caller can tell has_more. */
    list(filter: ListFilter): PaymentRow[] {
      return list
        .all({
          account_id: filter.accountId,
          before_seq: filter.beforeSeq ?? null,
          status: filter.status ?? null,
          created_gte: filter.createdGte ?? null,
          created_lt: filter.createdLt ?? null,
          limit: filter.limit + 1,
        })
        .map((row) => normalise(row)!);
    },
    allDepositAddresses: () => allDepositAddresses.all().map((r) => r.deposit_address),
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
  };
}

/** Everything but the amounts back to number (all well inside 2^53). */
function normalise(row: PaymentRow | null): PaymentRow | null {
  if (!row) return null;
  return {
    ...row,
    seq: Number(row.seq),
    fee_bps: Number(row.fee_bps),
    chain_id: Number(row.chain_id),
    due_at: row.due_at === null ? null : Number(row.due_at),
    expires_at: Number(row.expires_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
