import { createAccountsService } from "./accounts/service.ts";
import { createAccountStore } from "./accounts/store.ts";
import { createApp } from "./app.ts";
import { bridgeView } from "./chain/bridging/index.ts";
import { createBridgeStore } from "./chain/bridging/store.ts";
import { newDepositTerms } from "./chain/cross-chain-config.ts";
import { type ChainSide, createChainSide } from "./chain/index.ts";
import { createRecoveryStore } from "./chain/recovering/store.ts";
import { noCrossChain } from "./chain/redeeming/disabled.ts";
import { feeMarginExcess } from "./chain/redeeming/fee-margin.ts";
import { burnView } from "./chain/redeeming/service.ts";
import { createBurnStore } from "./chain/redeeming/store.ts";
import { createChainStore } from "./chain/store.ts";
import { networksOf } from "./checkout/networks.ts";
import type { IncomingTransfer } from "./checkout/public-view.ts";
import type { Config } from "./config.ts";
import { createGroupCommit } from "./db/group-commit.ts";
import type { Db } from "./db/index.ts";
import { describeStore, openServeStore } from "./db/open.ts";
import { inTransaction } from "./db/transaction.ts";
import { createEventFeed } from "./events/feed.ts";
import { createEventsService } from "./events/service.ts";
import { createEventStore } from "./events/store.ts";
import { createRateLimiter, createSharedRateLimiter } from "./rate-limits/index.ts";
import { createRateLimitStore } from "./rate-limits/store.ts";
import { createIdempotency } from "./idempotency/index.ts";
import { replicaName } from "./leases/lease.ts";
import { type Clock, systemClock } from "./lib/clock.ts";
import { type IdGenerator, randomIds } from "./lib/ids.ts";
import { hostPort, listenError } from "./lib/listen.ts";
import { createLogger, type Logger } from "./lib/log.ts";
import { runEvery } from "./lib/loop.ts";
import { createMetrics } from "./ops/metrics.ts";
import { serveMetrics } from "./ops/metrics-routes.ts";
import { createRetention } from "./ops/retention.ts";
import { createPaymentLinksService } from "./payment-links/service.ts";
import { createPaymentLinkStore } from "./payment-links/store.ts";
import { createPaymentDetails } from "./payments/detail.ts";
import { createLifecycle } from "./payments/lifecycle.ts";
import { createPaymentSearch } from "./payments/search.ts";
import { createSearchStore } from "./payments/search-store.ts";
import { createPaymentsService } from "./payments/service.ts";
import { createPaymentStore, type PaymentRow } from "./payments/store.ts";
import { createUsersService } from "./users/service.ts";
import { createUserStore } from "./users/store.ts";
import { createDeliveriesService } from "./webhooks/deliveries.ts";
import { createDeliveryStore } from "./webhooks/delivery-store.ts";
import { createWebhookEndpointsService } from "./webhooks/endpoints.ts";
import { WEBHOOK_LIMITS } from "./webhooks/routes.ts";
import { createWebhookStore } from "./webhooks/store.ts";
import type { Resolver } from "./webhooks/url-guard.ts";
import { createWebhookWorker } from "./webhooks/worker.ts";

export interface ServerOptions {
  clock?: Clock;
  ids?: IdGenerator;
  log?: Logger;
  /** DNS for webhook URL checks; tests inject one. */
  resolve?: Resolver;
  /** Webhook delivery timing, shortened by tests. */
  webhookTimeoutMs?: number;
  /** How often an idle event stream sends a comment line (HEARTBEAT_MS). */
  eventHeartbeatMs?: number;
  webhookSchedule?: readonly number[];
  /** Limits on webhook test and retry calls, raised by tests that send hundreds. */
  webhookLimits?: typeof WEBHOOK_LIMITS;
}

/**
 * SIGTERM to exit, at most: Docker kills after 10 s, systemd after 90. Webhook sends still in
 * flight after SEND_GRACE_MS are abandoned unrecorded and are due again after restart.
 */
export const SHUTDOWN_DEADLINE_MS = 8_000;
const SEND_GRACE_MS = 5_000;

