import type { Address, Hex } from "viem";
import type { PaymentStore } from "../../payments/store.ts";
import type { RefundsService } from "../../refunds/service.ts";
import type { RefundRow, RefundTransfer } from "../../refunds/store.ts";
import { counts, type Depth } from "./depth.ts";
import type { ObservedTransfer } from "./ledger.ts";
import { decodeTransfer, type RpcLog, recipient } from "./transfer-logs.ts";

/** What the settlement chain's watcher asks of refunds (src/refunds/service.ts). */
export type RefundPayouts = Pick<RefundsService, "payableOn" | "see" | "forget" | "succeed">;

export type RefundMatches = ReturnType<typeof createRefundMatches>;

const key = (txHash: string, logIndex: number) => `${txHash.toLowerCase()}:${logIndex}`;
const seenKey = (row: RefundRow) => (row.tx_hash === null ? null : key(row.tx_hash, row.log_index!));

/**
 * The settlement chain's watcher's side of refunds (docs/refunds.md): a USDC transfer to a payable
 * refund's address, for exactly its amount, in a block after the refund became payable, pays it;
 * it succeeds once the payment's speed policy counts that block. Refunds with the same address and
 * amount are paid first come, first served: the oldest payable takes the first such transfer.
 * Every write is made in the watcher's fenced transaction, with the cursor's move or on its own.
 */
export function createRefundMatches(deps: {
  refunds: RefundPayouts;
  payments: Pick<PaymentStore, "findById">;
  chainId: number;
  usdc: Address;
  /** The chain's hash of a block. */
  blockHash: (blockNumber: bigint) => Promise<Hex>;
  /** The watcher's fenced transaction (see WatcherDeps). */
  fenced: <T>(write: () => Promise<T>) => Promise<T>;
}) {
  const { refunds, payments, chainId, usdc } = deps;
  /** Payable refunds with a transfer seen, as the last scan left them; null when no scan ran since. */
  let seenAfterScan: RefundRow[] | null = null;

  return {
    /** Forgets what the watcher knew between rounds: each round starts from the store. */
    startRound(): void {
      seenAfterScan = null;
    },

    /**
     * Inside the transaction that moves the cursor over [from, to]: forgets a seen transfer of the
     * range that is no longer among its logs (a reorg took it), and sees each new matching
     * transfer on the oldest payable refund it fits. One query when nothing is payable; then one
     * lookup per log, by its `to` topic, and only the logs to a refund's address are decoded.
     */
    async scanned(logs: RpcLog[], from: bigint, to: bigint): Promise<{ seen: number; forgotten: number }> {
      const payable = await refunds.payableOn(chainId);
      seenAfterScan = [];
      const outcome = { seen: 0, forgotten: 0 };
      if (payable.length === 0) return outcome;
      const addresses = new Set(payable.map((row) => row.refund_address!.toLowerCase()));
      const found: ObservedTransfer[] = [];
      for (const raw of logs) {
        const address = recipient(raw);
        if (address === null || !addresses.has(address)) continue;
        const transfer = decodeTransfer(raw, { usdc, chainId, from, to });
        if (transfer) found.push(transfer);
      }
      const inRange = new Map(found.map((t) => [key(t.txHash, t.logIndex), t]));
      // Refunds in `payable` order, each with the transfer it holds after this scan (null: none).
      const holding = new Map<RefundRow, RefundTransfer | null>();
      const taken = new Set<string>();
      for (const row of payable) {
        const seen = seenKey(row);
        if (seen === null) {
          holding.set(row, null);
          continue;
        }
        if (row.block_number! < Number(from) || row.block_number! > Number(to)) {
          holding.set(row, held(row));
          taken.add(seen);
          continue;
        }
        const now = inRange.get(seen);
        if (now === undefined) outcome.forgotten += (await refunds.forget(row)) ? 1 : 0;
        else if (now.blockHash !== row.block_hash) await refunds.forget(row);
        // Still there, maybe in another block (the reorg moved it): held again with its new block.
        if (now !== undefined && (now.blockHash === row.block_hash || (await refunds.see(row, now)))) {
          taken.add(seen);
          holding.set(row, now);
        } else holding.set(row, null);
      }
      for (const transfer of found) {
        const k = key(transfer.txHash, transfer.logIndex);
        if (taken.has(k)) continue;
        for (const [row, holds] of holding) {
          if (holds !== null || !pays(row, transfer)) continue;
          // False when the refund changed since it was read (canceled) or the transfer already paid
          // a refund no longer payable (a rescan after it succeeded): then the next one may take it.
          if (!(await refunds.see(row, transfer))) continue;
          holding.set(row, transfer);
          taken.add(k);
          outcome.seen++;
          break;
        }
      }
      for (const [row, holds] of holding)
        if (holds !== null)
          seenAfterScan.push({
            ...row,
            tx_hash: holds.txHash,
            log_index: holds.logIndex,
            block_number: holds.blockNumber,
            block_hash: holds.blockHash,
          });
      return outcome;
    },

    /**
     * Each round, after the scan: a refund whose seen transfer (up to the cursor `upTo`) the
     * payment's speed policy now counts succeeds if its block is still the chain's, and waits for a
     * transfer again if not. No query when this round's scan left no transfer seen.
     */
    async countSeen(depth: Depth, upTo: bigint): Promise<{ succeeded: number; forgotten: number }> {
      const seen = seenAfterScan ?? (await refunds.payableOn(chainId)).filter((row) => row.tx_hash !== null);
      const due: RefundRow[] = [];
      for (const row of seen)
        if (
          BigInt(row.block_number!) <= upTo &&
          counts((await payments.findById(row.payment_id))!.speed, BigInt(row.block_number!), depth)
        )
          due.push(row);
      const outcome = { succeeded: 0, forgotten: 0 };
      if (due.length === 0) return outcome;
      const hashes = new Map<number, Hex>();
      for (const row of due)
        if (!hashes.has(row.block_number!))
          hashes.set(row.block_number!, await deps.blockHash(BigInt(row.block_number!)));
      const wanted = new Set(due.map(seenKey));
      await deps.fenced(async () => {
        // Read again here: a refund `due` named may have changed since it was read (canceled, or
        // its transfer forgotten and another seen), and only what the row says now may be acted on.
        for (const row of await refunds.payableOn(chainId)) {
          const seenNow = seenKey(row);
          if (seenNow === null || !wanted.has(seenNow)) continue;
          const hash = hashes.get(row.block_number!);
          if (hash === undefined) continue;
          if (hash !== row.block_hash) outcome.forgotten += (await refunds.forget(row)) ? 1 : 0;
          else outcome.succeeded += (await refunds.succeed(row)) ? 1 : 0;
        }
      });
      return outcome;
    },
  };
}

/** The transfer a refund holds, as its row says. */
function held(row: RefundRow): RefundTransfer {
  return { txHash: row.tx_hash!, logIndex: row.log_index!, blockNumber: row.block_number!, blockHash: row.block_hash! };
}

/** Whether `transfer` pays `row`: its exact amount, in a block after the refund became payable. */
function pays(row: RefundRow, transfer: ObservedTransfer): boolean {
  if (transfer.amount !== row.amount) return false;
  if (transfer.to.toLowerCase() !== row.refund_address!.toLowerCase()) return false;
  return row.payable_after_block === null || transfer.blockNumber > row.payable_after_block;
}
