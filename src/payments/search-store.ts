import { type Db, list, raw, type Sql, sql, sqlFor } from "../db/engine.ts";
import { createStatusCountStore } from "./status-count-store.ts";
import { normalise, type PaymentRow, type PaymentStatus } from "./store.ts";

/**
 * The dashboard's reads of payments: lists and exact searches newest first, paged by keyset on
 * (created_at, seq), and the home page's figures. Every statement here is answered from an index,
 * most of them migration 009's (test/payments/search.test.ts reads each one's query plan): a list
 * page reads its own rows, never the account's, and no page view counts the whole list.
 */

/** Where a search looks: the payment id, or reference, invoice number and customer email at once. */
export type SearchKind = "none" | "id" | "text";

export interface SearchFilter {
  accountId: string;
  status?: PaymentStatus;
  /** Epoch milliseconds: created at or after / before. */
  createdGte?: number;
  createdLt?: number;
  search?: { kind: "id" | "text"; value: string };
}

/** A position in the list: the (created_at, seq) of a payment. */
export interface Keyset {
  createdAt: number;
  seq: number;
}

/** What the export writes of a payment: fewer columns than a page row, read without reshaping. */
export interface ExportPayment {
  seq: number;
  id: string;
  created_at: number;
  status: PaymentStatus;
  amount: bigint;
  amount_received: bigint | null;
  amount_settled: bigint;
  fee_settled: bigint;
  reference: string | null;
  invoice_number: string | null;
  description: string | null;
  customer_email: string | null;
  payment_link: string | null;
  /** Credited transfers' transaction hashes in chain order, `;`-joined; null when none. */
  transfer_hashes: string | null;
  /** Mined settlements' transaction hashes (more than one when late funds were swept again). */
  settlement_hashes: string | null;
  /** What succeeded refunds paid back. */
  amount_refunded: bigint;
}

// The hashes come from correlated subqueries, each one probe of its table's payment index, so a
// batch is one statement however many transfers and settlements its payments have. SQLite joins
// them with group_concat, PostgreSQL with string_agg: the same ordered, `;`-joined text.
const exportColumns = (joined: string) =>
  raw(`seq, id, created_at, status, amount, amount_received, amount_settled,
  fee_settled, reference, invoice_number, description, customer_email, payment_link, amount_refunded,
  (SELECT ${joined}(t.tx_hash, ';' ORDER BY t.block_number, t.log_index) FROM transfers t
    WHERE t.payment_id = payments.id AND t.credited_at IS NOT NULL) AS transfer_hashes,
  (SELECT ${joined}(s.tx_hash, ';' ORDER BY s.id) FROM settlements s
    WHERE s.payment_id = payments.id AND s.state = 'mined') AS settlement_hashes`);
const EXPORT_COLUMNS_SQLITE = exportColumns("group_concat");
const EXPORT_COLUMNS_POSTGRES = exportColumns("string_agg");
const ALL_COLUMNS = raw("*");
const BIGINTS = { bigints: true };

export type SearchStore = ReturnType<typeof createSearchStore>;

const LOWEST = Number.MIN_SAFE_INTEGER;
const HIGHEST = Number.MAX_SAFE_INTEGER;

