import { INT64_MAX } from "../../db/int64.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import type { Speed } from "../../lib/speed.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentStore } from "../../payments/store.ts";
import { bridgesFromSources } from "../deposit-terms.ts";
import type { ChainStore, TransferRow } from "../store.ts";

/** One USDC transfer to a deposit address, as found by the watcher or a payer's /sync. */
export interface ObservedTransfer {
  /** The chain it was made on: the settlement chain or a source chain. */
  chainId: number;
  txHash: string;
  logIndex: number;
  from: string;
  to: string; // checksummed deposit address
  amount: bigint;
  blockNumber: number;
  blockHash: string;
}

export type Ledger = ReturnType<typeof createLedger>;

/**
 * Records transfers, crediting each (tx hash, log index) exactly once, and only once its payment's
 * speed policy counts it. Runs inside the caller's transaction (with the cursor move, for the watcher).
 */
export function createLedger(deps: {
  chain: ChainStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  clock: Clock;
  log?: Logger;
}) {
  const { chain, payments, lifecycle, clock } = deps;

  /**
   * Whether the transfer, added to what its payment already received, fits the 64-bit store.
   * Real USDC never comes near 2^63 units, but a custom token can: such a transfer is neither
   * stored nor credited (it would wrap negative), and its funds stay at the deposit address.
   */
  function fits(paymentId: string, transfer: ObservedTransfer): boolean {
    const received = payments.findById(paymentId)!.amount_received ?? 0n;
    return transfer.amount <= INT64_MAX - received;
  }

  /**
   * Off the settlement chain only a deposit address that bridges (version 2 and later, issued
   * with source chains) can move its funds to the payout; a version 1 address is a contract
   * nowhere else, and one issued without source chains commits to no messenger, so USDC sent to
   * it on a source chain is not the payment's to credit. It stays there (recoverable where the
   * address is a contract), and the operator hears of it.
   */
  function reachable(paymentId: string, transfer: ObservedTransfer): boolean {
    const row = payments.findById(paymentId)!;
    if (transfer.chainId === row.chain_id || bridgesFromSources(row)) return true;
    deps.log?.warn(
      "transfer on a source chain to a deposit address that cannot bridge from there " +
        "(valid only on the settlement chain); not credited",
      {
        payment_id: paymentId,
        chain_id: transfer.chainId,
        tx_hash: transfer.txHash,
        log_index: transfer.logIndex,
        amount: transfer.amount.toString(),
      },
    );
    return false;
  }

  return {
    /** Whether `record` would take this transfer rather than refuse it as too large. */
    fits(transfer: ObservedTransfer): boolean {
      const paymentId = payments.findIdByDepositAddress(transfer.to);
      if (!paymentId || chain.findTransfer(transfer.txHash, transfer.logIndex)?.credited_at != null) return true;
      return fits(paymentId, transfer);
    },

    /**
     * Records a transfer found on the chain (by the watcher or a payer's /sync) and credits it once
     * `counts` says its payment's speed policy counts it (src/chain/watching/depth.ts); one not
     * counted yet is announced as seen (payment.funds_seen) and credited later (`creditWaiting`).
     * Found again in another block (a reorg moved it), it is kept with its new block. Returns
     * whether this call credited the transfer.
     */
    record(transfer: ObservedTransfer, counts: (speed: Speed) => boolean): boolean {
      if (transfer.amount <= 0n) return false; // zero-value transfers are address-poisoning noise
      const paymentId = payments.findIdByDepositAddress(transfer.to);
      if (!paymentId) return false;
      if (!reachable(paymentId, transfer)) return false;
      const existing = chain.findTransfer(transfer.txHash, transfer.logIndex);
      if (existing && existing.block_hash !== transfer.blockHash)
        chain.moveTransfer(transfer.txHash, transfer.logIndex, transfer.blockNumber, transfer.blockHash);
      if (existing?.credited_at != null) return false;
      if (!fits(paymentId, transfer)) {
        deps.log?.warn("transfer too large to account for; not credited", {
          payment_id: paymentId,
          tx_hash: transfer.txHash,
          log_index: transfer.logIndex,
          amount: transfer.amount.toString(),
        });
        return false;
      }
      const now = clock.now();
      const confirmed = counts(payments.findById(paymentId)!.speed);
      if (existing) {
        if (!confirmed) return false;
        chain.markCredited(transfer.txHash, transfer.logIndex, transfer.blockNumber, transfer.blockHash, now);
      } else {
        chain.insertTransfer({
          chain_id: transfer.chainId,
          tx_hash: transfer.txHash,
          log_index: transfer.logIndex,
          payment_id: paymentId,
          from_address: transfer.from,
          amount: transfer.amount,
          block_number: transfer.blockNumber,
          block_hash: transfer.blockHash,
          credited_at: confirmed ? now : null,
          created_at: now,
        });
        if (!confirmed) {
          lifecycle.seen(paymentId);
          return false;
        }
      }
      lifecycle.credit(paymentId, transfer.amount);
      return true;
    },

    /**
     * Credits a recorded transfer that its payment's policy now counts; whether it did. One that
     * no longer fits beside what the payment received since stays recorded, uncredited (see `fits`).
     */
    creditWaiting(transfer: TransferRow): boolean {
      if (transfer.amount > INT64_MAX - (payments.findById(transfer.payment_id)!.amount_received ?? 0n)) return false;
      const credited = chain.markCredited(
        transfer.tx_hash,
        transfer.log_index,
        transfer.block_number,
        transfer.block_hash,
        clock.now(),
      );
      if (credited) lifecycle.credit(transfer.payment_id, transfer.amount);
      return credited;
    },

    /**
     * A recorded transfer that is no longer on the chain (a reorg took its block): kept apart for
     * the payment's record, its credit (if it had one) taken back, and announced
     * (payment.funds_reversed).
     */
    reverse(transfer: TransferRow): void {
      chain.reverseTransfer(transfer.tx_hash, transfer.log_index, clock.now());
      lifecycle.reverse(transfer.payment_id, transfer.credited_at === null ? 0n : transfer.amount);
      deps.log?.warn("a transfer left the chain in a reorg", {
        payment_id: transfer.payment_id,
        chain_id: transfer.chain_id,
        tx_hash: transfer.tx_hash,
        log_index: transfer.log_index,
        amount: transfer.amount.toString(),
        was_credited: transfer.credited_at !== null,
      });
    },
  };
}
