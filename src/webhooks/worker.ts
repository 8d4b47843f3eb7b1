import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { DeliveryStore, DueDelivery } from "./delivery-store.ts";
import { RETRY_SCHEDULE_MS, nextDelayMs, parseRetryAfter } from "./schedule.ts";
import { sendWebhook } from "./sender.ts";
import { signatureHeaders } from "./signature.ts";
import { createWaker } from "../lib/sleep.ts";
import type { Resolver } from "./url-guard.ts";

export interface WebhookWorkerDeps {
  store: DeliveryStore;
  clock: Clock;
  log: Logger;
  allowPrivate: boolean;
  resolve?: Resolver;
  timeoutMs?: number;
  schedule?: readonly number[];
  /** Sends in flight at once, in all. */
  concurrency?: number;
  /** Sends in flight at once to one endpoint, so a hanging receiver cannot take every slot. */
  perEndpoint?: number;
  pollMs?: number;
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;

/**
 * Delivers pending webhooks. Each delivery is locked while it is sent; the lock outlives the
 * send timeout, so after a crash the delivery is simply picked up again (at least once).
 */
export function createWebhookWorker(deps: WebhookWorkerDeps) {
  const { store, clock, log } = deps;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const schedule = deps.schedule ?? RETRY_SCHEDULE_MS;
  const concurrency = deps.concurrency ?? 32;
  const perEndpoint = deps.perEndpoint ?? 4;
  const inFlight = new Map<string, number>(); // endpoint id -> sends in flight
  const running = new Set<Promise<void>>();
  const waker = createWaker();

  async function deliver(delivery: DueDelivery): Promise<void> {
    const attemptedAt = clock.now();
    const headers = signatureHeaders(delivery.secret, delivery.event_id, Math.floor(attemptedAt / 1000), delivery.payload);
    const result = await sendWebhook(delivery.url, headers, delivery.payload, { resolve: deps.resolve, allowPrivate: deps.allowPrivate, timeoutMs });
    const now = clock.now();
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAfter = result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter, now) : null;
    const delay = ok || gone ? null : nextDelayMs(schedule, delivery.attempts + 1, retryAfter);
    const nextAt = delay === null ? null : now + delay;
    const error = result.error ?? (ok ? null : result.status !== null && result.status >= 300 && result.status < 400 ? `redirect (${result.status}) not followed` : `HTTP ${result.status}`);
    store.recordAttempt(
      { delivery_id: delivery.id, attempted_at: attemptedAt, response_status: result.status, error, duration_ms: result.durationMs, next_retry_at: nextAt },
      ok ? "succeeded" : nextAt === null ? "failed" : "pending",
      nextAt,
      now,
    );
    if (gone) {
      store.disableEndpoint(delivery.endpoint_id, now);
      log.warn("webhook endpoint answered 410 Gone; disabled it", { endpoint_id: delivery.endpoint_id });
    } else if (!ok) {
      log.info("webhook attempt failed", { delivery_id: delivery.id, endpoint_id: delivery.endpoint_id, status: result.status, error, next_retry_at: nextAt });
    }
  }

  /** Starts as many due deliveries as the limits allow; returns how many it started. */
  function tick(): number {
    const free = concurrency - running.size;
    if (free <= 0) return 0;
    let started = 0;
    const now = clock.now();
    for (const delivery of store.due(now, free * 4)) {
      if (started >= free) break;
      const busy = inFlight.get(delivery.endpoint_id) ?? 0;
      if (busy >= perEndpoint) continue;
      if (!store.lock(delivery.id, now + timeoutMs * 2 + 5_000)) continue;
      inFlight.set(delivery.endpoint_id, busy + 1);
      const task = deliver(delivery)
        .catch((error) => log.error("webhook delivery crashed", { delivery_id: delivery.id, error }))
        .finally(() => {
          const left = (inFlight.get(delivery.endpoint_id) ?? 1) - 1;
          if (left > 0) inFlight.set(delivery.endpoint_id, left);
          else inFlight.delete(delivery.endpoint_id);
          running.delete(task);
          waker.wake();
        });
      running.add(task);
      started++;
    }
    return started;
  }

  return {
    tick,
    /** Waits for the sends in flight to finish (each is bounded by the timeout). */
    drain: () => Promise.all([...running]),
    wake: waker.wake,
    async run(signal: AbortSignal): Promise<void> {
      const pollMs = deps.pollMs ?? 250;
      while (!signal.aborted) {
        try {
          tick();
        } catch (error) {
          log.error("webhook worker failed", { error });
        }
        await waker.wait(pollMs, signal);
      }
      await Promise.all([...running]);
    },
  };
}
