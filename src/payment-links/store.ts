import { type Db, isPostgres, list, raw, sql } from "../db/engine.ts";
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

const INSERT_COLUMNS = raw(COLUMNS.join(", "));
// bigints: amounts are read as bigint, as the payments store reads them.
const BIGINTS = { bigints: true };

export function createPaymentLinkStore(db: Db) {
  return {
    async insert(row: NewPaymentLinkRow): Promise<void> {
      const values = list(COLUMNS.map((c) => sql`${c === "active" ? (row.active ? 1 : 0) : row[c]}`));
      await db.run(sql`INSERT INTO payment_links (${INSERT_COLUMNS}) VALUES (${values})`);
    },
    findById: async (id: string) =>
      normalise(await db.get<PaymentLinkRow>(sql`SELECT * FROM payment_links WHERE id = ${id}`, BIGINTS)),
    findForAccount: async (id: string, accountId: string) =>
      normalise(
        await db.get<PaymentLinkRow>(
          sql`SELECT * FROM payment_links WHERE id = ${id} AND account_id = ${accountId}`,
          BIGINTS,
        ),
      ),
    /**
     * Newest first; asks for one row more than `limit` so the caller can tell has_more. The cast
     * gives PostgreSQL the type of a cursor that may be null, which `IS NULL` alone does not.
     */
    async list(accountId: string, limit: number, beforeSeq?: number): Promise<PaymentLinkRow[]> {
      const before = beforeSeq ?? null;
      const rows = await db.all<PaymentLinkRow>(
        sql`SELECT * FROM payment_links
             WHERE account_id = ${accountId} AND (CAST(${before} AS BIGINT) IS NULL OR seq < ${before})
             ORDER BY seq DESC LIMIT ${limit + 1}`,
        BIGINTS,
      );
      return rows.map((row) => normalise(row)!);
    },
    /**
     * Holds other payments of the link back from being counted until the caller's transaction ends,
     * on PostgreSQL, whose transactions run side by side (in one process and across replicas): each
     * payment counts those made before it, so the link's cap holds. FOR NO KEY UPDATE, not FOR
     * UPDATE: a payment's insert takes a KEY SHARE on its link (the foreign key), which this must
     * not wait for, or two payments made at once would each wait for the other's. SQLite runs one
     * transaction at a time already.
     */
    async lock(linkId: string): Promise<void> {
      if (isPostgres(db)) await db.get(sql`SELECT id FROM payment_links WHERE id = ${linkId} FOR NO KEY UPDATE`);
    },
    /**
     * How many of the link's payments wait for money with their window open, and when the first
     * closes. Through the partial index payments_link_pending: a link's pending payments, not all
     * it ever had.
     */
    async openPayments(linkId: string, now: number): Promise<{ open: number; soonest: number | null }> {
      const row = (await db.get<{ open: number; soonest: number | null }>(
        sql`SELECT count(*) AS open, min(expires_at) AS soonest FROM payments
             WHERE payment_link = ${linkId} AND status = 'pending' AND payment_link IS NOT NULL
             AND expires_at > ${now}`,
      ))!;
      return { open: Number(row.open), soonest: row.soonest === null ? null : Number(row.soonest) };
    },
    /** The secret stored under `name` (src/db/server-secrets.ts). */
    secret: async (name: string, candidate: string, now: number): Promise<string> =>
      serverSecret(db, name, candidate, now),
    /** Changes nothing (and says so) for another account's link. */
    setActive: async (id: string, accountId: string, active: boolean, now: number) =>
      (await db.run(
        sql`UPDATE payment_links SET active = ${active ? 1 : 0}, updated_at = ${now}
             WHERE id = ${id} AND account_id = ${accountId}`,
      )) > 0,
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
