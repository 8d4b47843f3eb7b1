import { type Db, isPostgres, raw, type Sql, sql, sqlFor, textsIn } from "../db/engine.ts";
import { INT64_MAX } from "../db/int64.ts";
import { checksummed } from "../lib/keccak.ts";
import { splitFee } from "../lib/money.ts";
import type { Speed } from "../lib/speed.ts";
import { conditionalInsert, plainInsert } from "./insert-store.ts";
import { createStatusCountStore } from "./status-count-store.ts";

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
  /** The payment link it was created through (`plink_...`), or null. */
  payment_link: string | null;
  /**
   * Which deposit factory made the address: 1 (settlement chain only), 2 (every enabled chain),
   * 3 (every chain, a fee that cannot stop the payout: every payment issued since).
   */
  factory_version: 1 | 2 | 3;
  /** Versions 2 and 3 (else null): the rest of what the deposit address commits to (src/chain/deposit-terms.ts). */
  settlement_domain: number | null;
  token_messenger: string | null;
  max_bridge_fee_bps: number | null;
  /** Version 3 only (else null): the source domains `bridge` may ask fast finality from, a decimal bitmap. */
  fast_domains: string | null;
  /** The speed policy in effect for it (src/lib/speed.ts), fixed at creation. */
  speed: Speed;
  expires_at: number;
  created_at: number;
  updated_at: number;
  /** Swept to the merchant so far, from mined settlements. */
  amount_settled: bigint;
  /** The platform fee those settlements took. */
  fee_settled: bigint;
  /** CCTP fees its bridges from other chains paid: the merchant's cost, like a card fee. */
  bridge_fee: bigint;
  settle_attempts: number;
  settle_retry_at: number | null;
  /** Every refund of it not canceled, added up: what may still be refunded is amount_received less this. */
  refund_reserved: bigint;
  /** What its succeeded refunds paid back (src/refunds/). */
  amount_refunded: bigint;
}

export type PaymentStatus = "pending" | "settling" | "confirmed" | "underpaid" | "overpaid" | "expired" | "failed";
export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  "pending",
  "settling",
  "confirmed",
  "underpaid",
  "overpaid",
  "expired",
  "failed",
];

/** What the schema gives the columns a new payment's insert leaves out. */
const NEW_PAYMENT_DEFAULTS = {
  amount_settled: 0n,
  fee_settled: 0n,
  bridge_fee: 0n,
  settle_attempts: 0,
  settle_retry_at: null,
  refund_reserved: 0n,
  amount_refunded: 0n,
} as const satisfies Omit<PaymentRow, keyof NewPaymentRow | "seq">;

export type NewPaymentRow = Omit<
  PaymentRow,
  | "seq"
  | "amount_settled"
  | "fee_settled"
  | "bridge_fee"
  | "settle_attempts"
  | "settle_retry_at"
  | "refund_reserved"
  | "amount_refunded"
>;

export interface ListFilter {
  accountId: string;
  limit: number;
  beforeSeq?: number;
  status?: PaymentStatus;
  createdGte?: number;
  createdLt?: number;
  paymentLink?: string;
}

export type PaymentStore = ReturnType<typeof createPaymentStore>;

const DAY_MS = 86_400_000;

/**
 * Payments holding funds owed to the merchant and not yet swept (less what bridging them cost):
 * funded and open, confirmed with a later top-up, or settling, overpaid or failed (a settlement
 * sent, or to send anew). One SELECT per case, so each is answered from its own (partial) index:
 * SQLite is told which (INDEXED BY); PostgreSQL has no such hint and picks them by itself.
 */
const unswept = (hint: (index: string) => string) =>
  raw(`
  SELECT * FROM payments${hint("payments_funded_open")}
   WHERE status IN ('pending', 'underpaid', 'expired') AND amount_received >= amount
  UNION ALL
  SELECT * FROM payments${hint("payments_unswept")}
   WHERE status = 'confirmed' AND amount_received > amount_settled + bridge_fee
  UNION ALL
  SELECT * FROM payments WHERE status IN ('settling', 'overpaid', 'failed')`);
const UNSWEPT_SQLITE = unswept((index) => ` INDEXED BY ${index}`);
const UNSWEPT_POSTGRES = unswept(() => "");
const BIGINTS = { bigints: true };

