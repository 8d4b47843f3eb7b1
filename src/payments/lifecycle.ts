import type { ChainStore, PaymentRecord, ReversedTransferRow, TransferRow } from "../chain/store.ts";
import type { EventStore } from "../events/store.ts";
import { type Clock, isoMillis } from "../lib/clock.ts";
import type { IdGenerator } from "../lib/ids.ts";
import { formatExact } from "../lib/money.ts";
import { type LifecycleEvent, nextStatus } from "./states.ts";
import type { PaymentRow, PaymentStore } from "./store.ts";
import { type BridgeView, chainNameOf, merchantPaymentJson, type TransferView, type ViewContext } from "./view.ts";

export interface LifecycleDeps {
  payments: PaymentStore;
  chain: ChainStore;
  events: EventStore;
  clock: Clock;
  ids: IdGenerator;
  view: ViewContext;
  /** The bridge carrying a credited source-chain transfer, by its id (when cross-chain is on). */
  bridgeView?: (bridgeId: string) => Promise<BridgeView | null> | BridgeView | null;
  /** The payment's cross-chain burns, as its object lists them (when cross-chain is on). */
  crossChainFor?: (paymentId: string) => Promise<unknown[]> | unknown[];
  /** An excess over the amount the payment's own cross-chain burns' fee margin minted (not an overpayment). */
  overpaymentTolerance?: (paymentId: string) => Promise<bigint> | bigint;
  /** Called after an event is written; delivery picks it up once the transaction commits. */
  onEvent?: () => void;
}

export type Lifecycle = ReturnType<typeof createLifecycle>;

/**
 * A payment started from a payment link's page whose window closed with nothing received: anyone
 * can start those by opening the link, so they are not announced (no event, no webhook). Its
 * status is still `expired`, and funds arriving later are announced as for any payment.
 */
const unannounced = (row: PaymentRow) => row.status === "expired" && row.payment_link !== null;

/**
 * Status changes and the events they emit, always together: every method here must run inside
 * the caller's transaction, so a change and its event commit or vanish as one (the outbox).
 */
