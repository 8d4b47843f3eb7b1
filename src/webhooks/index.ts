import type { Events } from "../events/index.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import { createDeliveriesService } from "./deliveries.ts";
import { createDeliveryStore } from "./delivery-store.ts";
import { createWebhookEndpointsService } from "./endpoints.ts";
import { WEBHOOK_LIMITS } from "./routes.ts";
import { createWebhookStore } from "./store.ts";
import type { Resolver } from "./url-guard.ts";
import { createWebhookWorker } from "./worker.ts";

/** Webhooks' slice of the configuration. */
export interface WebhooksConfig {
  /** STABLEGATE_WEBHOOK_ALLOW_PRIVATE: http URLs and private addresses allowed, for development. */
  webhookAllowPrivate: boolean;
}

/** What tests change; a server started from the command line takes the defaults. */
export interface WebhookOptions {
  /** DNS for webhook URL checks. */
  resolve?: Resolver;
  /** Delivery timing, shortened by tests. */
  webhookTimeoutMs?: number;
  webhookSchedule?: readonly number[];
  /** Limits on webhook test and retry calls, raised by tests that send hundreds. */
  webhookLimits?: typeof WEBHOOK_LIMITS;
}

/**
 * Webhook sends still in flight this long after SIGTERM are abandoned unrecorded and are due
 * again after restart: the whole shutdown keeps to SHUTDOWN_DEADLINE_MS (src/server.ts).
 */
const SEND_GRACE_MS = 5_000;

/**
 * Webhooks: the endpoints' service, the deliveries' service and the worker that sends them,
 * woken whenever an event is written.
 */
export function createWebhooks(
  w: Plumbing & {
    config: WebhooksConfig;
    events: Pick<Events, "store" | "written" | "onWritten">;
    options?: WebhookOptions;
    /** Counts a failed attempt (the metrics). */
    onFailedAttempt: (endpointId: string) => void;
    /** In the transaction that disables an endpoint (410 Gone): its users are emailed. */
    onEndpointDisabled?: (endpoint: { id: string; account_id: string; url: string }, now: number) => Promise<void>;
  },
) {
  const { db, clock, ids, log, config, options = {} } = w;
  if (config.webhookAllowPrivate) {
    log.warn(
      "STABLEGATE_WEBHOOK_ALLOW_PRIVATE is on: webhook URLs may be http and point at private addresses; " +
        "never use this in production",
    );
  }
  const endpoints = createWebhookStore(db);
  const deliveries = createDeliveryStore(db);
  const worker = createWebhookWorker({
    store: deliveries,
    claimer: w.replica,
    groupCommit: w.groupCommit,
    clock,
    log,
    allowPrivate: config.webhookAllowPrivate,
    resolve: options.resolve,
    timeoutMs: options.webhookTimeoutMs,
    schedule: options.webhookSchedule,
    shutdownGraceMs: SEND_GRACE_MS,
    onFailedAttempt: w.onFailedAttempt,
    onEndpointDisabled: w.onEndpointDisabled,
  });
  w.events.onWritten(worker.wake);
  return {
    endpoints: createWebhookEndpointsService({
      store: endpoints,
      clock,
      ids,
      log,
      allowPrivate: config.webhookAllowPrivate,
      resolve: options.resolve,
      onDeleted: (endpointId, now) => deliveries.cancelForEndpoint(endpointId, now),
    }),
    deliveries: createDeliveriesService({
      deliveries,
      endpoints,
      events: w.events.store,
      clock,
      ids,
      wake: w.events.written,
    }),
    limits: options.webhookLimits ?? WEBHOOK_LIMITS,
    /** What the metrics count and data retention purges. */
    stores: { endpoints, deliveries },
    run: worker.run,
    /** Rounds the worker has completed and sends in flight, so tests know it has looked. */
    activity() {
      const { rounds, sending } = worker.activity();
      return { webhookRounds: rounds, webhookSending: sending };
    },
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
