import type { EventStore } from "../events/store.ts";
import type { Idempotency } from "../idempotency/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { sleep } from "../lib/sleep.ts";
import type { DeliveryStore } from "../webhooks/delivery-store.ts";
import type { WebhookStore } from "../webhooks/store.ts";

/** Events, and webhook deliveries once finished, are kept this long (docs/data-retention.md). */
export const RETENTION_MS = 30 * 24 * 3_600_000;
/** A rate-limit bucket unused this long is full again: every limit refills within minutes. */
const IDLE_BUCKET_MS = 3_600_000;
/** Rows deleted per transaction, so a purge holds the write lock for moments, never long. */
export const PURGE_BATCH = 500;
/** Between two batches: requests and the other loops write in the gap. */
const PAUSE_MS = 10;

export interface RetentionDeps {
  events: EventStore;
  deliveries: DeliveryStore;
  endpoints: WebhookStore;
  idempotency: Idempotency;
  /** The rate limits' buckets, when the store keeps them (PostgreSQL); idle ones are full, and go. */
  rateLimits?: { purgeIdle(before: number, limit: number): Promise<number> };
  clock: Clock;
  log: Logger;
  batchSize?: number;
  /** What happens between two batches; tests look at the database there. */
  pause?: (signal: AbortSignal) => Promise<void>;
}

export type Retention = ReturnType<typeof createRetention>;

/**
 * Deletes what is no longer kept: finished deliveries (with their attempts) and events older
 * than the retention window, deleted endpoints nothing refers to any more, idempotency keys
 * past 24 hours, rate-limit buckets idle for an hour. Payments, their transfers, settlements and
 * burns are never deleted. Order matters: deliveries go first, which frees their events and endpoints.
 */
export function createRetention(deps: RetentionDeps) {
  const { events, deliveries, endpoints, idempotency, rateLimits, clock, log } = deps;
  const batch = deps.batchSize ?? PURGE_BATCH;
  const pause = deps.pause ?? ((signal: AbortSignal) => sleep(PAUSE_MS, signal));

  /** Runs one batch after another until one comes back short; returns the rows deleted. */
  async function drain(purgeBatch: () => Promise<number>, signal: AbortSignal): Promise<number> {
    let total = 0;
    while (!signal.aborted) {
      const deleted = await purgeBatch();
      total += deleted;
      if (deleted < batch) break;
      await pause(signal);
    }
    return total;
  }

  return {
    async purge(signal: AbortSignal) {
      const before = clock.now() - RETENTION_MS;
      const purged = {
        webhook_deliveries: await drain(() => deliveries.purgeFinished(before, batch), signal),
        events: await drain(() => events.purgeOlderThan(before, batch), signal),
        webhook_endpoints: await drain(() => endpoints.purgeDeleted(batch), signal),
        idempotency_keys: await drain(() => idempotency.purgeExpired(batch), signal),
        rate_limits: rateLimits
          ? await drain(() => rateLimits.purgeIdle(clock.now() - IDLE_BUCKET_MS, batch), signal)
          : 0,
      };
      if (Object.values(purged).some((n) => n > 0)) log.info("purged", purged);
      return purged;
    },
  };
}
