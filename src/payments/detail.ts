import type { Account } from "../accounts/service.ts";
import type { burnView } from "../chain/redeeming/service.ts";
import type { ChainStore } from "../chain/store.ts";
import type { EventStore } from "../events/store.ts";
import { splitFee } from "../lib/money.ts";
import type { DeliveriesService } from "../webhooks/deliveries.ts";
import type { PaymentsService } from "./service.ts";
import type { PaymentRow } from "./store.ts";
import { chainNameOf, lineItemsView, type ViewContext } from "./view.ts";

export interface PaymentDetailDeps {
  payments: PaymentsService;
  chain: ChainStore;
  events: EventStore;
  deliveries: DeliveriesService;
  /** The payment's cross-chain burns, when cross-chain funding is on. */
  crossChainFor?: (
    paymentId: string,
  ) => Promise<Array<ReturnType<typeof burnView>>> | Array<ReturnType<typeof burnView>>;
  /** Settlement chain and source chain names, for the chain each transfer was made on. */
  view: ViewContext;
}

export type PaymentDetails = ReturnType<typeof createPaymentDetails>;
export type PaymentDetail = Awaited<ReturnType<PaymentDetails["find"]>>;

/**
 * The fee and net of what a payment received (less bridging): as settled so far, then as the
 * forwarder splits the rest.
 */
function splitOf(payment: PaymentRow, received: bigint): { fee: bigint; net: bigint } {
  const owed = received - payment.bridge_fee;
  const unswept = owed - payment.amount_settled;
  const fee = payment.fee_settled + (unswept > 0n ? splitFee(unswept, payment.fee_bps).fee : 0n);
  return { fee, net: owed - fee };
}

/**
 * Everything known about one payment of an account, for the dashboard's payment page: the row,
 * what arrived on chain (and was burned for it on other chains), what was swept, its status
 * history and the webhooks sent about it.
 */
export function createPaymentDetails(deps: PaymentDetailDeps) {
  return {
    /** Throws NotFoundError for an unknown id or another account's, alike. */
    async find(account: Account, id: string) {
      const payment: PaymentRow = await deps.payments.retrieve(account, id);
      const received = payment.amount_received;
      const transfers = await deps.chain.transfersForPayment(payment.id);
      const reversed = await deps.chain.reversedForPayment(payment.id);
      const settlements = await deps.chain.settlementsForPayment(payment.id);
      const crossChain = (await deps.crossChainFor?.(payment.id)) ?? [];
      const history = await deps.events.historyOfPayment(payment.id, account.id);
      const deliveries = await deps.deliveries.forPayment(account, payment.id);
      return {
        payment,
        lineItems: lineItemsView(payment),
        /**
         * Of what was received so far, less what bridging it from other chains cost: the fee
         * settlements actually paid (none where a fee was skipped) and, on what is not swept yet,
         * the fee the forwarder will take; null while nothing was.
         */
        split: received === null ? null : splitOf(payment, received),
        // Then those a reorg took off the chain (docs/speed.md), which the record keeps.
        transfers: [
          ...transfers.map((t) => ({ ...t, reversed: false })),
          ...reversed.map((t) => ({ ...t, reversed: true })),
        ].map((t) => ({
          chain: chainNameOf(t.chain_id, deps.view),
          onSettlementChain: t.chain_id === payment.chain_id,
          txHash: t.tx_hash,
          logIndex: t.log_index,
          from: t.from_address,
          amount: t.amount,
          blockNumber: t.block_number,
          confirmed: !t.reversed && t.credited_at !== null,
          reversed: t.reversed,
          seenAt: t.created_at,
        })),
        settlements: settlements.map((s) => ({
          txHash: s.tx_hash,
          state: s.state,
          amount: s.amount,
          blockNumber: s.block_number,
          submittedAt: s.submitted_at,
          updatedAt: s.updated_at,
        })),
        crossChain,
        history: history.map((e) => ({ id: e.id, type: e.type, createdAt: e.created_at })),
        deliveries,
      };
    },
  };
}
