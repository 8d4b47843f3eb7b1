import { type Db, type Sql, sql } from "../db/engine.ts";
import { fitsInt64, int64 } from "../db/int64.ts";
import type { Speed } from "../lib/speed.ts";

export interface TransferRow {
  /** The chain it was made on (the settlement chain, or a source chain for a version 2 address). */
  chain_id: number;
  tx_hash: string;
  log_index: number;
  payment_id: string;
  from_address: string;
  amount: bigint;
  block_number: number;
  block_hash: string;
  credited_at: number | null;
  created_at: number;
  /** The bridge carrying a credited source-chain transfer to the settlement chain (src/chain/bridging/). */
  bridge_id?: string | null;
}

export interface SettlementRow {
  id: number;
  payment_id: string;
  nonce: number;
  /** `reorged`: mined, then a reorg took the block it was in (src/chain/settling/young-settlements.ts). */
  state: "submitted" | "mined" | "reverted" | "dropped" | "reorged";
  tx_hash: string;
  tx_hashes: string;
  raw_tx: string;
  max_fee: string;
  priority_fee: string;
  amount: bigint | null; // null until mined, or when too large to store (see finishSettlement)
  /** The platform fee its Settled event paid; null until mined. */
  fee: bigint | null;
  block_number: number | null;
  submitted_at: number;
  updated_at: number;
}

/** A transfer that a reorg took off the chain, kept for the payment's record. */
export type ReversedTransferRow = Omit<TransferRow, "bridge_id"> & {
  /** `credited_at` is null when it was only seen, never credited. */
  reversed_at: number;
};

/** A transfer still waiting for its payment's speed policy to count it, with that policy. */
export type WaitingTransfer = TransferRow & { speed: Speed };

export type ChainStore = ReturnType<typeof createChainStore>;

/** Amounts can pass 2^53 micro-USDC: rows are read with bigints, then normalised. */
const BIGINTS = { bigints: true };

/** SQL of the on-chain side: transfers, the watcher cursor and settlement transactions. */
/** A payment's transfers in block order, then those a reorg took back, in the order they were reversed. */
export interface PaymentRecord {
  transfers: TransferRow[];
  reversed: ReversedTransferRow[];
}

/** One row of `recordRows`: a transfer (`reversed_id` null) or a reversed one. */
export type RecordRow = TransferRow & { reversed_id: bigint | null; reversed_at: bigint | null };

/**
 * The rows of a payment's record, its transfers and its reversed transfers in one shape, for
 * `recordFrom` to split and order: `paymentId` is the id (a parameter), or a column of an outer
 * statement that joins them (src/payments/retrieve-store.ts).
 */
export const recordRows = (paymentId: string | Sql): Sql =>
  sql`SELECT NULL AS reversed_id, chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number,
             block_hash, credited_at, created_at, bridge_id, NULL AS reversed_at
        FROM transfers WHERE payment_id = ${paymentId}
      UNION ALL
      SELECT id, chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number,
             block_hash, credited_at, created_at, NULL, reversed_at
        FROM reversed_transfers WHERE payment_id = ${paymentId}`;

/**
 * `recordRows` (read with bigints) split and ordered in code: SQLite answers the bare lookups about
 * three times faster than ordered ones.
 */
export function recordFrom(rows: readonly RecordRow[]): PaymentRecord {
  const transfers: TransferRow[] = [];
  const reversed: Array<ReversedTransferRow & { id: bigint }> = [];
  for (const { reversed_id, reversed_at, bridge_id, ...row } of rows) {
    if (reversed_id === null) transfers.push(normaliseTransfer({ ...row, bridge_id })!);
    else reversed.push({ ...normaliseTransfer(row)!, id: reversed_id, reversed_at: Number(reversed_at) });
  }
  transfers.sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index);
  reversed.sort((a, b) => (a.id < b.id ? -1 : 1));
  return { transfers, reversed: reversed.map(({ id: _, ...r }) => r) };
}

