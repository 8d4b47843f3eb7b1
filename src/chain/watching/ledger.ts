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
  async function fits(paymentId: string, transfer: ObservedTransfer): Promise<boolean> {
    const received = (await payments.findById(paymentId))!.amount_received ?? 0n;
    return transfer.amount <= INT64_MAX - received;
  }

  /**
   * Off the settlement chain only a deposit address that bridges (version 2 and later, issued
   * with source chains) can move its funds to the payout; a version 1 address is a contract
   * nowhere else, and one issued without source chains commits to no messenger, so USDC sent to
   * it on a source chain is not the payment's to credit. It stays there (recoverable where the
   * address is a contract), and the operator hears of it.
   */
  async function reachable(paymentId: string, transfer: ObservedTransfer): Promise<boolean> {
    const row = (await payments.findById(paymentId))!;
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

  const ledger = {
    /** Whether `record` would take this transfer rather than refuse it as too large. */
    async fits(transfer: ObservedTransfer): Promise<boolean> {
      const paymentId = await payments.findIdByDepositAddress(transfer.to);
      if (!paymentId || (await chain.findTransfer(transfer.txHash, transfer.logIndex))?.credited_at != null)
        return true;
      return fits(paymentId, transfer);
    },

    /**
     * Records a transfer found on the chain (by the watcher or a payer's /sync) and credits it once
     * `counts` says its payment's speed policy counts it (src/chain/watching/depth.ts); one not
     * counted yet is announced as seen (payment.funds_seen) and credited later (`creditWaiting`).
     * Found again in another block (a reorg moved it), it is kept with its new block. Returns
     * whether this call credited the transfer. Recorded or credited by another at the same moment
     * (the watcher and a payer's /sync, on any replica), it is credited once: by whoever got there first.
     */
    async record(transfer: ObservedTransfer, counts: (speed: Speed) => boolean, again = false): Promise<boolean> {
      if (transfer.amount <= 0n) return false; // zero-value transfers are address-poisoning noise
      const paymentId = await payments.findIdByDepositAddress(transfer.to);
      if (!paymentId) return false;
      if (!(await reachable(paymentId, transfer))) return false;
      const existing = await chain.findTransfer(transfer.txHash, transfer.logIndex);
      if (existing && existing.block_hash !== transfer.blockHash)
        await chain.moveTransfer(transfer.txHash, transfer.logIndex, transfer.blockNumber, transfer.blockHash);
      if (existing?.credited_at != null) return false;
      if (!(await fits(paymentId, transfer))) {
        deps.log?.warn("transfer too large to account for; not credited", {
          payment_id: paymentId,
          tx_hash: transfer.txHash,
          log_index: transfer.logIndex,
          amount: transfer.amount.toString(),
        });
        return false;
      }
      const now = clock.now();
      const confirmed = counts((await payments.findById(paymentId))!.speed);
      if (existing) {
        if (!confirmed) return false;
        const credited = await chain.markCredited(
          transfer.txHash,
          transfer.logIndex,
          transfer.blockNumber,
          transfer.blockHash,
          now,
        );
        if (!credited) return false;
      } else {
        const inserted = await chain.insertTransfer({
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
        // Recorded by another meanwhile: it is there now, so take the path of a recorded transfer.
        if (!inserted) return again ? false : ledger.record(transfer, counts, true);
        if (!confirmed) {
          await lifecycle.seen(paymentId);
          return false;
        }
      }
      await lifecycle.credit(paymentId, transfer.amount);
      return true;
    },

    /**
     * Credits a recorded transfer that its payment's policy now counts; whether it did. One that
     * no longer fits beside what the payment received since stays recorded, uncredited (see `fits`).
     */
    async creditWaiting(transfer: TransferRow): Promise<boolean> {
      const received = (await payments.findById(transfer.payment_id))!.amount_received ?? 0n;
      if (transfer.amount > INT64_MAX - received) return false;
      const credited = await chain.markCredited(
        transfer.tx_hash,
        transfer.log_index,
        transfer.block_number,
        transfer.block_hash,
        clock.now(),
      );
      if (credited) await lifecycle.credit(transfer.payment_id, transfer.amount);
      return credited;
    },

    /**
     * A recorded transfer that is no longer on the chain (a reorg took its block): kept apart for
     * the payment's record, its credit (if it had one) taken back, and announced
     * (payment.funds_reversed).
     */
    async reverse(transfer: TransferRow): Promise<void> {
      await chain.reverseTransfer(transfer.tx_hash, transfer.log_index, clock.now());
      await lifecycle.reverse(transfer.payment_id, transfer.credited_at === null ? 0n : transfer.amount);
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
  return ledger;
}
