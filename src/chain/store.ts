import type { Db } from "../db/index.ts";
import { fitsInt64, int64 } from "../db/int64.ts";
import { inTransaction } from "../db/transaction.ts";
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

/** SQL of the on-chain side: transfers, the watcher cursor and settlement transactions. */
export function createChainStore(db: Db) {
  const findTransfer = db
    .query<TransferRow, [string, number]>("SELECT * FROM transfers WHERE tx_hash = ? AND log_index = ?")
    .safeIntegers(true);
  const insertTransfer = db.query(
    `INSERT INTO transfers
       (chain_id, tx_hash, log_index, payment_id, from_address, amount,
        block_number, block_hash, credited_at, created_at)
     VALUES
       ($chain_id, $tx_hash, $log_index, $payment_id, $from_address, $amount,
        $block_number, $block_hash, $credited_at, $created_at)`,
  );
  const markCredited = db.query(
    `UPDATE transfers SET credited_at = ?, block_number = ?, block_hash = ?
     WHERE tx_hash = ? AND log_index = ? AND credited_at IS NULL`,
  );
  const transfersForPayment = db
    .query<TransferRow, [string]>("SELECT * FROM transfers WHERE payment_id = ? ORDER BY block_number, log_index")
    .safeIntegers(true);
  const transfersBetween = db
    .query<TransferRow, [number, number, number]>(
      "SELECT * FROM transfers WHERE chain_id = ? AND block_number BETWEEN ? AND ? ORDER BY block_number, log_index",
    )
    .safeIntegers(true);
  const waitingOn = db
    .query<WaitingTransfer, [number, number]>(
      `SELECT t.*, p.speed FROM transfers t JOIN payments p ON p.id = t.payment_id
       WHERE t.chain_id = ? AND t.credited_at IS NULL AND t.block_number <= ?
       ORDER BY t.block_number, t.log_index LIMIT 500`,
    )
    .safeIntegers(true);
  const moveTransfer = db.query(
    "UPDATE transfers SET block_number = ?, block_hash = ? WHERE tx_hash = ? AND log_index = ?",
  );
  const insertReversed = db.query(
    `INSERT INTO reversed_transfers
       (chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at,
        created_at, reversed_at)
     SELECT chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at,
            created_at, ?
     FROM transfers WHERE tx_hash = ? AND log_index = ?`,
  );
  const deleteTransfer = db.query("DELETE FROM transfers WHERE tx_hash = ? AND log_index = ?");
  const reversedForPayment = db
    .query<ReversedTransferRow, [string]>(
      `SELECT chain_id, tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at,
              created_at, reversed_at
       FROM reversed_transfers WHERE payment_id = ? ORDER BY id`,
    )
    .safeIntegers(true);

  const getCursor = db.query<{ block_number: number; block_hash: string }, [number]>(
    "SELECT block_number, block_hash FROM chain_cursor WHERE chain_id = ?",
  );
  const setCursor = db.query(
    `INSERT INTO chain_cursor (chain_id, block_number, block_hash, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (chain_id) DO UPDATE
       SET block_number = excluded.block_number, block_hash = excluded.block_hash, updated_at = excluded.updated_at`,
  );

  const insertSettlement = db.query<{ id: number }, Record<string, string | number>>(
    `INSERT INTO settlements
       (payment_id, nonce, state, tx_hash, tx_hashes, raw_tx, max_fee, priority_fee, submitted_at, updated_at)
     VALUES ($payment_id, $nonce, 'submitted', $tx_hash, $tx_hashes, $raw_tx, $max_fee, $priority_fee, $now, $now)
     RETURNING id`,
  );
  const openSettlements = db
    .query<SettlementRow, []>("SELECT * FROM settlements WHERE state = 'submitted' ORDER BY nonce")
    .safeIntegers(true);
  const replaceSettlement = db.query(
    `UPDATE settlements
     SET tx_hash = $tx_hash, tx_hashes = $tx_hashes, raw_tx = $raw_tx, max_fee = $max_fee, priority_fee = $priority_fee,
         submitted_at = $now, updated_at = $now
     WHERE id = $id`,
  );
  const finishSettlement = db.query(
    "UPDATE settlements SET state = ?, amount = ?, fee = ?, block_number = ?, tx_hash = ?, updated_at = ? WHERE id = ?",
  );
  const youngSettlements = db
    .query<SettlementRow, [number]>(
      "SELECT * FROM settlements WHERE state = 'mined' AND block_number > ? ORDER BY block_number, id",
    )
    .safeIntegers(true);
  const hasYoungSettlement = db.query<{ one: number }, [number]>(
    "SELECT 1 AS one FROM settlements WHERE state = 'mined' AND block_number > ? LIMIT 1",
  );
  const settlementMovedTo = db.query("UPDATE settlements SET block_number = ?, updated_at = ? WHERE id = ?");
  const settlementReorged = db.query(
    "UPDATE settlements SET state = 'reorged', updated_at = ? WHERE id = ? AND state = 'mined'",
  );
  const settlementsForPayment = db
    .query<SettlementRow, [string]>("SELECT * FROM settlements WHERE payment_id = ? ORDER BY id")
    .safeIntegers(true);
  const maxNonce = db.query<{ n: number | null }, []>(
    // A reorged settlement's transaction left the chain with its block: its nonce is free again.
    "SELECT max(nonce) AS n FROM settlements WHERE state NOT IN ('dropped', 'reorged')",
  );

  return {
    findTransfer: (txHash: string, logIndex: number) => normaliseTransfer(findTransfer.get(txHash, logIndex)),
    insertTransfer: (row: TransferRow) => insertTransfer.run({ ...row, amount: int64(row.amount, "transfer amount") }),
    markCredited: (txHash: string, logIndex: number, blockNumber: number, blockHash: string, now: number) =>
      markCredited.run(now, blockNumber, blockHash, txHash, logIndex).changes > 0,
    transfersForPayment: (paymentId: string) => transfersForPayment.all(paymentId).map((r) => normaliseTransfer(r)!),
    /** What was recorded on `chainId` in blocks `from` to `to`: what a scan of that range must find again. */
    transfersBetween: (chainId: number, from: number, to: number) =>
      transfersBetween.all(chainId, from, to).map((r) => normaliseTransfer(r)!),
    /** Transfers on `chainId` up to `upToBlock` not credited yet, each with its payment's speed policy. */
    waitingOn: (chainId: number, upToBlock: number): WaitingTransfer[] =>
      waitingOn.all(chainId, upToBlock).map((r) => ({ ...normaliseTransfer(r)!, speed: r.speed })),
    /** The same transfer found again in another block (a reorg put its transaction in a new one). */
    moveTransfer: (txHash: string, logIndex: number, blockNumber: number, blockHash: string) =>
      moveTransfer.run(blockNumber, blockHash, txHash, logIndex),
    /** Takes a transfer that left the chain out of `transfers`, keeping it in `reversed_transfers`. */
    reverseTransfer(txHash: string, logIndex: number, now: number): void {
      insertReversed.run(now, txHash, logIndex);
      deleteTransfer.run(txHash, logIndex);
    },
    reversedForPayment: (paymentId: string): ReversedTransferRow[] =>
      reversedForPayment.all(paymentId).map((r) => ({
        ...r,
        chain_id: Number(r.chain_id),
        log_index: Number(r.log_index),
        amount: BigInt(r.amount),
        block_number: Number(r.block_number),
        credited_at: r.credited_at === null ? null : Number(r.credited_at),
        created_at: Number(r.created_at),
        reversed_at: Number(r.reversed_at),
      })),

    cursor: (chainId: number) => getCursor.get(chainId),
    setCursor: (chainId: number, blockNumber: number, blockHash: string, now: number) =>
      setCursor.run(chainId, blockNumber, blockHash, now),

    insertSettlement: (row: {
      payment_id: string;
      nonce: number;
      tx_hash: string;
      raw_tx: string;
      max_fee: string;
      priority_fee: string;
      now: number;
    }) => insertSettlement.get({ ...row, tx_hashes: JSON.stringify([row.tx_hash]) })!.id,
    openSettlements: () => openSettlements.all().map(normaliseSettlement),
    replaceSettlement: (row: {
      id: number;
      tx_hash: string;
      tx_hashes: string[];
      raw_tx: string;
      max_fee: string;
      priority_fee: string;
      now: number;
    }) => replaceSettlement.run({ ...row, tx_hashes: JSON.stringify(row.tx_hashes) }),
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
    ) =>
      finishSettlement.run(
        state,
        settled !== null && fitsInt64(settled.amount) ? settled.amount : null,
        settled !== null && fitsInt64(settled.fee) ? settled.fee : null,
        blockNumber,
        txHash,
        now,
        id,
      ),
    /** Mined settlements in blocks above `aboveBlock`: young enough that a reorg may still take them. */
    youngSettlements: (aboveBlock: number) => youngSettlements.all(aboveBlock).map(normaliseSettlement),
    hasYoungSettlement: (aboveBlock: number) => hasYoungSettlement.get(aboveBlock) !== null,
    /** A mined settlement's transaction found again in another block. */
    settlementMovedTo: (id: number, blockNumber: number, now: number) => settlementMovedTo.run(blockNumber, now, id),
    /** A mined settlement whose block a reorg took; whether it was still recorded as mined. */
    settlementReorged: (id: number, now: number) => settlementReorged.run(now, id).changes > 0,
    /** A payment's settlement transactions, oldest first. */
    settlementsForPayment: (paymentId: string) => settlementsForPayment.all(paymentId).map(normaliseSettlement),
    maxNonce: () => maxNonce.get()?.n ?? null,
    transaction: <T>(fn: () => T): T => inTransaction(db, fn),
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
