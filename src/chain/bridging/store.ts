import { type Db, raw, sql, sqlFor } from "../../db/engine.ts";
import { int64 } from "../../db/int64.ts";

/**
 * credited: funds credited on a source chain, no burn mined yet (its bridge() may be signed
 * and sent); burned: bridge() mined with the source chain's confirmations; attested: Circle
 * signed the message; minted: the mint landed on the settlement chain; settled: the settlement
 * that swept it mined.
 */
export type BridgeState = "credited" | "burned" | "attested" | "minted" | "settled";

/** The states in which a payment's funds are still on their way to the settlement chain. */
export const OPEN_BRIDGE_STATES: readonly BridgeState[] = ["credited", "burned", "attested"];

export interface BridgeRow {
  id: string;
  payment_id: string;
  chain_id: number;
  state: BridgeState;
  amount: bigint | null;
  max_fee: bigint | null;
  min_finality: number | null;
  fee: bigint | null;
  nonce: number | null;
  raw_tx: string | null;
  tx_hash: string | null;
  tx_hashes: string | null;
  sent_at: number | null;
  block_number: number | null;
  burn_tx_hash: string | null;
  burn_id: string | null;
  message_nonce: string | null;
  mint_tx_hash: string | null;
  mint_block_number: number | null;
  mint_log_index: number | null;
  error: string | null;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  updated_at: number;
}

export type BridgeStore = ReturnType<typeof createBridgeStore>;

const DAY_MS = 86_400_000;
/** Amounts can pass 2^53: rows are read with bigints, then normalised. */
const BIGINTS = { bigints: true };
const one = (row: BridgeRow | null) => (row ? normalise(row) : null);

/**
 * Payments with credited source-chain funds no bridge carries yet, and no burn of theirs in flight
 * there, whose funds are worth a bridge: already burned by an earlier one (only linked then), or
 * needed to complete a payment that waits for funds (it has them all, but not without these), or
 * at least the chain's sweep floor and then, for a finished payment, only while it had fewer than
 * `perDay` bridges there in the last day. A stranger's dust to an old deposit address stays where
 * it is, credited. SQLite is told to use the partial index; PostgreSQL's planner takes no hints
 * and picks it alone.
 */
const unbridgedSql = (hint: string, chainId: number, floor: bigint, since: number, perDay: number) => sql`
    SELECT t.payment_id FROM transfers t${raw(hint)} JOIN payments p ON p.id = t.payment_id
     WHERE t.chain_id = ${chainId} AND t.bridge_id IS NULL AND t.credited_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.payment_id = t.payment_id AND b.chain_id = ${chainId}
                         AND b.state = 'credited')
     GROUP BY t.payment_id, p.status, p.amount_received, p.amount
    HAVING (SELECT coalesce(sum(b.amount), 0) FROM bridges b WHERE b.payment_id = t.payment_id
    AND b.chain_id = ${chainId})
             >= (SELECT sum(c.amount) FROM transfers c
                  WHERE c.payment_id = t.payment_id AND c.chain_id = ${chainId} AND c.credited_at IS NOT NULL)
        OR (p.status IN ('pending', 'underpaid', 'expired') AND p.amount_received >= p.amount
            AND p.amount_received - sum(t.amount) < p.amount)
        OR (sum(t.amount) >= ${floor}
            AND (p.status != 'confirmed'
                 OR (SELECT count(*) FROM bridges b WHERE b.payment_id = t.payment_id AND b.chain_id = ${chainId}
                       AND b.created_at > ${since}) < ${perDay}))
     LIMIT 100`;

