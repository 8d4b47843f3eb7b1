import type { GroupCommit } from "../db/group-commit.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { runEvery } from "../lib/loop.ts";
import { createWaker } from "../lib/sleep.ts";
import type { DeliveryStore, DueDelivery } from "./delivery-store.ts";
import { nextDelayMs, parseRetryAfter, RETRY_SCHEDULE_MS } from "./schedule.ts";
import { sendWebhook } from "./sender.ts";
import { signatureHeaders } from "./signature.ts";
import type { Resolver } from "./url-guard.ts";

export interface WebhookWorkerDeps {
  store: DeliveryStore;
  /** Whose claims this worker's are: the replica, the same across its restarts (src/leases/lease.ts). */
  claimer: string;
  /** Attempt records share transactions under load. */
  groupCommit: GroupCommit;
  clock: Clock;
  log: Logger;
  allowPrivate: boolean;
  resolve?: Resolver;
  timeoutMs?: number;
  schedule?: readonly number[];
  /** Sends in flight at once, in all. */
  concurrency?: number;
  /**
   * Sends in flight to one endpoint (4 by default, as docs/webhooks.md promises), so a hanging
   * receiver cannot take every slot and a small merchant's server is not flooded.
   */
  perEndpoint?: number;
  /** Sends in flight for one account, so one merchant's receivers cannot hold up the others. */
  perAccount?: number;
  pollMs?: number;
  /** At shutdown, how long sends in flight may take to finish before they are abandoned. */
  shutdownGraceMs?: number;
  /** Runs in the transaction that disables an endpoint (it answered 410 Gone): its users are emailed. */
  onEndpointDisabled?: (endpoint: { id: string; account_id: string; url: string }, now: number) => Promise<void>;
  /** Told of every attempt that did not succeed, once it is recorded (for /metrics). */
  onFailedAttempt?: (endpointId: string) => void;
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;

/** Counts of sends in flight by key, with a cap. */
function createCounter(limit: number) {
  const counts = new Map<string, number>();
  return {
    full: (key: string) => (counts.get(key) ?? 0) >= limit,
    fullKeys: () => [...counts].filter(([, n]) => n >= limit).map(([key]) => key),
    add: (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1),
    remove(key: string) {
      const left = (counts.get(key) ?? 1) - 1;
      if (left > 0) counts.set(key, left);
      else counts.delete(key);
    },
  };
}

/**
 * Delivers pending webhooks. Each due delivery is claimed in the store before it is sent (see
 * DeliveryStore.claimDue), so workers of several replicas on one database never send the same
 * one at once. A claim outlives the send's timeout: a replica that dies mid-send leaves its
 * claims to fall due again after that, or at once when it restarts. Delivery is at least once;
 * receivers de-duplicate on webhook-id.
 */
export function createWebhookWorker(deps: WebhookWorkerDeps) {
  const { store, clock, log, claimer } = deps;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const claimMs = timeoutMs + 15_000;
  const schedule = deps.schedule ?? RETRY_SCHEDULE_MS;
  const concurrency = deps.concurrency ?? 64;
  const pollMs = deps.pollMs ?? 250;
  const sending = new Set<string>(); // delivery ids, for the claims to give back at shutdown
  const endpoints = createCounter(deps.perEndpoint ?? 4);
  const accounts = createCounter(deps.perAccount ?? 32);
  const running = new Set<Promise<void>>();
  const waker = createWaker();
  const abandon = new AbortController();
  let rounds = 0;

  async function deliver(delivery: DueDelivery): Promise<void> {
    const attemptedAt = clock.now();
    const headers = signatureHeaders(
      delivery.secret,
      delivery.event_id,
      Math.floor(attemptedAt / 1000),
      delivery.payload,
    );
    const result = await sendWebhook(delivery.url, headers, delivery.payload, {
      resolve: deps.resolve,
      allowPrivate: deps.allowPrivate,
      timeoutMs,
      signal: abandon.signal,
    });
    // Abandoned at shutdown: no attempt is recorded, so the delivery is due again after restart.
    if (abandon.signal.aborted) return;
    const now = clock.now();
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAfter = result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter, now) : null;
    const delay = ok || gone ? null : nextDelayMs(schedule, delivery.attempts + 1, retryAfter);
    const nextAt = delay === null ? null : now + delay;
    const redirect = result.status !== null && result.status >= 300 && result.status < 400;
    const error =
      result.error ?? (ok ? null : redirect ? `redirect (${result.status}) not followed` : `HTTP ${result.status}`);
    // The send is over before the transaction begins: it holds no network call.
    await deps.groupCommit.run(async () => {
      await store.recordAttempt(
        {
          delivery_id: delivery.id,
          attempted_at: attemptedAt,
          response_status: result.status,
          error,
          duration_ms: result.durationMs,
          next_retry_at: nextAt,
        },
        ok ? "succeeded" : nextAt === null ? "failed" : "pending",
        nextAt,
        now,
      );
      if (gone) {
        await store.disableEndpoint(delivery.endpoint_id, now);
        await deps.onEndpointDisabled?.(
          { id: delivery.endpoint_id, account_id: delivery.account_id, url: delivery.url },
          now,
        );
      }
    });
    if (!ok) deps.onFailedAttempt?.(delivery.endpoint_id);
    if (gone) log.warn("webhook endpoint answered 410 Gone; disabled it", { endpoint_id: delivery.endpoint_id });
    else if (!ok)
      log.info("webhook attempt failed", {
        delivery_id: delivery.id,
        endpoint_id: delivery.endpoint_id,
        status: result.status,
        error,
        next_retry_at: nextAt,
      });
  }