export function createSearchStore(db: Db) {
  const statusCounts = createStatusCountStore(db);
  const EXPORT_COLUMNS = sqlFor(db, EXPORT_COLUMNS_SQLITE, EXPORT_COLUMNS_POSTGRES);
  // Each arm names the index SQLite must walk; PostgreSQL has no such hint and picks it by itself.
  const indexedBy = (index: string) => sqlFor(db, raw(` INDEXED BY ${index}`), raw(""));

  /**
   * Rows past `from` in `direction`, in the order the statement walks them: one SELECT per place
   * the match is looked up in, each in its index's order, merged (SQLite's MERGE UNION ALL,
   * PostgreSQL's Merge Append) so that LIMIT stops every arm early. `older` pages towards the past.
   */
  async function run(
    filter: SearchFilter,
    direction: "older" | "newer",
    from: Keyset | null,
    limit: number,
    columns: Sql,
  ): Promise<Record<string, unknown>[]> {
    const older = direction === "older";
    const gte = filter.createdGte ?? LOWEST;
    const lt = filter.createdLt ?? HIGHEST;
    // The keyset bound also carries the date bound on its side: one range for the index to walk.
    let key: Keyset = older ? { createdAt: lt, seq: LOWEST } : { createdAt: gte, seq: LOWEST };
    if (from && (older ? before(from, key) : before(key, from))) key = from;
    const { accountId, status, search } = filter;
    const q = search?.value ?? null;
    const statusMatch = status !== undefined ? sql` AND status = ${status}` : raw("");
    const bound = older
      ? sql`(created_at, seq) < (${key.createdAt}, ${key.seq}) AND created_at >= ${gte}`
      : sql`(created_at, seq) > (${key.createdAt}, ${key.seq}) AND created_at < ${lt}`;
    const arm = (index: string, match: Sql) =>
      sql`SELECT ${columns} FROM payments${indexedBy(index)} WHERE account_id = ${accountId} AND ${match} AND ${bound}`;
    const arms =
      search?.kind === "id"
        ? [
            sql`SELECT ${columns} FROM payments
                 WHERE id = ${q} AND account_id = ${accountId}${statusMatch} AND ${bound}`,
          ]
        : search?.kind === "text"
          ? [
              arm("payments_account_reference", sql`reference = ${q}${statusMatch}`),
              arm("payments_account_invoice", sql`invoice_number = ${q}${statusMatch}`),
              arm("payments_account_email", sql`customer_email = ${q} COLLATE NOCASE${statusMatch}`),
            ]
          : status !== undefined
            ? [arm("payments_account_status", sql`status = ${status}`)]
            : [arm("payments_account_created", raw("TRUE"))];
    const tail = sql`ORDER BY ${raw(older ? "created_at DESC, seq DESC" : "created_at, seq")} LIMIT ${limit}`;
    const union = sql`${list(arms, "\nUNION ALL\n")}\n${tail}`;
    // PostgreSQL merges arms (Merge Append) only when each is ordered and limited on its own,
    // which SQLite's grammar does not allow; a bare UNION ALL it sorts whole, every match.
    const merged =
      arms.length > 1
        ? sql`${list(
            arms.map((select) => sql`(${select}\n${tail})`),
            "\nUNION ALL\n",
          )}\n${tail}`
        : union;
    return db.all<Record<string, unknown>>(sqlFor(db, union, merged), BIGINTS);
  }

  return {
    /**
     * Up to `limit` payments matching `filter` past `from` (exclusive; none: from the newest or
     * oldest end), newest first either way.
     */
    async page(
      filter: SearchFilter,
      direction: "older" | "newer",
      from: Keyset | null,
      limit: number,
    ): Promise<PaymentRow[]> {
      const rows = (await run(filter, direction, from, limit, ALL_COLUMNS)).map(
        (row) => normalise(row as unknown as PaymentRow)!,
      );
      return direction === "older" ? rows : rows.reverse();
    },

    /** The export's columns of up to `limit` payments older than `from`, newest first. */
    async exportPage(filter: SearchFilter, from: Keyset | null, limit: number): Promise<ExportPayment[]> {
      const rows = (await run(filter, "older", from, limit, EXPORT_COLUMNS)) as unknown as ExportPayment[];
      for (const row of rows) {
        row.seq = Number(row.seq);
        row.created_at = Number(row.created_at);
      }
      return rows;
    },

    /** Where a payment of this account sits in the list; null when it is not this account's. */
    async keysetOf(accountId: string, id: string): Promise<Keyset | null> {
      const row = await db.get<{ created_at: number; seq: number }>(
        sql`SELECT created_at, seq FROM payments WHERE id = ${id} AND account_id = ${accountId}`,
      );
      return row ? { createdAt: row.created_at, seq: row.seq } : null;
    },

    /** Kept by triggers on every insert and status change (src/payments/status-count-store.ts). */
    countByStatus: statusCounts.forAccount,

    /** Settled totals for the UTC days `firstDay`..`lastDay` that have any. */
    settledDaily: async (accountId: string, firstDay: number, lastDay: number) =>
      (
        await db.all<{ day: number; gross: bigint; fee: bigint }>(
          sql`SELECT day, gross, fee FROM settled_daily
               WHERE account_id = ${accountId} AND day BETWEEN ${firstDay} AND ${lastDay} ORDER BY day`,
          BIGINTS,
        )
      ).map((r) => ({ day: Number(r.day), gross: r.gross, fee: r.fee })),
  };
}

/** Whether `a` comes before `b` in (created_at, seq) order. */
function before(a: Keyset, b: Keyset): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.seq < b.seq);
}
