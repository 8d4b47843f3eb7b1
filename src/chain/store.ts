import type { Db } from "../db/index.ts";
import { fitsInt64, int64 } from "../db/int64.ts";
import { inTransaction } from "../db/transaction.ts";

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
  state: "submitted" | "mined" | "reverted" | "dropped";
  tx_hash: string;
  tx_hashes: string;
  raw_tx: string;
  max_fee: string;
  priority_fee: string;
  amount: bigint | null; // null until mined, or when too large to store (see finishSettlement)
  block_number: number | null;
  submitted_at: number;
  updated_at: number;
}

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
  const dropStaleUncredited = db.query(
    "DELETE FROM transfers WHERE credited_at IS NULL AND chain_id = ? AND block_number <= ?",
  );

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
    "UPDATE settlements SET state = ?, amount = ?, block_number = ?, tx_hash = ?, updated_at = ? WHERE id = ?",
  );
  const settlementsForPayment = db
    .query<SettlementRow, [string]>("SELECT * FROM settlements WHERE payment_id = ? ORDER BY id")
    .safeIntegers(true);
  const maxNonce = db.query<{ n: number | null }, []>(
    "SELECT max(nonce) AS n FROM settlements WHERE state != 'dropped'",
  );

  return {
    findTransfer: (txHash: string, logIndex: number) => normaliseTransfer(findTransfer.get(txHash, logIndex)),
    insertTransfer: (row: TransferRow) => insertTransfer.run({ ...row, amount: int64(row.amount, "transfer amount") }),
    markCredited: (txHash: string, logIndex: number, blockNumber: number, blockHash: string, now: number) =>
      markCredited.run(now, blockNumber, blockHash, txHash, logIndex).changes > 0,
    transfersForPayment: (paymentId: string) => transfersForPayment.all(paymentId).map((r) => normaliseTransfer(r)!),
    /** Seen through /sync but never found by the watcher once it scanned past them: reorged away. */
    /** Transfers seen (through /sync) on `chainId` but not found by the watcher up to `upToBlock`. */
    dropStaleUncredited: (chainId: number, upToBlock: number) => dropStaleUncredited.run(chainId, upToBlock).changes,

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
      amount: bigint | null,
      blockNumber: number | null,
      txHash: string,
      now: number,
    ) =>
      finishSettlement.run(state, amount !== null && fitsInt64(amount) ? amount : null, blockNumber, txHash, now, id),
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