  function start(delivery: DueDelivery): void {
    sending.add(delivery.id);
    endpoints.add(delivery.endpoint_id);
    accounts.add(delivery.account_id);
    const task = deliver(delivery)
      .catch((error) => log.error("webhook delivery crashed", { delivery_id: delivery.id, error }))
      .finally(() => {
        sending.delete(delivery.id);
        endpoints.remove(delivery.endpoint_id);
        accounts.remove(delivery.account_id);
        running.delete(task);
        waker.wake();
      });
    running.add(task);
  }

  /** Claims and starts as many due deliveries as the limits allow; returns how many it started. */
  async function tick(): Promise<number> {
    let started = 0;
    // Endpoints and accounts at their limit are left out of the claim; one that fills up within
    // a claim leaves the rest of its rows unsent (given back at once), so claim again while that happens.
    for (let pass = 0; pass < 4 && running.size < concurrency; pass++) {
      const now = clock.now();
      const due = await store.claimDue(
        now,
        concurrency - running.size,
        { claimer, until: now + claimMs },
        { endpoints: endpoints.fullKeys(), accounts: accounts.fullKeys() },
      );
      const skipped: string[] = [];
      for (const delivery of due) {
        if (endpoints.full(delivery.endpoint_id) || accounts.full(delivery.account_id)) {
          skipped.push(delivery.id);
          continue;
        }
        start(delivery);
        started++;
      }
      if (skipped.length === 0) break;
      await store.release(claimer, now, skipped);
    }
    rounds++;
    return started;
  }

  return {
    tick,
    wake: waker.wake,
    /**
     * Rounds completed and sends in flight, so a test can know the worker has looked before
     * asserting it sent nothing.
     */
    activity: () => ({ rounds, sending: running.size }),
    /** Runs until `signal` aborts, then gives sends in flight a grace period and abandons the rest. */
    async run(signal: AbortSignal): Promise<void> {
      // Claims of this replica's previous process (killed mid-send) are due now, not when they lapse.
      await store.release(claimer, clock.now());
      await runEvery("webhook worker", pollMs, tick, { log, signal, wait: waker.wait });
      const finished = Promise.all([...running]);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        finished,
        new Promise((resolve) => (timer = setTimeout(resolve, deps.shutdownGraceMs ?? 5_000))),
      ]);
      clearTimeout(timer);
      const abandoned = [...sending];
      abandon.abort();
      await finished;
      if (abandoned.length > 0) {
        log.warn("webhook sends abandoned at shutdown; they are due again at once", { count: abandoned.length });
        try {
          // Due now: another replica sends them at once, or this one after its restart.
          await store.release(claimer, clock.now(), abandoned);
        } catch (error) {
          // The store closed first (the shutdown deadline passed): the claims lapse on their own.
          log.warn("webhook claims not given back at shutdown", { error });
        }
      }
    },
  };
}
