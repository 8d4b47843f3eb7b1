import type { Address } from "viem";
import type { Db } from "../db/engine.ts";
import { CHAIN_LEASE, createLease } from "../leases/lease.ts";
import { createLeaseStore } from "../leases/store.ts";
import type { Clock } from "../lib/clock.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { Logger } from "../lib/log.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentsService } from "../payments/service.ts";
import type { PaymentStore } from "../payments/store.ts";
import { createAuthorizations } from "./authorizations/index.ts";
import { type AuthorizationStore, createAuthorizationStore } from "./authorizations/store.ts";
import { bridgeView, createBridging } from "./bridging/index.ts";
import { type BridgeStore, createBridgeStore } from "./bridging/store.ts";
import type { ChainSideConfig } from "./config.ts";
import { createRecoveries } from "./recovering/index.ts";
import { createRecoveryStore, type RecoveryStore } from "./recovering/store.ts";
import { noCrossChain } from "./redeeming/disabled.ts";
import { feeMarginExcess } from "./redeeming/fee-margin.ts";
import { createCrossChain } from "./redeeming/index.ts";
import { burnView } from "./redeeming/service.ts";
import { type BurnStore, createBurnStore } from "./redeeming/store.ts";
import { type ChainStore, createChainStore } from "./store.ts";
import { createChain } from "./watch-and-settle.ts";
import type { RefundPayouts } from "./watching/refund-matches.ts";

/**
 * The chain side's records, opened before the rest of the server: payments show the transfers,
 * burns and bridges they hold (`crossChain`, undefined when cross-chain funding is off), and the
 * chain side, built after payments, writes them.
 */
export function openChainRecords(db: Db, config: Pick<ChainSideConfig, "crossChain">) {
  const burns = createBurnStore(db);
  const bridges = createBridgeStore(db);
  const burnsOf = async (paymentId: string) => (await burns.forPayment(paymentId)).map(burnView);
  return {
    stores: {
      chain: createChainStore(db),
      burns,
      bridges,
      recoveries: createRecoveryStore(db),
      authorizations: createAuthorizationStore(db),
    },
    crossChain: config.crossChain
      ? {
          burnsOf,
          async bridgeOf(bridgeId: string) {
            const row = await bridges.find(bridgeId);
            return row ? bridgeView(row) : null;
          },
          overpaymentTolerance: async (paymentId: string) => feeMarginExcess(await burns.forPayment(paymentId)),
        }
      : undefined,
  };
}

export type ChainRecords = ReturnType<typeof openChainRecords>;

export interface ChainSideDeps {
  config: ChainSideConfig;
  db: Db;
  /** This replica, as the lease names its holder. */
  replica: string;
  stores: {
    payments: PaymentStore;
    chain: ChainStore;
    burns: BurnStore;
    bridges: BridgeStore;
    recoveries: RecoveryStore;
    authorizations: AuthorizationStore;
  };
  lifecycle: Lifecycle;
  payments: Pick<PaymentsService, "retrieve">;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Refunds, whose transfers the settlement chain's watcher matches. */
  refunds?: RefundPayouts;
}

export type ChainSide = ReturnType<typeof createChainSide>;

/**
 * The chain side of a server: watchers, settlements, cross-chain redemptions, bridging and
 * recoveries, which run on one replica at a time, the holder of the chain lease. Every other
 * replica serves the API and delivers webhooks, follows the chains for what it shows, and takes
 * the lease over if the holder dies. Throws when the relayer key cannot be read.
 */
