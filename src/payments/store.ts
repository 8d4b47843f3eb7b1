import { type Db, sqlFor, textsIn } from "../db/engine.ts";
import { INT64_MAX } from "../db/int64.ts";
import { splitFee } from "../lib/money.ts";
import type { Speed } from "../lib/speed.ts";

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

const COLUMNS = [
  "id",
  "account_id",
  "status",
  "amount",
  "amount_received",
  "fee_bps",
  "fee_recipient",
  "payout_address",
  "chain_id",
  "token_address",
  "deposit_address",
  "description",
  "reference",
  "success_url",
  "customer_email",
  "customer_name",
  "invoice_number",
  "due_at",
  "metadata",
  "line_items",
  "payment_link",
  "factory_version",
  "settlement_domain",
  "token_messenger",
  "max_bridge_fee_bps",
  "fast_domains",
  "speed",
  "expires_at",
  "created_at",
  "updated_at",
] as const;

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
const unswept = (hint: (index: string) => string) => `
  SELECT * FROM payments${hint("payments_funded_open")}
   WHERE status IN ('pending', 'underpaid', 'expired') AND amount_received >= amount
  UNION ALL
  SELECT * FROM payments${hint("payments_unswept")}
   WHERE status = 'confirmed' AND amount_received > amount_settled + bridge_fee
  UNION ALL
  SELECT * FROM payments WHERE status IN ('settling', 'overpaid', 'failed')`;
const UNSWEPT_SQLITE = unswept((index) => ` INDEXED BY ${index}`);
const UNSWEPT_POSTGRES = unswept(() => "");