/** SQL of bridging: the bridges table and the transfers each carries. */
export function createBridgeStore(db: Db) {
  const byId = async (id: string) => one(await db.get<BridgeRow>(sql`SELECT * FROM bridges WHERE id = ${id}`, BIGINTS));
  /**
   * For a row its transaction then writes over: on PostgreSQL, whose transactions run side by
   * side, it stays locked until that transaction ends, so the watcher recording a mint and the
   * bridger saving what it sent never both decide from the same state (one undoing the other).
   * SQLite runs one transaction at a time already.
   */
  const TO_UPDATE = sqlFor(db, sql``, sql` FOR UPDATE`);
  const link = (bridgeId: string, paymentId: string, chainId: number) =>
    db.run(
      sql`UPDATE transfers SET bridge_id = ${bridgeId}
          WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND credited_at IS NOT NULL AND bridge_id IS NULL`,
    );

  return {
    /** A new bridge for the payment's credited funds on `chainId`, carrying every transfer no bridge carries yet. */
    async create(row: { id: string; payment_id: string; chain_id: number; now: number }): Promise<BridgeRow> {
      await db.run(
        sql`INSERT INTO bridges (id, payment_id, chain_id, state, next_attempt_at, created_at, updated_at)
            VALUES (${row.id}, ${row.payment_id}, ${row.chain_id}, 'credited', ${row.now}, ${row.now}, ${row.now})`,
      );
      await link(row.id, row.payment_id, row.chain_id);
      return (await byId(row.id))!;
    },
    /** A bridge that starts minted: a burn of the address made and relayed by someone else, found by its mint. */
    async createMinted(row: {
      id: string;
      payment_id: string;
      chain_id: number;
      amount: bigint;
      fee: bigint;
      message_nonce: string;
      burn_tx_hash: string | null;
      burn_id: string | null;
      mint_tx_hash: string;
      mint_block_number: number;
      mint_log_index: number;
      now: number;
    }): Promise<BridgeRow> {
      const amount = int64(row.amount, "bridge amount");
      const fee = int64(row.fee, "bridge fee");
      await db.run(
        sql`INSERT INTO bridges (id, payment_id, chain_id, state, amount, fee, message_nonce, burn_tx_hash, burn_id,
              mint_tx_hash, mint_block_number, mint_log_index, next_attempt_at, created_at, updated_at)
            VALUES (${row.id}, ${row.payment_id}, ${row.chain_id}, 'minted', ${amount}, ${fee}, ${row.message_nonce},
              ${row.burn_tx_hash}, ${row.burn_id}, ${row.mint_tx_hash}, ${row.mint_block_number},
              ${row.mint_log_index}, ${row.now}, ${row.now}, ${row.now})`,
      );
      return (await byId(row.id))!;
    },
    /** Transfers credited after a burn that already took their funds: carried by that burn's bridge. */
    linkTransfers: link,
    /** Payments whose credited funds on `chainId` a bridge should take now (see unbridgedSql). */
    unbridgedPayments: async (chainId: number, now: number, lateFunds: { floor: bigint; perDay: number }) => {
      const since = now - DAY_MS;
      const query = (hint: string) => unbridgedSql(hint, chainId, lateFunds.floor, since, lateFunds.perDay);
      const rows = await db.all<{ payment_id: string }>(
        sqlFor(db, query(" INDEXED BY transfers_unbridged"), query("")),
      );
      return rows.map((r) => r.payment_id);
    },
    /**
     * What was credited on `chainId` for the payment, and what its bridges burned there.
     * PostgreSQL sums BIGINT as NUMERIC; the cast gives back the int64 SQLite's sum is (both fail past it).
     */
    async totals(paymentId: string, chainId: number): Promise<{ credited: bigint; burned: bigint }> {
      const credited = await db.get<{ n: bigint | null }>(
        sql`SELECT CAST(sum(amount) AS BIGINT) AS n FROM transfers
            WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND credited_at IS NOT NULL`,
        BIGINTS,
      );
      const burned = await db.get<{ n: bigint | null }>(
        sql`SELECT CAST(sum(amount) AS BIGINT) AS n FROM bridges
            WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND amount IS NOT NULL`,
        BIGINTS,
      );
      return { credited: credited?.n ?? 0n, burned: burned?.n ?? 0n };
    },
    latestBurned: async (paymentId: string, chainId: number) =>
      (
        await db.get<{ id: string }>(
          sql`SELECT id FROM bridges WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND amount IS NOT NULL
              ORDER BY created_at DESC, id DESC LIMIT 1`,
        )
      )?.id ?? null,
    due: async (chainId: number, now: number) =>
      (
        await db.all<BridgeRow>(
          sqlFor(
            db,
            sql`SELECT * FROM bridges INDEXED BY bridges_open
                 WHERE chain_id = ${chainId} AND state = 'credited' AND next_attempt_at <= ${now}
                ORDER BY next_attempt_at LIMIT 50`,
            sql`SELECT * FROM bridges WHERE chain_id = ${chainId} AND state = 'credited' AND next_attempt_at <= ${now}
                ORDER BY next_attempt_at LIMIT 50`,
          ),
          BIGINTS,
        )
      ).map((r) => normalise(r)),
    countOpen: async (chainId: number) =>
      (
        await db.get<{ n: number }>(
          sql`SELECT count(*) AS n FROM bridges WHERE chain_id = ${chainId}
              AND state IN ('credited', 'burned', 'attested')`,
        )
      )?.n ?? 0,
    /** Why the newest waiting bridge on `chainId` waits (no gas, a revert), if it does. */
    lastError: async (chainId: number) =>
      (
        await db.get<{ error: string }>(
          sql`SELECT error FROM bridges WHERE chain_id = ${chainId} AND state = 'credited' AND error IS NOT NULL
              ORDER BY updated_at DESC LIMIT 1`,
        )
      )?.error ?? null,
    /** Burns the redeemer has an attested message for, while their bridge still says burned. */
    attestedBurns: async (chainId: number) =>
      (
        await db.all<BridgeRow & { message: string }>(
          sql`SELECT b.*, c.message AS message FROM bridges b JOIN crosschain_burns c ON c.id = b.burn_id
              WHERE b.chain_id = ${chainId} AND b.state = 'burned' AND c.message IS NOT NULL`,
          BIGINTS,
        )
      ).map((r) => ({ bridge: normalise(r), message: r.message })),
    /**
     * The bridge a mint of the payment's own burn belongs to, by the message's nonce, else the
     * oldest open one. A mint nobody told us the nonce of yet (the message attested, relayed by
     * someone else) takes the oldest open bridge of the payment on that chain, of that amount when
     * it is known. A bridge that sent nothing counts too: anyone may call bridge() for the address
     * before it does. Locked until the caller's transaction ends, as `findToUpdate`'s row: the
     * caller records the mint on it.
     */
    async forMint(
      paymentId: string,
      chainId: number | null,
      messageNonce: string,
      burned: bigint,
    ): Promise<BridgeRow | null> {
      const exact = await db.get<BridgeRow>(
        sql`SELECT b.* FROM bridges b LEFT JOIN crosschain_burns c ON c.id = b.burn_id
            WHERE b.payment_id = ${paymentId}
            AND (b.message_nonce = ${messageNonce} OR c.message_nonce = ${messageNonce})
            LIMIT 1${sqlFor(db, sql``, sql` FOR UPDATE OF b`)}`,
        BIGINTS,
      );
      if (exact) return normalise(exact);
      if (chainId === null) return null;
      return one(
        await db.get<BridgeRow>(
          sql`SELECT * FROM bridges
              WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND state IN ('credited', 'burned', 'attested')
                AND (amount IS NULL OR amount = ${burned})
              ORDER BY created_at, id LIMIT 1${TO_UPDATE}`,
          BIGINTS,
        ),
      );
    },
    isMintRecorded: async (txHash: string) =>
      (await db.get<{ id: string }>(sql`SELECT id FROM bridges WHERE mint_tx_hash = ${txHash}`)) !== null,
    /** The block of the payment's first credited transfer on `chainId`: no burn of its funds there is older. */
    firstCreditBlock: async (paymentId: string, chainId: number) =>
      numberOrNull(
        (
          await db.get<{ n: number | null }>(
            sql`SELECT min(block_number) AS n FROM transfers
                WHERE payment_id = ${paymentId} AND chain_id = ${chainId} AND credited_at IS NOT NULL`,
          )
        )?.n,
      ),
    forPayment: async (paymentId: string) =>
      (
        await db.all<BridgeRow>(
          sql`SELECT * FROM bridges WHERE payment_id = ${paymentId} ORDER BY created_at, id`,
          BIGINTS,
        )
      ).map((r) => normalise(r)),
    find: byId,
    /** `find` for a decision its transaction then writes down (the bridge still credited, or still burned). */
    findToUpdate: async (id: string) =>
      one(await db.get<BridgeRow>(sql`SELECT * FROM bridges WHERE id = ${id}${TO_UPDATE}`, BIGINTS)),
    /** The payment's minted bridges whose mint is at or before `block`: swept by a settlement mined there. */
    markSettled: (paymentId: string, block: number, now: number) =>
      db.run(
        sql`UPDATE bridges SET state = 'settled', updated_at = ${now}
            WHERE payment_id = ${paymentId} AND state = 'minted' AND mint_block_number <= ${block}`,
      ),
    /** Where the payment's newest mint is on the settlement chain, if any. */
    newestMint: (paymentId: string) =>
      db.get<{ block: number; log: number }>(
        sql`SELECT mint_block_number AS block, mint_log_index AS log FROM bridges
            WHERE payment_id = ${paymentId} AND mint_block_number IS NOT NULL
            ORDER BY mint_block_number DESC, mint_log_index DESC LIMIT 1`,
      ),
    /** The highest relayer nonce signed for a bridge on `chainId`, so no restart hands it out again. */
    maxNonce: async (chainId: number) =>
      (await db.get<{ n: number | null }>(sql`SELECT max(nonce) AS n FROM bridges WHERE chain_id = ${chainId}`))?.n ??
      null,
    async save(row: BridgeRow, now: number): Promise<number> {
      const amount = row.amount === null ? null : int64(row.amount, "bridge amount");
      const maxFee = row.max_fee === null ? null : int64(row.max_fee, "bridge max fee");
      const fee = row.fee === null ? null : int64(row.fee, "bridge fee");
      return db.run(
        sql`UPDATE bridges SET state = ${row.state}, amount = ${amount}, max_fee = ${maxFee},
              min_finality = ${row.min_finality}, fee = ${fee}, nonce = ${row.nonce}, raw_tx = ${row.raw_tx},
              tx_hash = ${row.tx_hash}, tx_hashes = ${row.tx_hashes}, sent_at = ${row.sent_at},
              block_number = ${row.block_number}, burn_tx_hash = ${row.burn_tx_hash}, burn_id = ${row.burn_id},
              message_nonce = ${row.message_nonce}, mint_tx_hash = ${row.mint_tx_hash},
              mint_block_number = ${row.mint_block_number}, mint_log_index = ${row.mint_log_index},
              error = ${row.error}, attempts = ${row.attempts}, next_attempt_at = ${row.next_attempt_at},
              updated_at = ${now}
            WHERE id = ${row.id}`,
      );
    },
  };
}

const numberOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function normalise(row: BridgeRow): BridgeRow {
  return {
    ...row,
    chain_id: Number(row.chain_id),
    min_finality: numberOrNull(row.min_finality),
    nonce: numberOrNull(row.nonce),
    sent_at: numberOrNull(row.sent_at),
    block_number: numberOrNull(row.block_number),
    mint_block_number: numberOrNull(row.mint_block_number),
    mint_log_index: numberOrNull(row.mint_log_index),
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}