export function createPaymentStore(db: Db) {
  const statusCounts = createStatusCountStore(db);
  const UNSWEPT = sqlFor(db, UNSWEPT_SQLITE, UNSWEPT_POSTGRES);
  const insertStatement = isPostgres(db) ? conditionalInsert : plainInsert;
  // bigints: amounts can exceed 2^53 micro-USDC in the worst case; rows are then normalised.
  const findById = async (id: string) =>
    normalise(await db.get<PaymentRow>(sql`SELECT * FROM payments WHERE id = ${id}`, BIGINTS));

  return {
    /**
     * Inserts the payment and returns it as stored: what was inserted, its seq (the one value the
     * insert answers) and the columns' defaults (NEW_PAYMENT_DEFAULTS; test/payments/store.test.ts
     * checks the row against a read of it). Reading the whole row back cost every create about a
     * tenth of its insert.
     *
     * On PostgreSQL, with `keyVersion` (the version of keys and accounts the API key it was asked
     * for with was read at), the payment is stored only while that is still the version, in the
     * same statement: null when it is not (nothing stored). The create may have taken the key from
     * the cache (src/accounts/key-cache.ts); this makes a revocation or a new payout bite on the
     * very next create. SQLite's create checked the key's version in this process for this request, so
     * it inserts as it is: INSERT ... SELECT, which the condition needs, costs SQLite twice an
     * INSERT ... VALUES (measured on this schema, in batches of 50: 130 µs against 60).
     */
    async insert(row: NewPaymentRow, keyVersion?: number): Promise<PaymentRow | null> {
      const inserted = await db.get<{ seq: number }>(insertStatement(row, keyVersion ?? null));
      return inserted ? { ...row, ...NEW_PAYMENT_DEFAULTS, seq: Number(inserted.seq) } : null;
    },
    findForAccount: async (id: string, accountId: string) =>
      normalise(
        await db.get<PaymentRow>(sql`SELECT * FROM payments WHERE id = ${id} AND account_id = ${accountId}`, BIGINTS),
      ),
    /**
     * findForAccount for a decision its transaction then writes down (a refund's cap): on
     * PostgreSQL, whose transactions run side by side, the row stays locked until that transaction
     * ends, so a second one decides from what the first wrote. SQLite runs one at a time already.
     */
    findForAccountToUpdate: async (id: string, accountId: string) =>
      normalise(
        await db.get<PaymentRow>(
          sqlFor(
            db,
            sql`SELECT * FROM payments WHERE id = ${id} AND account_id = ${accountId}`,
            sql`SELECT * FROM payments WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`,
          ),
          BIGINTS,
        ),
      ),
    findById,
    /** Deposit addresses are stored checksummed, as viem's getAddress renders them. */
    findIdByDepositAddress: async (address: string) =>
      (await db.get<{ id: string }>(sql`SELECT id FROM payments WHERE deposit_address = ${address}`))?.id ?? null,
    /**
     * Newest first; asks for one row more than `limit` so the caller can tell has_more. The casts
     * give PostgreSQL the type of a filter that may be null, which `IS NULL` alone does not.
     */
    async list(filter: ListFilter): Promise<PaymentRow[]> {
      const beforeSeq = filter.beforeSeq ?? null;
      const status = filter.status ?? null;
      const createdGte = filter.createdGte ?? null;
      const createdLt = filter.createdLt ?? null;
      const link = filter.paymentLink ?? null;
      const rows = await db.all<PaymentRow>(
        sql`SELECT * FROM payments
             WHERE account_id = ${filter.accountId}
               AND (CAST(${beforeSeq} AS BIGINT) IS NULL OR seq < ${beforeSeq})
               AND (CAST(${status} AS TEXT) IS NULL OR status = ${status})
               AND (CAST(${createdGte} AS BIGINT) IS NULL OR created_at >= ${createdGte})
               AND (CAST(${createdLt} AS BIGINT) IS NULL OR created_at < ${createdLt})
               AND (CAST(${link} AS TEXT) IS NULL OR payment_link = ${link})
             ORDER BY seq DESC LIMIT ${filter.limit + 1}`,
        BIGINTS,
      );
      return rows.map((row) => normalise(row)!);
    },
    /** The newest `limit` payments made through one payment link of the account. */
    listForLink: async (linkId: string, accountId: string, limit: number): Promise<PaymentRow[]> =>
      (
        await db.all<PaymentRow>(
          sql`SELECT * FROM payments WHERE payment_link = ${linkId} AND account_id = ${accountId}
               ORDER BY seq DESC LIMIT ${limit}`,
          BIGINTS,
        )
      ).map((row) => normalise(row)!),
    /**
     * Which of `candidates` (lower-case addresses, as log topics hold them) are deposit addresses,
     * whichever replica issued them: looked up in their stored, checksummed form, through the
     * unique index every create writes anyway (migration 026).
     */
    async depositAddressesAmong(candidates: string[]): Promise<Set<string>> {
      const valid = candidates.filter((candidate) => /^0x[0-9a-f]{40}$/.test(candidate));
      if (valid.length === 0) return new Set();
      const rows = await db.all<{ address: string }>(
        sql`SELECT deposit_address AS address FROM payments
             WHERE deposit_address IN (${textsIn(db, valid.map(checksummed))})`,
      );
      return new Set(rows.map((row) => row.address.toLowerCase()));
    },
    addReceived: (id: string, amount: bigint, now: number) =>
      db.run(
        sql`UPDATE payments SET amount_received = coalesce(amount_received, 0) + ${amount}, updated_at = ${now}
             WHERE id = ${id}`,
      ),
    /** A credit a reorg took back; never below zero (only what was credited is taken back). */
    takeBackReceived: (id: string, amount: bigint, now: number) =>
      db.run(
        sql`UPDATE payments SET amount_received = amount_received - ${amount}, updated_at = ${now}
             WHERE id = ${id} AND amount_received >= ${amount}`,
      ),
    oldestCreatedAt: async () =>
      (await db.get<{ t: number | null }>(sql`SELECT min(created_at) AS t FROM payments`))?.t ?? null,
    /** Compare-and-set, so a status never moves from a state it is no longer in. */
    updateStatus: async (id: string, from: PaymentStatus, to: PaymentStatus, now: number) =>
      (await db.run(
        sql`UPDATE payments SET status = ${to}, updated_at = ${now} WHERE id = ${id} AND status = ${from}`,
      )) > 0,
    dueForExpiry: async (now: number, limit: number) =>
      (
        await db.all<{ id: string }>(
          sql`SELECT id FROM payments
               WHERE status = 'pending' AND expires_at <= ${now} AND amount_received IS NULL LIMIT ${limit}`,
        )
      ).map((r) => r.id),
    /**
     * The unswept payments with no settlement in flight; failed ones only once their retry is due;
     * none while a bridge is on its way, nor while the payment needs funds credited on a source
     * chain that no bridge carries yet (source dust it does not need, which is never bridged, holds
     * nothing up; a confirmed payment needs nothing). Late funds of a confirmed payment only from
     * the sweep floor up, and only while the payment had fewer than `perDay` settlements in the
     * last day: dust sent by a stranger to a finished payment must not spend the relayer's gas.
     * None paid straight to the payout address by an x402 settlement that is settling: its
     * transfer is its settlement, followed by the facilitator (src/x402/), with nothing to sweep.
     */
    async awaitingSettlement(now: number, lateFunds: { floor: bigint; perDay: number }): Promise<PaymentRow[]> {
      const rows = await db.all<PaymentRow>(
        sql`SELECT * FROM (${UNSWEPT}) p
             WHERE (settle_retry_at IS NULL OR settle_retry_at <= ${now})
               AND (status != 'confirmed'
                    OR (amount_received - amount_settled - bridge_fee >= ${lateFunds.floor}
                        AND (SELECT count(*) FROM settlements s
                              WHERE s.payment_id = p.id AND s.submitted_at > ${now - DAY_MS}) < ${lateFunds.perDay}))
               AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.payment_id = p.id AND s.state = 'submitted')
               AND NOT EXISTS (SELECT 1 FROM x402_settlements x WHERE x.payment_id = p.id AND x.state = 'settling')
               AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.payment_id = p.id
                                 AND b.state IN ('credited', 'burned', 'attested'))
               AND (status = 'confirmed'
                    OR amount_received - (SELECT coalesce(sum(t.amount), 0) FROM transfers t
                                           WHERE t.payment_id = p.id AND t.chain_id != p.chain_id
                                             AND t.credited_at IS NOT NULL AND t.bridge_id IS NULL) >= amount)
             ORDER BY seq LIMIT 100`,
        BIGINTS,
      );
      return rows.map((row) => normalise(row)!);
    },
    /** Payments with funds the settler has still to sweep: waiting, retrying or sent and not mined yet. */
    countUnswept: async () => (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM (${UNSWEPT}) u`))!.n,
    /** Payments of every account by status; a status no payment has is absent (src/payments/status-count-store.ts). */
    countByStatus: statusCounts.all,
    /**
     * A mined sweep of `amount` from the payment's deposit address: added to what was settled,
     * with its fee as the forwarder took it (splitFee) or, when given, as the settlement says it
     * paid (`paidFee`: zero where a version 3 address skipped the fee), and to the account's
     * total for the UTC day of `now`. Runs inside the caller's transaction. Returns what it counted.
     * Saturates at the 64-bit maximum: a sweep can carry funds the ledger refused as too large,
     * and "at least everything credited was swept" is all amount_settled has to tell.
     */
    async recordSettled(
      id: string,
      amount: bigint,
      now: number,
      paidFee?: bigint,
    ): Promise<{ amount: bigint; fee: bigint }> {
      const row = (await findById(id))!;
      const counted = amount > INT64_MAX ? INT64_MAX : amount;
      const { fee: due } = splitFee(counted, row.fee_bps);
      // Never more than the terms' fee on what is counted: the event is read from the chain.
      const fee = paidFee === undefined || paidFee > due ? due : paidFee;
      await db.run(
        sql`UPDATE payments SET amount_settled = ${saturatingAdd(raw("amount_settled"), counted)},
             fee_settled = ${saturatingAdd(raw("fee_settled"), fee)},
             settle_attempts = 0, settle_retry_at = NULL, updated_at = ${now} WHERE id = ${id}`,
      );
      // The home page's daily figures, in the same transaction as the sweep they count. The stored
      // columns are named with their table: PostgreSQL finds a bare `gross` ambiguous here.
      await db.run(
        sql`INSERT INTO settled_daily (account_id, day, gross, fee)
             VALUES (${row.account_id}, ${utcDay(now)}, ${counted}, ${fee})
             ON CONFLICT (account_id, day) DO UPDATE
               SET gross = ${saturatingAdd(raw("settled_daily.gross"), raw("excluded.gross"))},
                   fee = ${saturatingAdd(raw("settled_daily.fee"), raw("excluded.fee"))}`,
      );
      return { amount: counted, fee };
    },
    /**
     * Takes back a sweep `recordSettled` counted at `recordedAt` (a reorg took it off the chain):
     * from what was settled and from that day's total. Inside the caller's transaction.
     */
    async unrecordSettled(id: string, settled: { amount: bigint; fee: bigint }, recordedAt: number, now: number) {
      const row = (await findById(id))!;
      await db.run(
        sql`UPDATE payments SET amount_settled = amount_settled - ${settled.amount},
             fee_settled = fee_settled - ${settled.fee}, updated_at = ${now} WHERE id = ${id}`,
      );
      await db.run(
        sql`UPDATE settled_daily SET gross = gross - ${settled.amount}, fee = fee - ${settled.fee}
             WHERE account_id = ${row.account_id} AND day = ${utcDay(recordedAt)}`,
      );
    },
    /** A CCTP fee one of the payment's bridges paid (the merchant's cost); inside the caller's transaction. */
    addBridgeFee: (id: string, fee: bigint, now: number) =>
      db.run(sql`UPDATE payments SET bridge_fee = bridge_fee + ${fee}, updated_at = ${now} WHERE id = ${id}`),
    recordSettleFailure: (id: string, retryAt: number, now: number) =>
      db.run(
        sql`UPDATE payments SET settle_attempts = settle_attempts + 1, settle_retry_at = ${retryAt}, updated_at = ${now}
             WHERE id = ${id}`,
      ),
  };
}

/** Days since 1970-01-01, UTC: the day `ms` falls on. */
export const utcDay = (ms: number): number => Math.floor(ms / 86_400_000);

const INT64_MAX_SQL = raw(String(INT64_MAX));

/** `column + value`, held at the 64-bit maximum rather than overflowing. */
const saturatingAdd = (column: Sql, value: Sql | bigint) =>
  sql`CASE WHEN ${value} > ${INT64_MAX_SQL} - ${column} THEN ${INT64_MAX_SQL} ELSE ${column} + ${value} END`;

/** Everything but the amounts back to number (all well inside 2^53). */
export function normalise(row: PaymentRow | null): PaymentRow | null {
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
    settle_attempts: Number(row.settle_attempts),
    settle_retry_at: row.settle_retry_at === null ? null : Number(row.settle_retry_at),
    factory_version: Number(row.factory_version) as 1 | 2 | 3,
    settlement_domain: row.settlement_domain === null ? null : Number(row.settlement_domain),
    max_bridge_fee_bps: row.max_bridge_fee_bps === null ? null : Number(row.max_bridge_fee_bps),
  };
}
