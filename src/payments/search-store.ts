import type { Db } from "../db/index.ts";
import { normalise, type PaymentRow, type PaymentStatus } from "./store.ts";

/**
 * The dashboard's reads of payments: lists and exact searches newest first, paged by keyset on
 * (created_at, seq), and the home page's figures. Every statement here is answered from an index
 * of migration 009 (a test reads each one's query plan): the list's cost is its page, never the
 * account's size, and no page view counts the whole list.
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

export type SearchStore = ReturnType<typeof createSearchStore>;

const LOWEST = Number.MIN_SAFE_INTEGER;
const HIGHEST = Number.MAX_SAFE_INTEGER;

export function createSearchStore(db: Db) {
  const statements = new Map<string, ReturnType<typeof prepare>>();
  const prepare = (sql: string) => db.query<PaymentRow, Record<string, string | number | null>>(sql).safeIntegers(true);

  /**
   * One SELECT per place the match is looked up in, each in its index's order, merged by SQLite
   * (MERGE UNION ALL) so that LIMIT stops every arm early. `older` pages towards the past.
   */
  function statement(status: boolean, search: SearchKind, older: boolean) {
    const key = `${status}/${search}/${older}`;
    let query = statements.get(key);
    if (query) return query;
    const statusMatch = status ? " AND status = $status" : "";
    const bound = older
      ? "(created_at, seq) < ($key_at, $key_seq) AND created_at >= $gte"
      : "(created_at, seq) > ($key_at, $key_seq) AND created_at < $lt";
    const arm = (index: string, match: string) =>
      `SELECT * FROM payments INDEXED BY ${index} WHERE account_id = $account_id AND ${match} AND ${bound}`;
    const arms =
      search === "id"
        ? [`SELECT * FROM payments WHERE id = $q AND account_id = $account_id${statusMatch} AND ${bound}`]
        : search === "text"
          ? [
              arm("payments_account_reference", `reference = $q${statusMatch}`),
              arm("payments_account_invoice", `invoice_number = $q${statusMatch}`),
              arm("payments_account_email", `customer_email = $q COLLATE NOCASE${statusMatch}`),
            ]
          : status
            ? [arm("payments_account_status", "status = $status")]
            : [arm("payments_account_created", "1")];
    const order = older ? "created_at DESC, seq DESC" : "created_at, seq";
    query = prepare(`${arms.join("\nUNION ALL\n")}\nORDER BY ${order} LIMIT $limit`);
    statements.set(key, query);
    return query;
  }

  const countByStatus = db.query<{ status: PaymentStatus; n: number }, [string]>(
    "SELECT status, count(*) AS n FROM payments INDEXED BY payments_account_status WHERE account_id = ? GROUP BY status",
  );
  const settledDaily = db
    .query<{ day: number; gross: bigint; fee: bigint }, [string, number, number]>(
      "SELECT day, gross, fee FROM settled_daily WHERE account_id = ? AND day BETWEEN ? AND ? ORDER BY day",
    )
    .safeIntegers(true);
  const keysetOf = db.query<{ created_at: number; seq: number }, [string, string]>(
    "SELECT created_at, seq FROM payments WHERE id = ? AND account_id = ?",
  );
  // The export's extra columns for a page of payments, in one query each rather than two per row.
  const creditedTransfers = db.query<{ payment_id: string; tx_hash: string }, [string]>(
    `SELECT payment_id, tx_hash FROM transfers
      WHERE payment_id IN (SELECT value FROM json_each(?)) AND credited_at IS NOT NULL
      ORDER BY payment_id, block_number, log_index`,
  );
  const minedSettlements = db.query<{ payment_id: string; tx_hash: string }, [string]>(
    `SELECT payment_id, tx_hash FROM settlements
      WHERE payment_id IN (SELECT value FROM json_each(?)) AND state = 'mined' ORDER BY payment_id, id`,
  );

  /** Payment id to its hashes, in order. */
  const grouped = (rows: Array<{ payment_id: string; tx_hash: string }>) => {
    const byPayment = new Map<string, string[]>();
    for (const { payment_id, tx_hash } of rows) {
      const list = byPayment.get(payment_id);
      if (list) list.push(tx_hash);
      else byPayment.set(payment_id, [tx_hash]);
    }
    return byPayment;
  };

  return {
    /**
     * Up to `limit` payments matching `filter` past `from` (exclusive; none: from the newest or
     * oldest end), newest first either way.
     */
    page(filter: SearchFilter, direction: "older" | "newer", from: Keyset | null, limit: number): PaymentRow[] {
      const older = direction === "older";
      const gte = filter.createdGte ?? LOWEST;
      const lt = filter.createdLt ?? HIGHEST;
      // The keyset bound also carries the date bound on its side: one range for the index to walk.
      let key: Keyset = older ? { createdAt: lt, seq: LOWEST } : { createdAt: gte, seq: LOWEST };
      if (from && (older ? before(from, key) : before(key, from))) key = from;
      const rows = statement(filter.status !== undefined, filter.search?.kind ?? "none", older).all({
        account_id: filter.accountId,
        status: filter.status ?? null,
        q: filter.search?.value ?? null,
        key_at: key.createdAt,
        key_seq: key.seq,
        gte,
        lt,
        limit,
      });
      const normalised = rows.map((row) => normalise(row)!);
      return older ? normalised : normalised.reverse();
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

    creditedTransfers: (paymentIds: string[]) => grouped(creditedTransfers.all(JSON.stringify(paymentIds))),
    minedSettlements: (paymentIds: string[]) => grouped(minedSettlements.all(JSON.stringify(paymentIds))),
  };
}

/** Whether `a` comes before `b` in (created_at, seq) order. */
function before(a: Keyset, b: Keyset): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.seq < b.seq);
}
