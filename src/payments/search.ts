import type { Clock } from "../lib/clock.ts";
import { ValidationError } from "../lib/errors.ts";
import { PAYMENT_ID } from "../lib/ids.ts";
import type { ExportPayment, Keyset, SearchFilter, SearchStore } from "./search-store.ts";
import { PAYMENT_STATUSES, type PaymentRow, type PaymentStatus, utcDay } from "./store.ts";

/** A list's filters, decoded: what the dashboard's form and the API's query string both become. */
export interface PaymentFilter {
  status?: PaymentStatus;
  /** Epoch milliseconds: created at or after / before. */
  createdGte?: number;
  createdLt?: number;
  /** An exact payment id, reference, invoice number or customer email (any case). */
  search?: string;
}

/** Where a page starts: after the payment `before` (older ones) or before `after` (newer ones). */
export interface PageCursor {
  before?: string;
  after?: string;
}

export interface PaymentPage {
  rows: PaymentRow[];
  /** The cursors of the pages either side, null at an end of the list. */
  older: string | null;
  newer: string | null;
}

/** Settled money over some UTC days: gross (what left the deposit addresses) = fee + net. */
export interface Totals {
  gross: bigint;
  fee: bigint;
  net: bigint;
}

export interface HomeFigures {
  /** The UTC day the figures end with, as YYYY-MM-DD. */
  today: string;
  totals: { today: Totals; week: Totals; month: Totals };
  /** The 30 UTC days ending today, oldest first, each with its settled gross. */
  daily: Array<{ day: string; gross: bigint }>;
  counts: Record<PaymentStatus, number>;
  /** Underpaid and failed payments, newest first. */
  attention: PaymentRow[];
  /** Whether there are more of them than `attention` shows. */
  moreAttention: boolean;
}

export const PAGE_SIZE = 25;
/** The longest search text: the longest field a search can match (reference) is 500 characters. */
export const MAX_SEARCH_LENGTH = 500;
const ATTENTION_SHOWN = 10;
/** Rows the export reads per query: large enough to be fast, small enough to keep memory flat. */
export const EXPORT_BATCH = 1000;

export type PaymentSearch = ReturnType<typeof createPaymentSearch>;

export function createPaymentSearch(deps: { store: SearchStore; clock: Clock }) {
  const { store, clock } = deps;

  const scoped = (accountId: string, filter: PaymentFilter): SearchFilter => ({
    accountId,
    status: filter.status,
    createdGte: filter.createdGte,
    createdLt: filter.createdLt,
    search:
      filter.search === undefined
        ? undefined
        : { kind: PAYMENT_ID.test(filter.search) ? "id" : "text", value: filter.search },
  });

  async function cursorKeyset(accountId: string, name: string, id: string): Promise<Keyset> {
    const keyset = await store.keysetOf(accountId, id);
    if (!keyset) throw new ValidationError(`${name}: no payment ${id}`);
    return keyset;
  }

  function sum(days: Array<{ day: number; gross: bigint; fee: bigint }>, from: number): Totals {
    let gross = 0n;
    let fee = 0n;
    for (const d of days) {
      if (d.day < from) continue;
      gross += d.gross;
      fee += d.fee;
    }
    return { gross, fee, net: gross - fee };
  }

  return {
    /**
     * One page of the list, newest first. Each page asks for one row more than it shows, in the
     * direction it goes, and for a single row the other way: that is how it knows both links,
     * without counting anything.
     */
    async page(
      accountId: string,
      filter: PaymentFilter,
      cursor: PageCursor = {},
      limit = PAGE_SIZE,
    ): Promise<PaymentPage> {
      const where = scoped(accountId, filter);
      const keyset = (row: PaymentRow): Keyset => ({ createdAt: row.created_at, seq: row.seq });
      const anyPast = async (direction: "older" | "newer", from: Keyset) =>
        (await store.page(where, direction, from, 1)).length > 0;
      if (cursor.after !== undefined) {
        const from = await cursorKeyset(accountId, "after", cursor.after);
        const found = await store.page(where, "newer", from, limit + 1);
        const rows = found.slice(-limit);
        const last = rows.at(-1);
        return {
          rows,
          newer: found.length > limit ? rows[0]!.id : null,
          older: (await anyPast("older", last ? keyset(last) : from)) ? (last?.id ?? cursor.after) : null,
        };
      }
      const from = cursor.before === undefined ? null : await cursorKeyset(accountId, "before", cursor.before);
      const found = await store.page(where, "older", from, limit + 1);
      const rows = found.slice(0, limit);
      const first = rows[0];
      return {
        rows,
        older: found.length > limit ? rows.at(-1)!.id : null,
        newer:
          from !== null && (await anyPast("newer", first ? keyset(first) : from))
            ? (first?.id ?? cursor.before!)
            : null,
      };
    },

    /** The home page's figures, for the UTC day the clock is in. */
    async home(accountId: string): Promise<HomeFigures> {
      const today = utcDay(clock.now());
      const days = await store.settledDaily(accountId, today - 29, today);
      const byDay = new Map(days.map((d) => [d.day, d.gross]));
      const counted = await store.countByStatus(accountId);
      const counts = Object.fromEntries(PAYMENT_STATUSES.map((s) => [s, counted.get(s) ?? 0])) as Record<
        PaymentStatus,
        number
      >;
      const attention = await store.page({ accountId, status: "underpaid" }, "older", null, ATTENTION_SHOWN + 1);
      const failed = await store.page({ accountId, status: "failed" }, "older", null, ATTENTION_SHOWN + 1);
      const merged = [...attention, ...failed].sort((a, b) => b.created_at - a.created_at || b.seq - a.seq);
      return {
        today: dayText(today),
        totals: { today: sum(days, today), week: sum(days, today - 6), month: sum(days, today - 29) },
        daily: Array.from({ length: 30 }, (_, i) => {
          const day = today - 29 + i;
          return { day: dayText(day), gross: byDay.get(day) ?? 0n };
        }),
        counts,
        attention: merged.slice(0, ATTENTION_SHOWN),
        moreAttention: merged.length > ATTENTION_SHOWN,
      };
    },

    /**
     * Every payment matching `filter`, newest first, in batches read one at a time by keyset, so
     * an export of any size holds one batch in memory. Each row comes with its credited transfers'
     * and mined settlements' transaction hashes.
     */
    async *exportBatches(
      accountId: string,
      filter: PaymentFilter,
      batch = EXPORT_BATCH,
    ): AsyncGenerator<ExportPayment[]> {
      const where = scoped(accountId, filter);
      let from: Keyset | null = null;
      for (;;) {
        const rows = await store.exportPage(where, from, batch);
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < batch) return;
        const last = rows.at(-1)!;
        from = { createdAt: last.created_at, seq: last.seq };
      }
    },
  };
}

/** YYYY-MM-DD of a day number (days since 1970-01-01, UTC). */
export const dayText = (day: number): string => new Date(day * 86_400_000).toISOString().slice(0, 10);