export function createLifecycle(deps: LifecycleDeps) {
  const { payments, chain, events, clock, ids, view } = deps;

  /**
   * The payment's transfers, each with its chain and, made on a source chain and credited, its
   * bridging; then those a reorg took off the chain (`reversed`), which the record keeps.
   */
  async function transfersView(
    row: Pick<PaymentRow, "id" | "chain_id">,
    record?: PaymentRecord,
  ): Promise<TransferView[]> {
    const shown = (t: ReversedTransferRow | TransferRow, reversed: boolean) => ({
      chain: chainNameOf(t.chain_id, view),
      chain_id: t.chain_id,
      tx_hash: t.tx_hash,
      log_index: t.log_index,
      amount: formatExact(t.amount),
      block_number: t.block_number,
      confirmed: !reversed && t.credited_at !== null,
      reversed,
    });
    const { transfers, reversed } = record ?? (await chain.recordOf(row.id));
    const shownTransfers: TransferView[] = [];
    for (const t of transfers) {
      shownTransfers.push({
        ...shown(t, false),
        bridge: t.chain_id === row.chain_id || t.credited_at === null ? null : await bridgeOf(t.bridge_id ?? null),
      });
    }
    return [...shownTransfers, ...reversed.map((t) => ({ ...shown(t, true), bridge: null }))];
  }

  /** No bridge yet: credited, waiting for the bridger to burn it. */
  async function bridgeOf(bridgeId: string | null): Promise<BridgeView | null> {
    const waiting = { state: "credited", fee: null, burn_tx_hash: null, mint_tx_hash: null };
    return bridgeId === null ? waiting : ((await deps.bridgeView?.(bridgeId)) ?? waiting);
  }

  /** The merchant payment object, exactly as GET /api/v1/payments/{id} returns it (`record`: read already). */
  async function paymentJson(row: PaymentRow, record?: PaymentRecord): Promise<string> {
    return merchantPaymentJson(row, await transfersView(row, record), (await deps.crossChainFor?.(row.id)) ?? [], view);
  }

  async function emit(row: PaymentRow, type: string): Promise<void> {
    const id = ids.prefixed("evt");
    const now = clock.now();
    const payload =
      `{"id":${JSON.stringify(id)},"object":"event","type":${JSON.stringify(type)},` +
      `"created_at":"${isoMillis(now)}","data":{"payment":${await paymentJson(row)}}}`;
    await events.insert({ id, account_id: row.account_id, type, payment_id: row.id, payload, created_at: now });
    deps.onEvent?.();
  }

  /** Applies `event` through the state machine; returns the row as it now stands. */
  async function apply(paymentId: string, event: LifecycleEvent): Promise<PaymentRow> {
    const row = (await payments.findById(paymentId))!;
    const received = row.amount_received ?? 0n;
    const tolerance = received > row.amount ? ((await deps.overpaymentTolerance?.(paymentId)) ?? 0n) : 0n;
    const to = nextStatus(row.status, event, received, row.amount, tolerance);
    if (to === null) return row;
    if (!(await payments.updateStatus(row.id, row.status, to, clock.now())))
      return (await payments.findById(paymentId))!;
    const updated = (await payments.findById(paymentId))!;
    if (!unannounced(updated)) await emit(updated, `payment.${to}`);
    return updated;
  }

  return {
    paymentJson,
    /** A payment just created has no transfers or burns yet: no need to look (the hot path). */
    newPaymentJson: (row: PaymentRow): string => merchantPaymentJson(row, [], [], view),
    transfersView,
    apply,

    /**
     * Credits a confirmed transfer to its payment: amount_received grows, the state machine
     * reacts, and funds after confirmation are announced as payment.funds_received.
     */
    async credit(paymentId: string, amount: bigint): Promise<PaymentRow> {
      await payments.addReceived(paymentId, amount, clock.now());
      const updated = await apply(paymentId, "credited");
      if (updated.status === "confirmed") await emit(updated, "payment.funds_received");
      return updated;
    },

    /**
     * A payment paid by one mined transfer straight to its payout address (an x402 settlement
     * there, src/x402/): received, and its settlement (that same transfer) submitted, so it goes
     * pending -> settling through the state machine, with its event. It is `confirmed` only once
     * the payment's speed policy counts the transfer's block (`settledDirectly`). Runs inside
     * the caller's transaction, with the payment's own insert.
     */
    async paidDirectly(paymentId: string, amount: bigint): Promise<PaymentRow> {
      await payments.addReceived(paymentId, amount, clock.now());
      return apply(paymentId, "settlement_submitted");
    },

    /**
     * The transfer of a payment `paidDirectly` is as deep as its speed policy asks: what was
     * settled is counted with no fee (the account has none, or the transfer was refused), and
     * the payment goes settling -> confirmed, with its event. Runs inside the caller's
     * transaction; the caller makes sure it runs once per payment.
     */
    async settledDirectly(paymentId: string, amount: bigint): Promise<PaymentRow> {
      await payments.recordSettled(paymentId, amount, clock.now(), 0n);
      return apply(paymentId, "settlement_mined");
    },

    /** A transfer recorded before its payment's speed policy counts it: "received, confirming". */
    async seen(paymentId: string): Promise<void> {
      await emit((await payments.findById(paymentId))!, "payment.funds_seen");
    },

    /**
     * A transfer a reorg took off the chain: its credit (`amount`, zero when it was only seen) is
     * taken back, the state machine reacts (a `confirmed` payment stays so), and it is announced.
     */
    async reverse(paymentId: string, amount: bigint): Promise<PaymentRow> {
      if (amount > 0n) await payments.takeBackReceived(paymentId, amount, clock.now());
      const updated = await apply(paymentId, "funds_reversed");
      await emit(updated, "payment.funds_reversed");
      return updated;
    },

    /** A mined settlement a reorg took off the chain, already taken back from the payment's record. */
    async settlementReversed(paymentId: string): Promise<void> {
      await emit((await payments.findById(paymentId))!, "payment.settlement_reversed");
    },

    /** Moves pending payments whose window closed with nothing received to expired. */
    async expireDue(limit = 500): Promise<number> {
      let changed = 0;
      for (const id of await payments.dueForExpiry(clock.now(), limit)) {
        if ((await apply(id, "window_closed")).status === "expired") changed++;
      }
      return changed;
    },
  };
}