export function createChainSide(deps: ChainSideDeps) {
  const { config, db, stores, lifecycle, clock, ids, log } = deps;
  if (config.databaseUrl && !config.relayerKey) {
    // Replicas on one database take turns at the chain side: each must sign as the same relayer.
    log.warn(
      "STABLEGATE_RELAYER_KEY is not set: this replica signs with the key in its data directory; " +
        "give every replica sharing the database the same STABLEGATE_RELAYER_KEY",
    );
  }
  const { burns, bridges, recoveries: recoveryStore } = stores;
  const lease = createLease({
    store: createLeaseStore(db),
    name: CHAIN_LEASE,
    holder: deps.replica,
    log,
    work,
  });
  /** A write only the lease's holder may make, in one transaction with the check that it still is. */
  const fenced = <T>(write: () => Promise<T>): Promise<T> =>
    db.transaction(async () => {
      await lease.assertHeld();
      return write();
    });
  const chain = createChain({
    config,
    db,
    chainStore: stores.chain,
    payments: stores.payments,
    lifecycle,
    clock,
    log,
    highestOtherNonce: async () =>
      highest(
        await burns.maxRedeemNonce(),
        await recoveryStore.maxNonceOn(config.chain.chainId),
        await stores.authorizations.maxNonceOn(config.chain.chainId),
      ),
    highestStoredOn: async (chainId) =>
      highest(await bridges.maxNonce(chainId), await recoveryStore.maxNonceOn(chainId)),
    bridges: config.crossChain ? bridges : undefined,
    burns,
    ids,
    fenced,
    refunds: deps.refunds,
  });

  const crossChain = config.crossChain
    ? createCrossChain({
        config: config.crossChain,
        burns,
        clients: chain.clients,
        nonces: chain.nonces,
        stuckAfterMs: chain.stuckAfterMs,
        depositAddressOf: async (paymentId) =>
          ((await stores.payments.findById(paymentId))?.deposit_address as Address | undefined) ?? null,
        paymentOf: (paymentId) => stores.payments.findById(paymentId),
        clock,
        ids,
        log,
        fenced,
      })
    : null;

  const bridging = crossChain
    ? createBridging({
        networks: chain.sources,
        bridges,
        burns,
        payments: stores.payments,
        lifecycle,
        transaction: fenced,
        fees: (domain) => crossChain.attestation.fees(domain, config.crossChain!.domain),
        clock,
        ids,
        log,
        stuckAfterMs: chain.stuckAfterMs,
        onBurned: crossChain.redeemer.wake,
        gasProblem: chain.gasProblem,
        readiness: (chainId) => chain.sourceReadiness.get(chainId)!,
      })
    : null;
  if (bridging) chain.onSourceCredited((chainId) => bridging.wake(chainId));

  const { service: recoveries, recoverer } = createRecoveries({
    config,
    store: recoveryStore,
    settlement: { clients: chain.clients, nonces: chain.nonces },
    sources: chain.sources,
    payments: { retrieve: deps.payments.retrieve, findById: stores.payments.findById },
    clock,
    ids,
    log,
    stuckAfterMs: chain.stuckAfterMs,
    fenced,
  });

  // Gasless payments on the settlement chain: any replica accepts, the lease's holder submits.
  const authorizations = createAuthorizations({
    chain: config.chain,
    store: stores.authorizations,
    clients: chain.clients,
    nonces: chain.nonces,
    clock,
    ids,
    log,
    stuckAfterMs: chain.stuckAfterMs,
    fenced,
    // Transfers seen count before they are credited: a plain transfer in flight pays as well. The
    // authorization's own transactions do not (one a reorg took away may still be listed). By
    // amounts alone: every status but those awaiting funds means all was received.
    stillDue: async (paymentId, ours) => {
      const payment = await stores.payments.findById(paymentId);
      if (!payment) return 0n;
      const mine = new Set(ours.map((hash) => hash.toLowerCase()));
      let seen = 0n;
      let creditedOurs = 0n;
      for (const t of await stores.chain.transfersForPayment(paymentId)) {
        if (!mine.has(t.tx_hash.toLowerCase())) seen += t.amount;
        else if (t.credited_at !== null) creditedOurs += t.amount;
      }
      const received = (payment.amount_received ?? 0n) - creditedOurs;
      const due = payment.amount - (seen > received ? seen : received);
      return due > 0n ? due : 0n;
    },
  });

  /** What the lease's holder runs, from taking the lease until losing it or stopping. */
  function work(signal: AbortSignal): Promise<unknown> {
    return Promise.all([
      chain.start(signal),
      crossChain?.redeemer.run(signal),
      bridging?.run(signal),
      recoverer.run(signal),
      authorizations.submitter.run(signal),
    ]);
  }

  return {
    chain,
    crossChain,
    bridging,
    recoveries,
    recoverer,
    /** Gasless payments (EIP-3009 authorizations the relayer submits): src/chain/authorizations/. */
    authorizations: authorizations.service,
    submitter: authorizations.submitter,
    lease,
    /**
     * The chains as the API and /readyz show them, with the gasless submitter's rounds and last error,
     * and the bridges per source chain when cross-chain is on.
     */
    api: {
      ...chain.api,
      readiness: async () => ({
        ...(await chain.api.readiness()),
        gasless: authorizations.submitter.status(),
        ...(bridging ? { bridging: await bridging.status() } : {}),
      }),
    },
    /** The public cross-chain endpoints' service: an empty list of sources when cross-chain funding is off. */
    crossChainApi: crossChain?.service ?? noCrossChain,
    /** The leases of work one replica at a time does, and whether this replica holds each (/readyz). */
    leases: () => [lease.status()],
    /** Rounds the settlement chain's watcher, the redeemer and the recoverer have completed: tests wait on them. */
    activity: () => ({
      watcherRounds: chain.watcher.status().rounds,
      redeemerRounds: crossChain?.redeemer.rounds() ?? 0,
      recovererRounds: recoverer.rounds(),
      submitterRounds: authorizations.submitter.rounds(),
    }),
    /** Takes the lease whenever it is free and runs the chain side under it; follows the chains meanwhile. */
    run(signal: AbortSignal) {
      if (config.crossChain)
        log.info("cross-chain funding on", {
          source_chains: config.crossChain.sources.map((s) => s.name),
          attestation_api: new URL(config.crossChain.apiUrl).origin,
        });
      return Promise.all([lease.run(signal), chain.observe(signal, () => lease.status().held)]);
    },
  };
}

function highest(...nonces: Array<number | null>): number | null {
  const stored = nonces.filter((n): n is number => n !== null);
  return stored.length ? Math.max(...stored) : null;
}
