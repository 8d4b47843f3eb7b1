import { type Db, sqlFor } from "../../db/engine.ts";
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

/** SQL of bridging: the bridges table and the transfers each carries. */
export function createBridgeStore(db: Db) {
  const insert = db.query(
    `INSERT INTO bridges (id, payment_id, chain_id, state, next_attempt_at, created_at, updated_at)
     VALUES ($id, $payment_id, $chain_id, 'credited', $now, $now, $now)`,
  );
  const insertMinted = db.query(
    `INSERT INTO bridges (id, payment_id, chain_id, state, amount, fee, message_nonce, burn_tx_hash, burn_id,
       mint_tx_hash, mint_block_number, mint_log_index, next_attempt_at, created_at, updated_at)
     VALUES ($id, $payment_id, $chain_id, 'minted', $amount, $fee, $message_nonce, $burn_tx_hash, $burn_id,
       $mint_tx_hash, $mint_block_number, $mint_log_index, $now, $now, $now)`,
  );
  const link = db.query(
    `UPDATE transfers SET bridge_id = ?1
     WHERE payment_id = ?2 AND chain_id = ?3 AND credited_at IS NOT NULL AND bridge_id IS NULL`,
  );
  // Payments with credited source-chain funds no bridge carries yet, and no burn of theirs in flight
  // there, whose funds are worth a bridge: already burned by an earlier one (only linked then), or
  // needed to complete a payment that waits for funds (it has them all, but not without these), or
  // at least the chain's sweep floor (?2) and
  // then, for a finished payment, only while it had fewer than ?4 bridges there since ?3. A
  // stranger's dust to an old deposit address stays where it is, credited.
  // SQLite is told to use the partial index; PostgreSQL's planner takes no hints and picks it alone.
  const unbridgedSql = (hint: string) => `
    SELECT t.payment_id FROM transfers t${hint} JOIN payments p ON p.id = t.payment_id
     WHERE t.chain_id = ?1 AND t.bridge_id IS NULL AND t.credited_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.payment_id = t.payment_id AND b.chain_id = ?1
                         AND b.state = 'credited')
     GROUP BY t.payment_id, p.status, p.amount_received, p.amount
    HAVING (SELECT coalesce(sum(b.amount), 0) FROM bridges b WHERE b.payment_id = t.payment_id AND b.chain_id = ?1)
             >= (SELECT sum(c.amount) FROM transfers c
                  WHERE c.payment_id = t.payment_id AND c.chain_id = ?1 AND c.credited_at IS NOT NULL)
        OR (p.status IN ('pending', 'underpaid', 'expired') AND p.amount_received >= p.amount
            AND p.amount_received - sum(t.amount) < p.amount)
        OR (sum(t.amount) >= ?2
            AND (p.status != 'confirmed'
                 OR (SELECT count(*) FROM bridges b WHERE b.payment_id = t.payment_id AND b.chain_id = ?1
                       AND b.created_at > ?3) < ?4))
     LIMIT 100`;
  const unbridged = db.query<{ payment_id: string }, [number, bigint, number, number]>(
    sqlFor(db, unbridgedSql(" INDEXED BY transfers_unbridged"), unbridgedSql("")),
  );
  // PostgreSQL sums BIGINT as NUMERIC; the cast gives back the int64 SQLite's sum is (both fail past it).
  const credited = db
    .query<{ n: bigint | null }, [string, number]>(
      `SELECT CAST(sum(amount) AS BIGINT) AS n FROM transfers
       WHERE payment_id = ? AND chain_id = ? AND credited_at IS NOT NULL`,
    )
    .safeIntegers(true);
  const burned = db
    .query<{ n: bigint | null }, [string, number]>(
      `SELECT CAST(sum(amount) AS BIGINT) AS n FROM bridges
        WHERE payment_id = ? AND chain_id = ? AND amount IS NOT NULL`,
    )
    .safeIntegers(true);
  const latestBurned = db.query<{ id: string }, [string, number]>(
    `SELECT id FROM bridges WHERE payment_id = ? AND chain_id = ? AND amount IS NOT NULL
       ORDER BY created_at DESC, id DESC LIMIT 1`,
  );
  const due = db
    .query<BridgeRow, [number, number]>(
      sqlFor(
        db,
        `SELECT * FROM bridges INDEXED BY bridges_open
          WHERE chain_id = ? AND state = 'credited' AND next_attempt_at <= ?
         ORDER BY next_attempt_at LIMIT 50`,
        `SELECT * FROM bridges WHERE chain_id = ? AND state = 'credited' AND next_attempt_at <= ?
         ORDER BY next_attempt_at LIMIT 50`,
      ),
    )
    .safeIntegers(true);
  const lastError = db.query<{ error: string }, [number]>(
    `SELECT error FROM bridges WHERE chain_id = ? AND state = 'credited' AND error IS NOT NULL
     ORDER BY updated_at DESC LIMIT 1`,
  );
  const open = db.query<{ n: number }, [number]>(
    "SELECT count(*) AS n FROM bridges WHERE chain_id = ? AND state IN ('credited', 'burned', 'attested')",
  );
  // Burns the redeemer has an attested message for, while their bridge still says burned.
  const attested = db
    .query<BridgeRow & { message: string }, [number]>(
      `SELECT b.*, c.message AS message FROM bridges b JOIN crosschain_burns c ON c.id = b.burn_id
       WHERE b.chain_id = ? AND b.state = 'burned' AND c.message IS NOT NULL`,
    )
    .safeIntegers(true);
  const byMessage = db
    .query<BridgeRow, [string, string]>(
      `SELECT b.* FROM bridges b LEFT JOIN crosschain_burns c ON c.id = b.burn_id
       WHERE b.payment_id = ?1 AND (b.message_nonce = ?2 OR c.message_nonce = ?2) LIMIT 1`,
    )
    .safeIntegers(true);
  // A mint nobody told us the nonce of yet (the message attested, relayed by someone else): the
  // oldest open bridge of the payment on that chain, of that amount when it is known. A bridge
  // that sent nothing counts too: anyone may call bridge() for the address before it does.
  const oldestOpen = db
    .query<BridgeRow, [string, number, bigint]>(
      `SELECT * FROM bridges WHERE payment_id = ?1 AND chain_id = ?2 AND state IN ('credited', 'burned', 'attested')
         AND (amount IS NULL OR amount = ?3)
       ORDER BY created_at, id LIMIT 1`,
    )
    .safeIntegers(true);
  const byMint = db.query<{ id: string }, [string]>("SELECT id FROM bridges WHERE mint_tx_hash = ?");
  const firstCredit = db.query<{ n: number | null }, [string, number]>(
    `SELECT min(block_number) AS n FROM transfers
     WHERE payment_id = ? AND chain_id = ? AND credited_at IS NOT NULL`,
  );
  const forPayment = db
    .query<BridgeRow, [string]>("SELECT * FROM bridges WHERE payment_id = ? ORDER BY created_at, id")
    .safeIntegers(true);
  const byId = db.query<BridgeRow, [string]>("SELECT * FROM bridges WHERE id = ?").safeIntegers(true);
  const settle = db.query(
    `UPDATE bridges SET state = 'settled', updated_at = ?3
     WHERE payment_id = ?1 AND state = 'minted' AND mint_block_number <= ?2`,
  );
  const newestMint = db.query<{ block: number; log: number }, [string]>(
    `SELECT mint_block_number AS block, mint_log_index AS log FROM bridges
     WHERE payment_id = ? AND mint_block_number IS NOT NULL
     ORDER BY mint_block_number DESC, mint_log_index DESC LIMIT 1`,
  );
  const maxNonce = db.query<{ n: number | null }, [number]>("SELECT max(nonce) AS n FROM bridges WHERE chain_id = ?");
  const update = db.query(
    `UPDATE bridges SET state = $state, amount = $amount, max_fee = $max_fee, min_finality = $min_finality, fee = $fee,
       nonce = $nonce, raw_tx = $raw_tx, tx_hash = $tx_hash, tx_hashes = $tx_hashes, sent_at = $sent_at,
       block_number = $block_number, burn_tx_hash = $burn_tx_hash, burn_id = $burn_id, message_nonce = $message_nonce,
       mint_tx_hash = $mint_tx_hash, mint_block_number = $mint_block_number, mint_log_index = $mint_log_index,
       error = $error, attempts = $attempts, next_attempt_at = $next_attempt_at, updated_at = $now
     WHERE id = $id`,
  );
  const one = (row: BridgeRow | null) => (row ? normalise(row) : null);

  return {
    /** A new bridge for the payment's credited funds on `chainId`, carrying every transfer no bridge carries yet. */
    create(row: { id: string; payment_id: string; chain_id: number; now: number }): BridgeRow {
      insert.run(row);
      link.run(row.id, row.payment_id, row.chain_id);
      return one(byId.get(row.id))!;
    },
    /** A bridge that starts minted: a burn of the address made and relayed by someone else, found by its mint. */
    createMinted(row: {
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
    }): BridgeRow {
      insertMinted.run({ ...row, amount: int64(row.amount, "bridge amount"), fee: int64(row.fee, "bridge fee") });
      return one(byId.get(row.id))!;
    },
    /** Transfers credited after a burn that already took their funds: carried by that burn's bridge. */
    linkTransfers: (bridgeId: string, paymentId: string, chainId: number) => link.run(bridgeId, paymentId, chainId),
    /** Payments whose credited funds on `chainId` a bridge should take now (see the query). */
    unbridgedPayments: (chainId: number, now: number, lateFunds: { floor: bigint; perDay: number }) =>
      unbridged.all(chainId, lateFunds.floor, now - DAY_MS, lateFunds.perDay).map((r) => r.payment_id),
    /** What was credited on `chainId` for the payment, and what its bridges burned there. */
    totals(paymentId: string, chainId: number): { credited: bigint; burned: bigint } {
      return {
        credited: credited.get(paymentId, chainId)?.n ?? 0n,
        burned: burned.get(paymentId, chainId)?.n ?? 0n,
      };
    },
    latestBurned: (paymentId: string, chainId: number) => latestBurned.get(paymentId, chainId)?.id ?? null,
    due: (chainId: number, now: number) => due.all(chainId, now).map((r) => normalise(r)),
    countOpen: (chainId: number) => open.get(chainId)?.n ?? 0,
    /** Why the newest waiting bridge on `chainId` waits (no gas, a revert), if it does. */
    lastError: (chainId: number) => lastError.get(chainId)?.error ?? null,
    attestedBurns: (chainId: number) =>
      attested.all(chainId).map((r) => ({ bridge: normalise(r), message: r.message })),
    /** The bridge a mint of the payment's own burn belongs to, by the message's nonce, else the oldest open one. */
    forMint(paymentId: string, chainId: number | null, messageNonce: string, burned: bigint): BridgeRow | null {
      const exact = byMessage.get(paymentId, messageNonce);
      if (exact) return normalise(exact);
      return chainId === null ? null : one(oldestOpen.get(paymentId, chainId, burned));
    },
    isMintRecorded: (txHash: string) => byMint.get(txHash) !== null,
    /** The block of the payment's first credited transfer on `chainId`: no burn of its funds there is older. */
    firstCreditBlock: (paymentId: string, chainId: number) => numberOrNull(firstCredit.get(paymentId, chainId)?.n),
    forPayment: (paymentId: string) => forPayment.all(paymentId).map((r) => normalise(r)),
    find: (id: string) => one(byId.get(id)),
    /** The payment's minted bridges whose mint is at or before `block`: swept by a settlement mined there. */
    markSettled: (paymentId: string, block: number, now: number) => settle.run(paymentId, block, now).changes,
    /** Where the payment's newest mint is on the settlement chain, if any. */
    newestMint: (paymentId: string) => newestMint.get(paymentId) ?? null,
    /** The highest relayer nonce signed for a bridge on `chainId`, so no restart hands it out again. */
    maxNonce: (chainId: number) => maxNonce.get(chainId)?.n ?? null,
    save: (row: BridgeRow, now: number) =>
      update.run({
        id: row.id,
        state: row.state,
        amount: row.amount === null ? null : int64(row.amount, "bridge amount"),
        max_fee: row.max_fee === null ? null : int64(row.max_fee, "bridge max fee"),
        min_finality: row.min_finality,
        fee: row.fee === null ? null : int64(row.fee, "bridge fee"),
        nonce: row.nonce,
        raw_tx: row.raw_tx,
        tx_hash: row.tx_hash,
        tx_hashes: row.tx_hashes,
        sent_at: row.sent_at,
        block_number: row.block_number,
        burn_tx_hash: row.burn_tx_hash,
        burn_id: row.burn_id,
        message_nonce: row.message_nonce,
        mint_tx_hash: row.mint_tx_hash,
        mint_block_number: row.mint_block_number,
        mint_log_index: row.mint_log_index,
        error: row.error,
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at,
        now,
      }),
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
