import type { Db } from "../db/index.ts";
import { serverSecret } from "../db/server-secrets.ts";

/** A payment_links row as stored. Amounts are bigint micro-USDC; times are epoch milliseconds. */
export interface PaymentLinkRow {
  seq: number;
  id: string;
  account_id: string;
  description: string | null;
  /** Null: the payer chooses, within min_amount and max_amount when set. */
  amount: bigint | null;
  line_items: string | null;
  min_amount: bigint | null;
  max_amount: bigint | null;
  success_url: string | null;
  metadata: string | null;
  active: boolean;
  created_at: number;
  updated_at: number;
}

export type NewPaymentLinkRow = Omit<PaymentLinkRow, "seq">;

const COLUMNS = [
  "id",
  "account_id",
  "description",
  "amount",
  "line_items",
  "min_amount",
  "max_amount",
  "success_url",
  "metadata",
  "active",
  "created_at",
  "updated_at",
] as const;

export type PaymentLinkStore = ReturnType<typeof createPaymentLinkStore>;

export function createPaymentLinkStore(db: Db) {
  const insert = db.query(
    `INSERT INTO payment_links (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `$${c}`).join(", ")})`,
  );
  // safeIntegers: amounts are read as bigint, as the payments store reads them.
  const findById = db.query<PaymentLinkRow, [string]>("SELECT * FROM payment_links WHERE id = ?").safeIntegers(true);
  const findForAccount = db
    .query<PaymentLinkRow, [string, string]>("SELECT * FROM payment_links WHERE id = ? AND account_id = ?")
    .safeIntegers(true);
  // The cast gives PostgreSQL the type of a cursor that may be null, which `IS NULL` alone does not.
  const list = db
    .query<PaymentLinkRow, [string, number | null, number]>(
      `SELECT * FROM payment_links
        WHERE account_id = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR seq < ?2)
        ORDER BY seq DESC LIMIT ?3`,
    )
    .safeIntegers(true);
  const setActive = db.query("UPDATE payment_links SET active = ?, updated_at = ? WHERE id = ? AND account_id = ?");
  // Through the partial index payments_link_pending: a link's pending payments, not all it ever had.
  const openPayments = db.query<{ open: number; soonest: number | null }, [string, number]>(
    `SELECT count(*) AS open, min(expires_at) AS soonest FROM payments
      WHERE payment_link = ? AND status = 'pending' AND payment_link IS NOT NULL AND expires_at > ?`,
  );

  return {
    insert(row: NewPaymentLinkRow) {
      insert.run(
        Object.fromEntries(COLUMNS.map((c) => [c, c === "active" ? (row.active ? 1 : 0) : row[c]])) as Record<
          string,
          string | number | bigint | null
        >,
      );
    },
    findById: (id: string) => normalise(findById.get(id)),
    findForAccount: (id: string, accountId: string) => normalise(findForAccount.get(id, accountId)),
    /** Newest first; asks for one row more than `limit` so the caller can tell has_more. */
    list: (accountId: string, limit: number, beforeSeq?: number) =>
      list.all(accountId, beforeSeq ?? null, limit + 1).map((row) => normalise(row)!),
    /** How many of the link's payments wait for money with their window open, and when the first closes. */
    openPayments(linkId: string, now: number): { open: number; soonest: number | null } {
      const row = openPayments.get(linkId, now)!;
      return { open: Number(row.open), soonest: row.soonest === null ? null : Number(row.soonest) };
    },
    /** The secret stored under `name` (src/db/server-secrets.ts). */
    secret: (name: string, candidate: string, now: number): string => serverSecret(db, name, candidate, now),
    /** Changes nothing (and says so) for another account's link. */
    setActive: (id: string, accountId: string, active: boolean, now: number) =>
      setActive.run(active ? 1 : 0, now, id, accountId).changes > 0,
  };
}

/** Everything but the amounts back to number (all well inside 2^53); `active` to a boolean. */
function normalise(row: PaymentLinkRow | null): PaymentLinkRow | null {
  if (!row) return null;
  return {
    ...row,
    seq: Number(row.seq),
    active: Number(row.active) === 1,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
