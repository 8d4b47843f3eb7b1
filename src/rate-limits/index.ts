import type { Db } from "../db/index.ts";
import type { Clock } from "../lib/clock.ts";
import { TooManyRequestsError } from "../lib/errors.ts";
import { createRateLimitStore, type RateLimitStore } from "./store.ts";

/** What rate limiting is configured with: on PostgreSQL the buckets are shared (src/config.ts). */
export interface RateLimitsConfig {
  databaseUrl: string | null;
}

/**
 * The server's rate limiter. Replicas on one PostgreSQL database share the buckets, so N of them
 * allow the limit, not N times it. A SQLite store has one server: its buckets stay in memory, which
 * is as global and faster. `store` is what data retention purges; null when the buckets are in memory.
 */
export function createRateLimits(deps: { config: RateLimitsConfig; db: Db; clock: Clock }) {
  const store = deps.config.databaseUrl ? createRateLimitStore(deps.db) : null;
  return { limiter: store ? createSharedRateLimiter(store, deps.clock) : createRateLimiter(deps.clock), store };
}

export type RateLimits = ReturnType<typeof createRateLimits>;

export interface RateLimit {
  /** Requests allowed at once. */
  burst: number;
  /** Requests regained per second. */
  perSecond: number;
  /** What the 429 says; the public endpoints' per-payment wording when absent. */
  message?: string;
}

/**
 * Token buckets keyed by what a request costs us: the public endpoints key them by payment id,
 * which bounds the work (RPC calls, attestation-service calls) anyone holding one id can cause,
 * and stays fair behind a reverse proxy where every client shares one address; webhook `test`
 * and `retry` key them by endpoint id, which bounds what the server can be made to send; payment
 * link pages key them by client (src/http/client-address.ts), so one client cannot close a link
 * for everyone. At most `maxKeys` buckets are kept: full ones are forgotten first, then the
 * least recently used.
 */
export function createRateLimiter(clock: Clock, maxKeys = 50_000): RateLimiter & { readonly size: number } {
  const buckets = new Map<string, { tokens: number; at: number; limit: RateLimit }>();
  const refilled = (bucket: { tokens: number; at: number; limit: RateLimit }, now: number) =>
    Math.min(bucket.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * bucket.limit.perSecond);

  /** Forgets full buckets: they behave exactly like ones never seen. */
  function prune(now: number) {
    for (const [key, bucket] of buckets) if (refilled(bucket, now) >= bucket.limit.burst) buckets.delete(key);
  }

  /** Stores `key`'s bucket as the most recently used, making room first when it is new. */
  function keep(key: string, bucket: { tokens: number; at: number; limit: RateLimit }, now: number) {
    if (!buckets.delete(key) && buckets.size >= maxKeys) {
      prune(now);
      // Every bucket is in use: forgetting the least recently used one only relaxes that key's
      // limit, where keeping it would let memory grow with every new key.
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
    }
    buckets.set(key, bucket);
  }

  return {
    /** Takes one request from `key`'s bucket, or throws 429 with the seconds until the next. */
    async take(key: string, limit: RateLimit): Promise<void> {
      const now = clock.now();
      const bucket = buckets.get(key) ?? { tokens: limit.burst, at: now, limit };
      bucket.tokens = refilled(bucket, now);
      bucket.at = now;
      if (bucket.tokens < 1) {
        keep(key, bucket, now);
        throw refused(limit, bucket.tokens);
      }
      bucket.tokens -= 1;
      keep(key, bucket, now);
    },
    /** How many buckets are kept (never more than `maxKeys`). */
    get size() {
      return buckets.size;
    },
  };
}

/** Takes one request from `key`'s bucket, or throws 429 with the seconds until the next. */
export interface RateLimiter {
  take(key: string, limit: RateLimit): Promise<void>;
}

/** The 429 of a bucket holding `tokens` (fewer than one): Retry-After is when it holds one again. */
export function refused(limit: RateLimit, tokens: number): TooManyRequestsError {
  const wait = Math.max(1, Math.ceil((1 - tokens) / limit.perSecond));
  return new TooManyRequestsError(limit.message ?? "too many requests for this payment; try again shortly", wait);
}

/** Reads served from the database: a checkout polling every few seconds stays far below. */
export const READ_LIMIT: RateLimit = { burst: 120, perSecond: 20 };
/** Calls that reach the chain or the attestation service. */
export const CHAIN_LIMIT: RateLimit = { burst: 20, perSecond: 0.5 };
/**
 * Payments started from payment links' pages by one client (src/http/client-address.ts), across
 * all links: a payer starts one or two, and no one client can fill a link with payments that
 * nobody pays (the link's own cap, LINK_OPEN_PAYMENTS_MAX, bounds what many clients can do).
 */
export const LINK_PAY_LIMIT: RateLimit = {
  burst: 5,
  perSecond: 1 / 120,
  message: "you have started several payments just now; wait a minute or two",
};

/**
 * The same buckets kept in the store: replicas on one PostgreSQL database share them, so N
 * replicas allow the limit, not N times it.
 */
export function createSharedRateLimiter(store: RateLimitStore, clock: Clock): RateLimiter {
  return {
    async take(key: string, limit: RateLimit): Promise<void> {
      const { allowed, tokens } = await store.take(key, limit.burst, limit.perSecond, clock.now());
      if (!allowed) throw refused(limit, tokens);
    },
  };
}