export function createPaymentStore(db: Db) {
  const UNSWEPT = sqlFor(db, UNSWEPT_SQLITE, UNSWEPT_POSTGRES);
  // The row as stored, read back by the insert itself: a create is one statement fewer.
  const insert = db
    .query<PaymentRow, [Record<string, string | number | bigint | null>]>(
      `INSERT INTO payments (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `$${c}`).join(", ")}) RETURNING *`,
    )
    .safeIntegers(true);
  // safeIntegers: amounts can exceed 2^53 micro-USDC in the worst case; rows are then normalised.
  const findForAccount = db
    .query<PaymentRow, [string, string]>("SELECT * FROM payments WHERE id = ? AND account_id = ?")
    .safeIntegers(true);
  const findById = db.query<PaymentRow, [string]>("SELECT * FROM payments WHERE id = ?").safeIntegers(true);
  const findIdByDeposit = db.query<{ id: string }, [string]>("SELECT id FROM payments WHERE deposit_address = ?");
  // The casts give PostgreSQL the type of a filter that may be null, which `IS NULL` alone does not.
  const list = db
    .query<PaymentRow, Record<string, string | number | null>>(
      `SELECT * FROM payments
        WHERE account_id = $account_id
          AND (CAST($before_seq AS BIGINT) IS NULL OR seq < $before_seq)
          AND (CAST($status AS TEXT) IS NULL OR status = $status)
          AND (CAST($created_gte AS BIGINT) IS NULL OR created_at >= $created_gte)
          AND (CAST($created_lt AS BIGINT) IS NULL OR created_at < $created_lt)
          AND (CAST($payment_link AS TEXT) IS NULL OR payment_link = $payment_link)
        ORDER BY seq DESC LIMIT $limit`,
    )
    .safeIntegers(true);
  const listForLink = db
    .query<PaymentRow, [string, string, number]>(
      `SELECT * FROM payments WHERE payment_link = ?1 AND account_id = ?2 ORDER BY seq DESC LIMIT ?3`,
    )
    .safeIntegers(true);
  // Answered from the index on lower(deposit_address): log topics hold addresses in lower case.
  const depositAddressesAmong = db.query<{ address: string }, [string]>(
    `SELECT lower(deposit_address) AS address FROM payments WHERE lower(deposit_address) IN (${textsIn(db, "?")})`,
  );
  const addReceived = db.query(
    "UPDATE payments SET amount_received = coalesce(amount_received, 0) + ?, updated_at = ? WHERE id = ?",
  );
  const takeBackReceived = db.query(
    "UPDATE payments SET amount_received = amount_received - ?, updated_at = ? WHERE id = ? AND amount_received >= ?",
  );
  const oldestCreatedAt = db.query<{ t: number | null }, []>("SELECT min(created_at) AS t FROM payments");
  const updateStatus = db.query("UPDATE payments SET status = ?, updated_at = ? WHERE id = ? AND status = ?");
  const dueForExpiry = db.query<{ id: string }, [number, number]>(
    "SELECT id FROM payments WHERE status = 'pending' AND expires_at <= ? AND amount_received IS NULL LIMIT ?",
  );
  // The unswept payments with no settlement in flight; failed ones only once their retry is due;
  // none while a bridge is on its way, nor while the payment needs funds credited on a source
  // chain that no bridge carries yet (source dust it does not need, which is never bridged, holds
  // nothing up; a confirmed payment needs nothing). Late funds of a confirmed payment only from
  // the sweep floor (?2) up, and only while the payment had fewer than ?4 settlements since ?3:
  // dust sent by a stranger to a finished payment must not spend the relayer's gas.
  const awaitingSettlement = db
    .query<PaymentRow, [number, bigint, number, number]>(
      `SELECT * FROM (${UNSWEPT}) p
       WHERE (settle_retry_at IS NULL OR settle_retry_at <= ?1)
         AND (status != 'confirmed'
              OR (amount_received - amount_settled - bridge_fee >= ?2
                  AND (SELECT count(*) FROM settlements s WHERE s.payment_id = p.id AND s.submitted_at > ?3) < ?4))
         AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.payment_id = p.id AND s.state = 'submitted')
         AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.payment_id = p.id
                           AND b.state IN ('credited', 'burned', 'attested'))
         AND (status = 'confirmed'
              OR amount_received - (SELECT coalesce(sum(t.amount), 0) FROM transfers t
                                     WHERE t.payment_id = p.id AND t.chain_id != p.chain_id
                                       AND t.credited_at IS NOT NULL AND t.bridge_id IS NULL) >= amount)
       ORDER BY seq LIMIT 100`,
    )
    .safeIntegers(true);
  const countUnswept = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM (${UNSWEPT})`);
  // The counts the triggers keep (009_payment_search.sql): a row per account and status is read,
  // never the payments themselves. The cast keeps the sum an integer on PostgreSQL (numeric there).
  const countByStatus = db.query<{ status: PaymentStatus; n: number }, []>(
    "SELECT status, CAST(sum(n) AS BIGINT) AS n FROM payment_status_counts GROUP BY status",
  );
  // Saturates at the 64-bit maximum: a sweep can carry funds the ledger refused as too large,
  // and "at least everything credited was swept" is all amount_settled has to tell.
  const recordSettled = db.query(
    `UPDATE payments SET amount_settled = ${saturatingAdd("amount_settled", "$amount")},
       fee_settled = ${saturatingAdd("fee_settled", "$fee")},
       settle_attempts = 0, settle_retry_at = NULL, updated_at = $now WHERE id = $id`,
  );
  // The home page's daily figures, kept in the same transaction as the sweep they count. The
  // stored columns are named with their table: PostgreSQL finds a bare `gross` ambiguous here.
  const addSettledDaily = db.query(
    `INSERT INTO settled_daily (account_id, day, gross, fee) VALUES ($account_id, $day, $amount, $fee)
     ON CONFLICT (account_id, day) DO UPDATE
       SET gross = ${saturatingAdd("settled_daily.gross", "excluded.gross")},
         fee = ${saturatingAdd("settled_daily.fee", "excluded.fee")}`,
  );
  const unrecordSettled = db.query(
    `UPDATE payments SET amount_settled = amount_settled - $amount, fee_settled = fee_settled - $fee, updated_at = $now
     WHERE id = $id`,
  );
  const takeBackSettledDaily = db.query(
    "UPDATE settled_daily SET gross = gross - $amount, fee = fee - $fee WHERE account_id = $account_id AND day = $day",
  );
  const addBridgeFee = db.query("UPDATE payments SET bridge_fee = bridge_fee + ?, updated_at = ? WHERE id = ?");
  const recordSettleFailure = db.query(
    "UPDATE payments SET settle_attempts = settle_attempts + 1, settle_retry_at = ?, updated_at = ? WHERE id = ?",
  );

  return {
    /** Inserts the payment and returns it as stored. */
    insert(row: NewPaymentRow): PaymentRow {
      return normalise(
        insert.get(
          Object.fromEntries(COLUMNS.map((c) => [c, row[c]])) as Record<string, string | number | bigint | null>,
        ),
      )!;
    },
    findForAccount: (id: string, accountId: string) => normalise(findForAccount.get(id, accountId)),
    findById: (id: string) => normalise(findById.get(id)),
    /** Deposit addresses are stored checksummed, as viem's getAddress renders them. */
    findIdByDepositAddress: (address: string) => findIdByDeposit.get(address)?.id ?? null,
    /** Newest first; asks for one row more than `limit` so the caller can tell has_more. */
    list(filter: ListFilter): PaymentRow[] {
      return list
        .all({
          account_id: filter.accountId,
          before_seq: filter.beforeSeq ?? null,
          status: filter.status ?? null,
          created_gte: filter.createdGte ?? null,
          created_lt: filter.createdLt ?? null,
          payment_link: filter.paymentLink ?? null,
          limit: filter.limit + 1,
        })
        .map((row) => normalise(row)!);
    },
    /** The newest `limit` payments made through one payment link of the account. */
    listForLink: (linkId: string, accountId: string, limit: number): PaymentRow[] =>
      listForLink.all(linkId, accountId, limit).map((row) => normalise(row)!),
    /** Streamed: a million addresses should not sit in memory twice while the watcher loads them. */
    /** Which of `candidates` (lower-case addresses) are deposit addresses, whichever replica issued them. */
    depositAddressesAmong: (candidates: string[]): Set<string> =>
      new Set(candidates.length ? depositAddressesAmong.all(JSON.stringify(candidates)).map((row) => row.address) : []),
    addReceived: (id: string, amount: bigint, now: number) => addReceived.run(amount, now, id),
    /** A credit a reorg took back; never below zero (only what was credited is taken back). */
    takeBackReceived: (id: string, amount: bigint, now: number) => takeBackReceived.run(amount, now, id, amount),
    oldestCreatedAt: () => oldestCreatedAt.get()?.t ?? null,
    /** Compare-and-set, so a status never moves from a state it is no longer in. */
    updateStatus: (id: string, from: PaymentStatus, to: PaymentStatus, now: number) =>
      updateStatus.run(to, now, id, from).changes > 0,
    dueForExpiry: (now: number, limit: number) => dueForExpiry.all(now, limit).map((r) => r.id),
    /** See the query: `lateFunds` bounds what a confirmed payment's late funds may cost the relayer. */
    awaitingSettlement: (now: number, lateFunds: { floor: bigint; perDay: number }) =>
      awaitingSettlement.all(now, lateFunds.floor, now - DAY_MS, lateFunds.perDay).map((row) => normalise(row)!),
    /** Payments with funds the settler has still to sweep: waiting, retrying or sent and not mined yet. */
    countUnswept: () => countUnswept.get()!.n,
    /** Payments of every account by status; a status no payment has is absent. */
    countByStatus: (): Map<PaymentStatus, number> => new Map(countByStatus.all().map((r) => [r.status, r.n])),
    /**
     * A mined sweep of `amount` from the payment's deposit address: added to what was settled,
     * with its fee as the forwarder took it (splitFee) or, when given, as the settlement says it
     * paid (`paidFee`: zero where a version 3 address skipped the fee), and to the account's
     * total for the UTC day of `now`. Runs inside the caller's transaction. Returns what it counted.
     */
    recordSettled(id: string, amount: bigint, now: number, paidFee?: bigint): { amount: bigint; fee: bigint } {
      const row = findById.get(id)!;
      const counted = amount > INT64_MAX ? INT64_MAX : amount;
      const { fee: due } = splitFee(counted, Number(row.fee_bps));
      // Never more than the terms' fee on what is counted: the event is read from the chain.
      const fee = paidFee === undefined || paidFee > due ? due : paidFee;
      recordSettled.run({ id, amount: counted, fee, now });
      addSettledDaily.run({ account_id: row.account_id, day: utcDay(now), amount: counted, fee });
      return { amount: counted, fee };
    },
    /**
     * Takes back a sweep `recordSettled` counted at `recordedAt` (a reorg took it off the chain):
     * from what was settled and from that day's total. Inside the caller's transaction.
     */
    unrecordSettled(id: string, settled: { amount: bigint; fee: bigint }, recordedAt: number, now: number): void {
      const row = findById.get(id)!;
      unrecordSettled.run({ id, amount: settled.amount, fee: settled.fee, now });
      takeBackSettledDaily.run({
        account_id: row.account_id,
        day: utcDay(recordedAt),
        amount: settled.amount,
        fee: settled.fee,
      });
    },
    /** A CCTP fee one of the payment's bridges paid (the merchant's cost); inside the caller's transaction. */
    addBridgeFee: (id: string, fee: bigint, now: number) => addBridgeFee.run(fee, now, id),
    recordSettleFailure: (id: string, retryAt: number, now: number) => recordSettleFailure.run(retryAt, now, id),
  };
}

/** Days since 1970-01-01, UTC: the day `ms` falls on. */
export const utcDay = (ms: number): number => Math.floor(ms / 86_400_000);

/** `column + value`, held at the 64-bit maximum rather than overflowing. */
const saturatingAdd = (column: string, value: string) =>
  `CASE WHEN ${value} > ${INT64_MAX} - ${column} THEN ${INT64_MAX} ELSE ${column} + ${value} END`;

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
