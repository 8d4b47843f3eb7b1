import type { ChainSide } from "../chain/index.ts";
import type { EventStore } from "../events/store.ts";
import type { Idempotency } from "../idempotency/index.ts";
import { hostPort, listenError } from "../lib/listen.ts";
import { runEvery } from "../lib/loop.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import type { Payments } from "../payments/index.ts";
import type { Webhooks } from "../webhooks/index.ts";
import { createMetrics } from "./metrics.ts";
import { type MetricsConfig, serveMetrics } from "./metrics-routes.ts";
import { createRetention } from "./retention.ts";

/** Operations' slice of the configuration. */
export interface OpsConfig {
  /** GET /metrics (Prometheus); null when off. */
  metrics: MetricsConfig | null;
  chain: { name: string };
}

/**
 * What an operator watches and what keeps the database small: the Prometheus figures, read at
 * scrape time from the other capabilities, their listener of its own when STABLEGATE_METRICS_ADDR
 * names one, and data retention's purge every minute.
 */
export function createOps(
  w: Pick<Plumbing, "clock" | "log"> & {
    config: OpsConfig;
    payments: Pick<Payments, "store">;
    webhooks: Pick<Webhooks, "stores">;
    chainSide: Pick<ChainSide, "chain" | "bridging" | "leases">;
    events: { store: EventStore };
    idempotency: Idempotency;
    /** The rate limits' buckets, when the store keeps them (PostgreSQL). */
    rateLimits: { store: { purgeIdle(before: number, limit: number): Promise<number> } | null };
  },
) {
  const { config, clock, log, payments, webhooks, chainSide } = w;
  const metrics = createMetrics({
    paymentsByStatus: payments.store.countByStatus,
    settlementChain: config.chain.name,
    unsweptPayments: payments.store.countUnswept,
    chains: chainSide.chain.api.chains,
    bridging: async () => (await chainSide.bridging?.status()) ?? [],
    pendingDeliveries: webhooks.stores.deliveries.countPending,
    leases: chainSide.leases,
  });
  const retention = createRetention({
    events: w.events.store,
    deliveries: webhooks.stores.deliveries,
    endpoints: webhooks.stores.endpoints,
    idempotency: w.idempotency,
    rateLimits: w.rateLimits.store ?? undefined,
    clock,
    log,
  });
  return {
    metrics,
    /**
     * Opens the listener of /metrics alone (STABLEGATE_METRICS_ADDR), when it has one; null
     * otherwise. A port that cannot be bound throws an error naming the variable.
     */
    listen() {
      const listen = config.metrics?.listen;
      if (!config.metrics || !listen) return null;
      try {
        return serveMetrics(metrics, config.metrics, listen, log);
      } catch (error) {
        const variable = "STABLEGATE_METRICS_ADDR";
        throw listenError(error, listen.host, listen.port, { host: variable, port: variable });
      }
    },
    /** Logs where the figures are served, once the server listens. */
    announce() {
      if (!config.metrics) return;
      const { listen, token } = config.metrics;
      log.info("metrics on", {
        address: listen ? hostPort(listen.host, listen.port) : "main port",
        token_required: token !== null,
      });
    },
    /** Data retention's purge, every minute. */
    run: (signal: AbortSignal) => runEvery("purge", 60_000, () => retention.purge(signal), { log, signal }),
  };
}

export type Ops = ReturnType<typeof createOps>;
