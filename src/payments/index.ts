import type { Address } from "viem";
import type { SettlementChain } from "../chain/config.ts";
import { type CrossChainConfig, newDepositTerms } from "../chain/cross-chain-config.ts";
import type { ChainRecords } from "../chain/index.ts";
import type { Events } from "../events/index.ts";
import { runEvery } from "../lib/loop.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import type { Speed } from "../lib/speed.ts";
import type { DeliveriesService } from "../webhooks/deliveries.ts";
import { createPaymentDetails } from "./detail.ts";
import { createLifecycle } from "./lifecycle.ts";
import { createRetrieve, type RetrieveDeps } from "./retrieve.ts";
import { createRetrieveStore } from "./retrieve-store.ts";
import { createPaymentSearch } from "./search.ts";
import { createSearchStore } from "./search-store.ts";
import { type CreatedHook, createPaymentsService } from "./service.ts";
import { createStatusCountStore } from "./status-count-store.ts";
import { createPaymentStore } from "./store.ts";
import type { ViewContext } from "./view.ts";

/** Payments' slice of the configuration. */
export interface PaymentsConfig {
  /** Where pay_url points. */
  baseUrl: string;
  chain: Pick<SettlementChain, "name" | "chainId" | "usdc">;
  /** The source chains new deposit addresses bridge from, when cross-chain funding is on. */
  crossChain: CrossChainConfig | null;
  /** The fee of accounts that set none, and who receives fees. */
  feeBps: number;
  feeRecipient: Address | undefined;
  /** How long a new payment waits for funds before it expires. */
  paymentWindowMs: number;
  /** STABLEGATE_SPEED: the speed policy of payments whose request and account name none. */
  defaultSpeed: Speed;
}

/**
 * Payments: the service behind the API, the lifecycle that moves statuses through the state
 * machine and writes their events, the views, the dashboard's search and payment page, and the
 * loop that expires payments past their window. The chain side's records are read for what a
 * payment shows of the chain (its transfers, burns and bridges).
 */
export function createPayments(
  w: Plumbing & {
    config: PaymentsConfig;
    events: Pick<Events, "store" | "written">;
    records: ChainRecords;
    /** Whose key a merchant's request carries (GET /api/v1/payments/:id reads it with the payment on PostgreSQL). */
    accounts: RetrieveDeps["accounts"];
    /** The webhooks sent about a payment, for its dashboard page. */
    deliveries: DeliveriesService;
    /** What a new payment queues in its own transaction (its invoice email). */
    onCreated?: CreatedHook;
  },
) {
  const { db, clock, ids, log, config, records } = w;
  const view: ViewContext = {
    baseUrl: config.baseUrl,
    chainName: config.chain.name,
    sourceChainNames: new Map(config.crossChain?.sources.map((s) => [s.chainId, s.name]) ?? []),
  };
  const store = createPaymentStore(db);
  const crossChain = records.crossChain;
  const lifecycle = createLifecycle({
    payments: store,
    chain: records.stores.chain,
    events: w.events.store,
    clock,
    ids,
    view,
    onEvent: w.events.written,
    crossChainFor: crossChain?.burnsOf,
    bridgeView: crossChain?.bridgeOf,
    overpaymentTolerance: crossChain?.overpaymentTolerance,
  });
  const service = createPaymentsService({
    store,
    groupCommit: w.groupCommit,
    clock,
    ids,
    chainId: config.chain.chainId,
    usdc: config.chain.usdc,
    defaultFeeBps: config.feeBps,
    feeRecipient: config.feeRecipient,
    paymentWindowMs: config.paymentWindowMs,
    defaultSpeed: config.defaultSpeed,
    depositTerms: newDepositTerms(config.crossChain, config.chain.name),
    onCreated: w.onCreated,
  });
  const statusCounts = createStatusCountStore(db);
  // Batch by batch, so a fold that fell behind catches up in one round of short transactions.
  const foldStatusCounts = async () => {
    for (let batch = 0; batch < 100 && (await statusCounts.fold()) > 0; batch++);
  };
  let expiryRounds = 0;
  const expireDue = async () => {
    try {
      const count = await db.transaction(() => lifecycle.expireDue());
      if (count > 0) log.info("payments expired", { count });
    } finally {
      expiryRounds++;
    }
  };
  return {
    store,
    lifecycle,
    service,
    view,
    /** The dashboard's lists, searches, home figures and the CSV export. */
    search: createPaymentSearch({ store: createSearchStore(db), clock }),
    /** GET /api/v1/payments/:id, key check included: on PostgreSQL one round trip (src/payments/retrieve.ts). */
    retrieve: createRetrieve({
      db,
      accounts: w.accounts,
      payments: service,
      store: createRetrieveStore(db),
      render: lifecycle.paymentJson,
    }),
    /** One payment with everything about it, for the dashboard's payment page. */
    details: createPaymentDetails({
      payments: service,
      chain: records.stores.chain,
      events: w.events.store,
      deliveries: w.deliveries,
      crossChainFor: crossChain?.burnsOf,
      view,
    }),
    /**
     * Expires payments past `expires_at` with nothing received, every second. It needs no chain,
     * so it runs even while the RPC is down.
     */
    run: (signal: AbortSignal) =>
      Promise.all([
        runEvery("expiry", 1_000, expireDue, { log, signal }),
        // The status counts' deltas, folded into their totals (src/payments/status-count-store.ts).
        runEvery("status counts", 60_000, foldStatusCounts, { log, signal }),
      ]).then(() => {}),
    /** Expiry rounds completed, so tests wait on them rather than on sleeps. */
    activity: () => ({ expiryRounds }),
  };
}

export type Payments = ReturnType<typeof createPayments>;
