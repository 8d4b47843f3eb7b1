import { Counter, Gauge, Registry } from "prom-client";
import type { ChainReadiness } from "../chain/watching/readiness.ts";
import { PAYMENT_STATUSES, type PaymentStatus } from "../payments/store.ts";
import { createHttpMetrics } from "./http-metrics.ts";

/** What a scrape reads, each from the store or from what a loop last saw: never an RPC call. */
export interface MetricsSources {
  /** Payments of every account by status (the kept counts, one grouped query). */
  paymentsByStatus(): Promise<Map<PaymentStatus, number>>;
  /** The settlement chain's name, and how many payments hold funds it has still to sweep. */
  settlementChain: string;
  unsweptPayments(): Promise<number>;
  /** Each watched chain as /readyz shows it: head, cursor, relayer gas. */
  chains(): ChainReadiness[];
  /** Open bridges per source chain; empty when cross-chain funding is off. */
  bridging(): Promise<Array<{ chain: string; open: number }>>;
  /** Webhook deliveries still to send. */
  pendingDeliveries(): Promise<number>;
  /** The leases of work one replica at a time does, and whether this replica holds each. */
  leases(): Array<{ name: string; held: boolean }>;
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * The Prometheus registry of one server, on prom-client without its default Node.js metrics
 * (under Bun its event-loop figures read 0). Counters count from the process's start; gauges
 * are read at scrape time.
 */
export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  // prom-client awaits a collect that answers a promise: the scrape waits for the store's figures.
  const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => void | Promise<void>) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        return collect(this);
      },
    });

  gauge("stablegate_payments", "Payments by status, over every account.", ["status"], async (g) => {
    const counts = await sources.paymentsByStatus();
    for (const status of PAYMENT_STATUSES) g.set({ status }, counts.get(status) ?? 0);
  });
  gauge(
    "stablegate_watcher_lag_blocks",
    "Blocks between a chain's head and the last block its watcher scanned (confirmations included).",
    ["chain"],
    (g) => {
      for (const chain of sources.chains())
        if (chain.lag_blocks !== null) g.set({ chain: chain.name }, chain.lag_blocks);
    },
  );
  gauge(
    "stablegate_relayer_gas_balance_wei",
    "The relayer's native balance on each chain, as its loop last read it.",
    ["chain"],
    (g) => {
      for (const chain of sources.chains()) {
        const balance = chain.relayer_gas.balance_wei;
        if (balance !== null) g.set({ chain: chain.name }, Number(balance));
      }
    },
  );
  gauge(
    "stablegate_settlement_queue_depth",
    "Payments holding funds not yet swept to the merchant: waiting, retrying or sent and not mined.",
    ["chain"],
    async (g) => g.set({ chain: sources.settlementChain }, await sources.unsweptPayments()),
  );
  gauge(
    "stablegate_bridging_queue_depth",
    "Open bridges (credited, burned or attested, not minted yet) per source chain.",
    ["chain"],
    async (g) => {
      for (const { chain, open } of await sources.bridging()) g.set({ chain }, open);
    },
  );
  gauge(
    "stablegate_webhook_queue_depth",
    "Webhook deliveries still to send (due or waiting to retry).",
    [],
    async (g) => g.set(await sources.pendingDeliveries()),
  );
  gauge(
    "stablegate_lease_held",
    "1 where this replica holds the lease (chain: the chain side's work), else 0.",
    ["lease"],
    (g) => {
      for (const lease of sources.leases()) g.set({ lease: lease.name }, lease.held ? 1 : 0);
    },
  );
  const webhookFailures = new Counter({
    name: "stablegate_webhook_delivery_failures_total",
    help: "Webhook delivery attempts that did not succeed (no answer, or not 2xx), by endpoint.",
    labelNames: ["endpoint_id"],
    registers,
  });

  return {
    http: createHttpMetrics(registers),
    /** One failed webhook attempt to `endpointId`. */
    webhookFailed: (endpointId: string) => webhookFailures.inc({ endpoint_id: endpointId }),
    contentType: registry.contentType,
    /** The exposition text (format 0.0.4). */
    scrape: () => registry.metrics(),
  };
}