export interface RunningServer {
  url: string;
  db: Db;
  /** Every registered route, so tests can check their tables of routes are complete. */
  routes: Array<{ method: string; path: string }>;
  /** Rounds the time-driven loops have completed (and webhook sends in flight): tests wait on these, not on sleeps. */
  activity(): {
    expiryRounds: number;
    webhookRounds: number;
    webhookSending: number;
    redeemerRounds: number;
    /** Event streams open now (GET /api/v1/events/stream). */
    eventStreams: number;
    recovererRounds: number;
  };
  stop(): Promise<void>;
}

/** Wires the store, services, loops and HTTP app from one validated config, then listens. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const log = options.log ?? createLogger(config.logLevel);
  const { db, release: releaseLock } = openServeStore(config);

  // What a failed start-up must undo, so the next attempt finds the directory free.
  function abandon(error: unknown): never {
    db.close();
    releaseLock();
    throw error;
  }

  const accountStore = createAccountStore(db);
  if (!config.feeRecipient && accountStore.countAccountsWithFee() > 0) {
    abandon(new Error("STABLEGATE_FEE_RECIPIENT: required because some accounts charge a fee"));
  }
  if (config.databaseUrl && !config.relayerKey) {
    // Replicas on one database take turns at the chain side: each must sign as the same relayer.
    log.warn(
      "STABLEGATE_RELAYER_KEY is not set: this replica signs with the key in its data directory; " +
        "give every replica sharing the database the same STABLEGATE_RELAYER_KEY",
    );
  }
  if (config.webhookAllowPrivate) {
    log.warn(
      "STABLEGATE_WEBHOOK_ALLOW_PRIVATE is on: webhook URLs may be http and point at private addresses; " +
        "never use this in production",
    );
  }

  const view = {
    baseUrl: config.baseUrl,
    chainName: config.chain.name,
    sourceChainNames: new Map(config.crossChain?.sources.map((s) => [s.chainId, s.name]) ?? []),
  };
  const paymentStore = createPaymentStore(db);
  const chainStore = createChainStore(db);
  const events = createEventStore(db, ids);
  const webhookStore = createWebhookStore(db);
  const deliveryStore = createDeliveryStore(db);
  const groupCommit = createGroupCommit(db);
  // This replica, as leases and webhook claims name it.
  const replica = replicaName(config.dataDir);
  const webhookWorker = createWebhookWorker({
    store: deliveryStore,
    claimer: replica,
    groupCommit,
    clock,
    log,
    allowPrivate: config.webhookAllowPrivate,
    resolve: options.resolve,
    timeoutMs: options.webhookTimeoutMs,
    schedule: options.webhookSchedule,
    shutdownGraceMs: SEND_GRACE_MS,
    onFailedAttempt: (endpointId) => metrics.webhookFailed(endpointId),
  });
  const eventFeed = createEventFeed({ heartbeatMs: options.eventHeartbeatMs });
  const eventWritten = () => {
    webhookWorker.wake();
    eventFeed.notify();
  };
  const burns = createBurnStore(db);
  const bridges = createBridgeStore(db);
  const burnsOf = (paymentId: string) => burns.forPayment(paymentId).map(burnView);
  const lifecycle = createLifecycle({
    payments: paymentStore,
    chain: chainStore,
    events,
    clock,
    ids,
    view,
    onEvent: eventWritten,
    crossChainFor: config.crossChain ? burnsOf : undefined,
    bridgeView: config.crossChain
      ? (id) => {
          const row = bridges.find(id);
          return row ? bridgeView(row) : null;
        }
      : undefined,
    overpaymentTolerance: config.crossChain ? (paymentId) => feeMarginExcess(burns.forPayment(paymentId)) : undefined,
  });
  const accounts = createAccountsService({ store: accountStore, clock, ids });
  const payments = createPaymentsService({
    store: paymentStore,
    groupCommit,
    clock,
    ids,
    chainId: config.chain.chainId,
    usdc: config.chain.usdc,
    defaultFeeBps: config.feeBps,
    feeRecipient: config.feeRecipient,
    paymentWindowMs: config.paymentWindowMs,
    depositTerms: newDepositTerms(config.crossChain, config.chain.name),
  });
  let chainSide: ChainSide;
  try {
    chainSide = createChainSide({
      config,
      db,
      replica,
      stores: { payments: paymentStore, chain: chainStore, burns, bridges, recoveries: createRecoveryStore(db) },
      lifecycle,
      payments,
      clock,
      ids,
      log,
    });
  } catch (error) {
    abandon(error); // an unreadable relayer.key, say
  }
  const { chain, crossChain, bridging, recoveries, recoverer, lease } = chainSide;

  const idempotency = createIdempotency(db, clock);
  // Replicas on one PostgreSQL database share the buckets, so N of them allow the limit, not N
  // times it. A SQLite store has one server: its buckets stay in memory, which is as global and faster.
  const storedLimits = config.databaseUrl ? createRateLimitStore(db) : null;
  const rateLimiter = storedLimits ? createSharedRateLimiter(storedLimits, clock) : createRateLimiter(clock);
  const paymentLinks = createPaymentLinksService({
    store: createPaymentLinkStore(db),
    payments,
    findAccount: accounts.findAccount,
    idempotency,
    groupCommit,
    clock,
    ids,
  });
  const incoming = (row: PaymentRow): IncomingTransfer[] =>
    lifecycle.transfersView(row).map((t) => ({
      chain: t.chain,
      chain_id: t.chain_id,
      tx_hash: t.tx_hash,
      amount: t.amount,
      confirmations: chain.confirmationsOf(t.chain_id, t.block_number),
      confirmed: t.confirmed,
      bridge: t.bridge && {
        state: t.bridge.state,
        burn_tx_hash: t.bridge.burn_tx_hash,
        mint_tx_hash: t.bridge.mint_tx_hash,
      },
    }));

  // Only source chains whose deposit factory is there: funds sent elsewhere could not move.
  const networks = (row: PaymentRow) => networksOf(row, view.chainName, chain.offeredSources());

  const deliveries = createDeliveriesService({
    deliveries: deliveryStore,
    endpoints: webhookStore,
    events,
    clock,
    ids,
    wake: eventWritten,
  });
  const metrics = createMetrics({
    paymentsByStatus: paymentStore.countByStatus,
    settlementChain: config.chain.name,
    unsweptPayments: paymentStore.countUnswept,
    chains: chain.api.chains,
    bridging: () => bridging?.status() ?? [],
    pendingDeliveries: deliveryStore.countPending,
    leases: () => [lease.status()],
  });
  const app = createApp(
    {
      config,
      log,
      clock,
      accounts,
      users: createUsersService({
        store: createUserStore(db),
        clock,
        ids,
        accountExists: (id) => accounts.findAccount(id) !== null,
      }),
      payments,
      paymentLinks,
      paymentSearch: createPaymentSearch({ store: createSearchStore(db), clock }),
      paymentDetails: createPaymentDetails({
        payments,
        chain: chainStore,
        events,
        deliveries,
        crossChainFor: config.crossChain ? burnsOf : undefined,
        view,
      }),
      webhookEndpoints: createWebhookEndpointsService({
        store: webhookStore,
        clock,
        ids,
        log,
        allowPrivate: config.webhookAllowPrivate,
        resolve: options.resolve,
        onDeleted: (endpointId, now) => deliveryStore.cancelForEndpoint(endpointId, now),
      }),
      deliveries,
      events: createEventsService({ store: events, clock }),
      eventFeed,
      idempotency,
      view,
      renderPayment: lifecycle.paymentJson,
      renderNewPayment: lifecycle.newPaymentJson,
      publicExtras: (row) => ({
        merchantName: accounts.findAccount(row.account_id)?.name ?? "",
        incoming: incoming(row),
        crossChain: crossChain ? burnsOf(row.id) : [],
        networks: networks(row),
      }),
      networks,
      chain: bridging
        ? { ...chain.api, readiness: async () => ({ ...(await chain.api.readiness()), bridging: bridging.status() }) }
        : chain.api,
      crossChain: crossChain?.service ?? noCrossChain,
      recoveries,
      rateLimiter,
      webhookLimits: options.webhookLimits ?? WEBHOOK_LIMITS,
      metrics,
      leases: () => [lease.status()],
    },
    db,
  );
  try {
    app.listen({ hostname: config.host, port: config.port });
  } catch (error) {
    abandon(listenError(error, config.host, config.port, { host: "STABLEGATE_HOST", port: "STABLEGATE_PORT" }));
  }
  const metricsServer = await listenForMetrics();
  const server = app.server!;
  // Where this process can reach itself; the log names what is bound.
  const url = `http://${server.hostname === "0.0.0.0" ? "127.0.0.1" : server.hostname}:${server.port}`;
  log.info("listening", {
    address: hostPort(config.host, server.port!),
    base_url: config.baseUrl,
    chain: config.chain.name,
    data_dir: config.dataDir,
    store: describeStore(config),
  });
  if (config.metrics) {
    const { listen, token } = config.metrics;
    log.info("metrics on", {
      address: listen ? hostPort(listen.host, listen.port) : "main port",
      token_required: token !== null,
    });
  }
  if (config.crossChain) {
    log.info("cross-chain funding on", {
      source_chains: config.crossChain.sources.map((s) => s.name),
      attestation_api: new URL(config.crossChain.apiUrl).origin,
    });
  }

  const retention = createRetention({
    events,
    deliveries: deliveryStore,
    endpoints: webhookStore,
    idempotency,
    rateLimits: storedLimits ?? undefined,
    clock,
    log,
  });
  let expiryRounds = 0;
  const expirePayments = () => {
    try {
      const count = inTransaction(db, () => lifecycle.expireDue());
      if (count > 0) log.info("payments expired", { count });
    } finally {
      expiryRounds++;
    }
  };
  const abort = new AbortController();
  const loops = Promise.all([
    chainSide.run(abort.signal),
    // Time-driven work that needs no chain, so it runs even while the RPC is down.
    runEvery("expiry", 1_000, expirePayments, { log, signal: abort.signal }),
    runEvery("purge", 60_000, () => retention.purge(abort.signal), { log, signal: abort.signal }),
    webhookWorker.run(abort.signal),
    // Other replicas write events too (PostgreSQL): open streams look for them every second.
    config.databaseUrl &&
      runEvery("event streams", 1_000, () => eventFeed.open() > 0 && eventFeed.notify(), { log, signal: abort.signal }),
  ]);

  return {
    url,
    db,
    routes: app.routes.map(({ method, path }) => ({ method, path })),
    activity() {
      const webhooks = webhookWorker.activity();
      return {
        expiryRounds,
        webhookRounds: webhooks.rounds,
        webhookSending: webhooks.sending,
        redeemerRounds: crossChain?.redeemer.rounds() ?? 0,
        eventStreams: eventFeed.open(),
        recovererRounds: recoverer.rounds(),
      };
    },
    async stop() {
      abort.abort();
      // Scrapes end first: they read the database the shutdown is about to close.
      await metricsServer?.stop(true);
      // Open event streams would hold app.stop() until the deadline: they end now, cleanly.
      eventFeed.closeAll();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<"late">(
        (resolve) => (timer = setTimeout(() => resolve("late"), SHUTDOWN_DEADLINE_MS)),
      );
      const outcome = await Promise.race([Promise.all([app.stop(), loops]), deadline]);
      clearTimeout(timer);
      // A loop still stuck past the deadline (in an RPC call, say) then fails on the closed database;
      // aborted, it ends there.
      if (outcome === "late")
        log.warn("shutdown deadline reached; stopping with work still in flight", {
          deadline_ms: SHUTDOWN_DEADLINE_MS,
        });
      db.close();
      releaseLock();
    },
  };

  /** The listener of /metrics alone (STABLEGATE_METRICS_ADDR), when it has one. */
  async function listenForMetrics() {
    const listen = config.metrics?.listen;
    if (!config.metrics || !listen) return null;
    try {
      return serveMetrics(metrics, config.metrics, listen, log);
    } catch (error) {
      await app.stop();
      const variable = "STABLEGATE_METRICS_ADDR";
      abandon(listenError(error, listen.host, listen.port, { host: variable, port: variable }));
    }
  }
}
