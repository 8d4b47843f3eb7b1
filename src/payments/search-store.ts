import { type Db, sqlFor } from "../db/engine.ts";
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
const exportColumns = (joined: string) => `seq, id, created_at, status, amount, amount_received, amount_settled,
  fee_settled, reference, invoice_number, description, customer_email, payment_link, amount_refunded,
  (SELECT ${joined}(t.tx_hash, ';' ORDER BY t.block_number, t.log_index) FROM transfers t
    WHERE t.payment_id = payments.id AND t.credited_at IS NOT NULL) AS transfer_hashes,
  (SELECT ${joined}(s.tx_hash, ';' ORDER BY s.id) FROM settlements s
    WHERE s.payment_id = payments.id AND s.state = 'mined') AS settlement_hashes`;
const EXPORT_COLUMNS_SQLITE = exportColumns("group_concat");
const EXPORT_COLUMNS_POSTGRES = exportColumns("string_agg");

export type SearchStore = ReturnType<typeof createSearchStore>;

const LOWEST = Number.MIN_SAFE_INTEGER;
const HIGHEST = Number.MAX_SAFE_INTEGER;

export function createSearchStore(db: Db) {
  const EXPORT_COLUMNS = sqlFor(db, EXPORT_COLUMNS_SQLITE, EXPORT_COLUMNS_POSTGRES);
  // Each arm names the index SQLite must walk; PostgreSQL has no such hint and picks it by itself.
  const indexedBy = (index: string) => sqlFor(db, ` INDEXED BY ${index}`, "");
  const statements = new Map<string, ReturnType<typeof prepare>>();
  const prepare = (sql: string) =>
    db.query<Record<string, unknown>, Record<string, string | number | null>>(sql).safeIntegers(true);

  /**
   * One SELECT per place the match is looked up in, each in its index's order, merged (SQLite's
   * MERGE UNION ALL, PostgreSQL's Merge Append) so that LIMIT stops every arm early. `older`
   * pages towards the past.
   */
  function statement(status: boolean, search: SearchKind, older: boolean, columns = "*") {
    const key = `${status}/${search}/${older}/${columns}`;
    let query = statements.get(key);
    if (query) return query;
    const statusMatch = status ? " AND status = $status" : "";
    const bound = older
      ? "(created_at, seq) < ($key_at, $key_seq) AND created_at >= $gte"
      : "(created_at, seq) > ($key_at, $key_seq) AND created_at < $lt";
    const arm = (index: string, match: string) =>
      `SELECT ${columns} FROM payments${indexedBy(index)} WHERE account_id = $account_id AND ${match} AND ${bound}`;
    const arms =
      search === "id"
        ? [`SELECT ${columns} FROM payments WHERE id = $q AND account_id = $account_id${statusMatch} AND ${bound}`]
        : search === "text"
          ? [
              arm("payments_account_reference", `reference = $q${statusMatch}`),
              arm("payments_account_invoice", `invoice_number = $q${statusMatch}`),
              arm("payments_account_email", `customer_email = $q COLLATE NOCASE${statusMatch}`),
            ]
          : status
            ? [arm("payments_account_status", "status = $status")]
            : [arm("payments_account_created", "TRUE")];
    const tail = `ORDER BY ${older ? "created_at DESC, seq DESC" : "created_at, seq"} LIMIT $limit`;
    const union = `${arms.join("\nUNION ALL\n")}\n${tail}`;
    // PostgreSQL merges arms (Merge Append) only when each is ordered and limited on its own,
    // which SQLite's grammar does not allow; a bare UNION ALL it sorts whole, every match.
    const merged =
      arms.length > 1 ? `${arms.map((select) => `(${select}\n${tail})`).join("\nUNION ALL\n")}\n${tail}` : union;
    query = prepare(sqlFor(db, union, merged));
    statements.set(key, query);
    return query;
  }

  // Kept by triggers of migration 009 on every insert and status change.
  const countByStatus = db.query<{ status: PaymentStatus; n: number }, [string]>(
    "SELECT status, n FROM payment_status_counts WHERE account_id = ?",
  );
  const settledDaily = db
    .query<{ day: number; gross: bigint; fee: bigint }, [string, number, number]>(
      "SELECT day, gross, fee FROM settled_daily WHERE account_id = ? AND day BETWEEN ? AND ? ORDER BY day",
    )
    .safeIntegers(true);
  const keysetOf = db.query<{ created_at: number; seq: number }, [string, string]>(
    "SELECT created_at, seq FROM payments WHERE id = ? AND account_id = ?",
  );
  /** Rows past `from` in `direction`, in the order the statement walks them. */
  function run(
    filter: SearchFilter,
    direction: "older" | "newer",
    from: Keyset | null,
    limit: number,
    columns: string,
  ) {
    const older = direction === "older";
    const gte = filter.createdGte ?? LOWEST;
    const lt = filter.createdLt ?? HIGHEST;
    // The keyset bound also carries the date bound on its side: one range for the index to walk.
    let key: Keyset = older ? { createdAt: lt, seq: LOWEST } : { createdAt: gte, seq: LOWEST };
    if (from && (older ? before(from, key) : before(key, from))) key = from;
    return statement(filter.status !== undefined, filter.search?.kind ?? "none", older, columns).all({
      account_id: filter.accountId,
      status: filter.status ?? null,
      q: filter.search?.value ?? null,
      key_at: key.createdAt,
      key_seq: key.seq,
      gte,
      lt,
      limit,
    });
  }

  return {
    /**
     * Up to `limit` payments matching `filter` past `from` (exclusive; none: from the newest or
     * oldest end), newest first either way.
     */
    page(filter: SearchFilter, direction: "older" | "newer", from: Keyset | null, limit: number): PaymentRow[] {
      const rows = run(filter, direction, from, limit, "*").map((row) => normalise(row as unknown as PaymentRow)!);
      return direction === "older" ? rows : rows.reverse();
    },

    /** The export's columns of up to `limit` payments older than `from`, newest first. */
    exportPage(filter: SearchFilter, from: Keyset | null, limit: number): ExportPayment[] {
      const rows = run(filter, "older", from, limit, EXPORT_COLUMNS) as unknown as ExportPayment[];
      for (const row of rows) {
        row.seq = Number(row.seq);
        row.created_at = Number(row.created_at);
      }
      return rows;
    },

    /** Where a payment of this account sits in the list; null when it is not this account's. */
    keysetOf(accountId: string, id: string): Keyset | null {
      const row = keysetOf.get(id, accountId);
      return row ? { createdAt: row.created_at, seq: row.seq } : null;
    },

    countByStatus(accountId: string): Map<PaymentStatus, number> {
      return new Map(countByStatus.all(accountId).map((r) => [r.status, r.n]));
    },

    /** Settled totals for the UTC days `firstDay`..`lastDay` that have any. */
    settledDaily: (accountId: string, firstDay: number, lastDay: number) =>
      settledDaily.all(accountId, firstDay, lastDay).map((r) => ({ day: Number(r.day), gross: r.gross, fee: r.fee })),
  };
}

/** Whether `a` comes before `b` in (created_at, seq) order. */
function before(a: Keyset, b: Keyset): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.seq < b.seq);
}
