import { type Address, type Hex, type PublicClient, parseEventLogs } from "viem";
import { INT64_MAX } from "../../db/int64.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentStore } from "../../payments/store.ts";
import { depositFactoryAbi } from "../contracts.ts";
import type { NonceManager } from "../nonces.ts";
import { unlessNotFound } from "../rpc-errors.ts";
import type { ChainStore, SettlementRow } from "../store.ts";
import type { Depth } from "../watching/depth.ts";

/**
 * Mined settlements that counted before the standard depth (the `fast` policy), watched until
 * they reach it. One a reorg took off the chain is never forgotten: it is marked `reorged`, what it
 * swept is taken back from the payment's record (so the settler sweeps again whatever is back at
 * the deposit address), and payment.settlement_reversed says so. One that landed again in
 * another block, with the same sweep, just moves.
 */
export function createYoungSettlements(deps: {
  client: PublicClient;
  chain: ChainStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  nonces: NonceManager;
  clock: Clock;
  log: Logger;
  confirmations: number;
  factoryOf: (paymentId: string) => Promise<Address>;
}) {
  const { client, chain, payments, lifecycle, clock, log } = deps;
  /** The lowest block a young settlement can be in, from the last look; -1 before the first. */
  let above = -1;

  /** Whether the receipt still shows this settlement's sweep, as it was recorded. */
  async function sweepStands(
    settlement: SettlementRow,
    receipt: Awaited<ReturnType<PublicClient["getTransactionReceipt"]>>,
  ): Promise<boolean> {
    if (receipt.status !== "success") return false;
    const factory = (await deps.factoryOf(settlement.payment_id)).toLowerCase();
    const settled = parseEventLogs({ abi: depositFactoryAbi, eventName: "Settled", logs: receipt.logs }).find(
      (e) => e.address.toLowerCase() === factory && e.args.paymentId === settlement.payment_id,
    );
    // An amount too large to store was recorded as null: its event is all there is to compare.
    return settled !== undefined && (settlement.amount === null || settled.args.amount === settlement.amount);
  }

  async function reverse(settlement: SettlementRow): Promise<void> {
    await chain.transaction(async () => {
      if (!(await chain.settlementReorged(settlement.id, clock.now()))) return;
      // A sweep too large to store was counted as the 64-bit maximum (recordSettled).
      const swept = { amount: settlement.amount ?? INT64_MAX, fee: settlement.fee ?? 0n };
      await payments.unrecordSettled(settlement.payment_id, swept, settlement.updated_at, clock.now());
      await lifecycle.settlementReversed(settlement.payment_id);
    });
    // Its nonce may be free again: the next transaction must not leave a gap before it.
    deps.nonces.reset();
    log.warn("a mined settlement left the chain in a reorg; what it swept counts as unsettled again", {
      payment_id: settlement.payment_id,
      tx_hash: settlement.tx_hash,
      block_number: settlement.block_number,
    });
  }

  return {
    /** Whether any settlement may still be young: the settler then reads the chain each round. */
    any: () => chain.hasYoungSettlement(above),

    async check(depth: Depth): Promise<void> {
      above = Number(depth.head) - depth.confirmations;
      for (const settlement of await chain.youngSettlements(above)) {
        const receipt = await unlessNotFound(client.getTransactionReceipt({ hash: settlement.tx_hash as Hex }));
        if (!receipt || !(await sweepStands(settlement, receipt))) await reverse(settlement);
        else if (Number(receipt.blockNumber) !== settlement.block_number)
          await chain.transaction(() =>
            chain.settlementMovedTo(settlement.id, Number(receipt.blockNumber), clock.now()),
          );
      }
    },
  };
}