export function createChainStore(db: Db) {
  return {
    findTransfer: async (txHash: string, logIndex: number) =>
      normaliseTransfer(
        await db.get<TransferRow>(
          sql`SELECT * FROM transfers WHERE tx_hash = ${txHash} AND log_index = ${logIndex}`,
          BIGINTS,
        ),
      ),
    /**
     * Records a transfer unless it is recorded already; whether this call recorded it. Two
     * recorders at once (the watcher and a payer's /sync, on any replica) cannot both insert it:
     * the second waits for the first to commit and finds it there.
     */
    async insertTransfer(row: TransferRow): Promise<boolean> {
      const amount = int64(row.amount, "transfer amount");
      const inserted = await db.run(
        sql`INSERT INTO transfers
              (chain_id, tx_hash, log_index, payment_id, from_address, amount,
               block_number, block_hash, credited_at, created_at)
            VALUES
              (${row.chain_id}, ${row.tx_hash}, ${row.log_index}, ${row.payment_id}, ${row.from_address}, ${amount},
               ${row.block_number}, ${row.block_hash}, ${row.credited_at}, ${row.created_at})
            ON CONFLICT (tx_hash, log_index) DO NOTHING`,
      );
      return inserted > 0;
    },
    markCredited: async (txHash: string, logIndex: number, blockNumber: number, blockHash: string, now: number) =>
      (await db.run(
        sql`UPDATE transfers SET credited_at = ${now}, block_number = ${blockNumber}, block_hash = ${blockHash}
            WHERE tx_hash = ${txHash} AND log_index = ${logIndex} AND credited_at IS NULL`,
      )) > 0,
    /**
     * In chain order. A payment has a handful at most, so they are ordered here: every payment
     * read (each retrieve of one) asks, and SQLite answers the bare lookup about three times faster.
     */
    transfersForPayment: async (paymentId: string) =>
      (await db.all<TransferRow>(sql`SELECT * FROM transfers WHERE payment_id = ${paymentId}`, BIGINTS))
        .map((r) => normaliseTransfer(r)!)
        .sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index),
    /** What was recorded on `chainId` in blocks `from` to `to`: what a scan of that range must find again. */
    transfersBetween: async (chainId: number, from: number, to: number) =>
      (
        await db.all<TransferRow>(
          sql`SELECT * FROM transfers WHERE chain_id = ${chainId} AND block_number BETWEEN ${from} AND ${to}
              ORDER BY block_number, log_index`,
          BIGINTS,
        )
      ).map((r) => normaliseTransfer(r)!),
    /** Transfers on `chainId` up to `upToBlock` not credited yet, each with its payment's speed policy. */
    waitingOn: async (chainId: number, upToBlock: number): Promise<WaitingTransfer[]> =>
      (
        await db.all<WaitingTransfer>(
          sql`SELECT t.*, p.speed FROM transfers t JOIN payments p ON p.id = t.payment_id
              WHERE t.chain_id = ${chainId} AND t.credited_at IS NULL AND t.block_number <= ${upToBlock}
              ORDER BY t.block_number, t.log_index LIMIT 500`,
          BIGINTS,
        )
      ).map((r) => ({ ...normaliseTransfer(r)!, speed: r.speed })),
    /** The same transfer found again in another block (a reorg put its transaction in a new one). */
    moveTransfer: (txHash: string, logIndex: number, blockNumber: number, blockHash: string) =>
      db.run(
        sql`UPDATE transfers SET block_number = ${blockNumber}, block_hash = ${blockHash}
            WHERE tx_hash = ${txHash} AND log_index = ${logIndex}`,
      ),
    /** Takes a transfer that left the chain out of `transfers`, keeping it in `reversed_transfers`. */
    async reverseTransfer(txHash: string, logIndex: number, now: number): Promise<void> {
      await db.run(
        sql`INSERT INTO reversed_transfers
              (chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at,
               created_at, reversed_at)
            SELECT chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash,
            credited_at,
                   created_at, ${now}
            FROM transfers WHERE tx_hash = ${txHash} AND log_index = ${logIndex}`,
      );
      await db.run(sql`DELETE FROM transfers WHERE tx_hash = ${txHash} AND log_index = ${logIndex}`);
    },
    /**
     * A payment's transfers and those a reorg took back, in one statement (every read of a payment
     * asks for both: on PostgreSQL, one round trip rather than two); each in the order of its method.
     */
    recordOf: async (paymentId: string): Promise<PaymentRecord> =>
      // The id as the value itself, not a nested template: a statement of plain values is a text joined once.
      recordFrom(await db.all<RecordRow>(recordRows(paymentId), BIGINTS)),
    /** In the order they were reversed (ordered here, as `transfersForPayment` is). */
    reversedForPayment: async (paymentId: string): Promise<ReversedTransferRow[]> =>
      (
        await db.all<ReversedTransferRow & { id: bigint }>(
          sql`SELECT id, chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash,
                     credited_at, created_at, reversed_at
              FROM reversed_transfers WHERE payment_id = ${paymentId}`,
          BIGINTS,
        )
      )
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map(({ id: _, ...r }) => ({
          ...r,
          chain_id: Number(r.chain_id),
          log_index: Number(r.log_index),
          amount: BigInt(r.amount),
          block_number: Number(r.block_number),
          credited_at: r.credited_at === null ? null : Number(r.credited_at),
          created_at: Number(r.created_at),
          reversed_at: Number(r.reversed_at),
        })),

    cursor: (chainId: number) =>
      db.get<{ block_number: number; block_hash: string }>(
        sql`SELECT block_number, block_hash FROM chain_cursor WHERE chain_id = ${chainId}`,
      ),
    setCursor: (chainId: number, blockNumber: number, blockHash: string, now: number) =>
      db.run(
        sql`INSERT INTO chain_cursor (chain_id, block_number, block_hash, updated_at)
            VALUES (${chainId}, ${blockNumber}, ${blockHash}, ${now})
            ON CONFLICT (chain_id) DO UPDATE
              SET block_number = excluded.block_number, block_hash = excluded.block_hash,
                  updated_at = excluded.updated_at`,
      ),

    insertSettlement: async (row: {
      payment_id: string;
      nonce: number;
      tx_hash: string;
      raw_tx: string;
      max_fee: string;
      priority_fee: string;
      now: number;
    }): Promise<number> =>
      (await db.get<{ id: number }>(
        sql`INSERT INTO settlements
              (payment_id, nonce, state, tx_hash, tx_hashes, raw_tx, max_fee, priority_fee, submitted_at, updated_at)
            VALUES (${row.payment_id}, ${row.nonce}, 'submitted', ${row.tx_hash}, ${JSON.stringify([row.tx_hash])},
              ${row.raw_tx}, ${row.max_fee}, ${row.priority_fee}, ${row.now}, ${row.now})
            RETURNING id`,
      ))!.id,
    openSettlements: async () =>
      (
        await db.all<SettlementRow>(sql`SELECT * FROM settlements WHERE state = 'submitted' ORDER BY nonce`, BIGINTS)
      ).map(normaliseSettlement),
    replaceSettlement: (row: {
      id: number;
      tx_hash: string;
      tx_hashes: string[];
      raw_tx: string;
      max_fee: string;
      priority_fee: string;
      now: number;
    }) =>
      db.run(
        sql`UPDATE settlements
            SET tx_hash = ${row.tx_hash}, tx_hashes = ${JSON.stringify(row.tx_hashes)}, raw_tx = ${row.raw_tx},
                max_fee = ${row.max_fee}, priority_fee = ${row.priority_fee}, submitted_at = ${row.now},
                updated_at = ${row.now}
            WHERE id = ${row.id}`,
      ),
    /**
     * `amount` is the Settled log's. A sweep passes 2^63 units only by carrying funds the ledger
     * refused as too large; that amount is then left unrecorded (null), never wrapped negative.
     */
    finishSettlement: (
      id: number,
      state: SettlementRow["state"],
      settled: { amount: bigint; fee: bigint } | null,
      blockNumber: number | null,
      txHash: string,
      now: number,
    ) => {
      const amount = settled !== null && fitsInt64(settled.amount) ? settled.amount : null;
      const fee = settled !== null && fitsInt64(settled.fee) ? settled.fee : null;
      return db.run(
        sql`UPDATE settlements SET state = ${state}, amount = ${amount}, fee = ${fee}, block_number = ${blockNumber},
              tx_hash = ${txHash}, updated_at = ${now}
            WHERE id = ${id}`,
      );
    },
    /** Mined settlements in blocks above `aboveBlock`: young enough that a reorg may still take them. */
    youngSettlements: async (aboveBlock: number) =>
      (
        await db.all<SettlementRow>(
          sql`SELECT * FROM settlements WHERE state = 'mined' AND block_number > ${aboveBlock}
              ORDER BY block_number, id`,
          BIGINTS,
        )
      ).map(normaliseSettlement),
    hasYoungSettlement: async (aboveBlock: number) =>
      (await db.get(
        sql`SELECT 1 AS one FROM settlements WHERE state = 'mined' AND block_number > ${aboveBlock} LIMIT 1`,
      )) !== null,
    /** A mined settlement's transaction found again in another block. */
    settlementMovedTo: (id: number, blockNumber: number, now: number) =>
      db.run(sql`UPDATE settlements SET block_number = ${blockNumber}, updated_at = ${now} WHERE id = ${id}`),
    /** A mined settlement whose block a reorg took; whether it was still recorded as mined. */
    settlementReorged: async (id: number, now: number) =>
      (await db.run(
        sql`UPDATE settlements SET state = 'reorged', updated_at = ${now} WHERE id = ${id} AND state = 'mined'`,
      )) > 0,
    /** A payment's settlement transactions, oldest first. */
    settlementsForPayment: async (paymentId: string) =>
      (
        await db.all<SettlementRow>(sql`SELECT * FROM settlements WHERE payment_id = ${paymentId} ORDER BY id`, BIGINTS)
      ).map(normaliseSettlement),
    /** A reorged settlement's transaction left the chain with its block: its nonce is free again. */
    maxNonce: async () =>
      (
        await db.get<{ n: number | null }>(
          sql`SELECT max(nonce) AS n FROM settlements WHERE state NOT IN ('dropped', 'reorged')`,
        )
      )?.n ?? null,
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}

function normaliseTransfer(row: TransferRow | null): TransferRow | null {
  if (!row) return null;
  return {
    ...row,
    chain_id: Number(row.chain_id),
    log_index: Number(row.log_index),
    block_number: Number(row.block_number),
    credited_at: row.credited_at === null ? null : Number(row.credited_at),
    created_at: Number(row.created_at),
  };
}

function normaliseSettlement(row: SettlementRow): SettlementRow {
  return {
    ...row,
    id: Number(row.id),
    nonce: Number(row.nonce),
    block_number: row.block_number === null ? null : Number(row.block_number),
    submitted_at: Number(row.submitted_at),
    updated_at: Number(row.updated_at),
  };
}
