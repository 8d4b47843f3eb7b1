import type { Db } from "../db/index.ts";
import type { Clock } from "../lib/clock.ts";
import { ConflictError, DatabaseUnavailableError, UnprocessableError, ValidationError } from "../lib/errors.ts";
import { sha256Hex } from "../lib/secrets.ts";
import { createIdempotencyStore } from "./store.ts";

/**
 * Stripe-style idempotency keys, scoped to the account and kept for 24 hours. The first request
 * claims the key; it is completed with the response, or released when it failed, so a retry
 * can succeed. A replay returns the stored response; the same key with another body is 422;
 * the same key while the first request is still running is 409.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/** A claim older than this belongs to a request that died mid-flight (kill -9); retake it. */
const STALE_CLAIM_MS = 60_000;

export interface StoredResponse {
  status: number;
  body: string;
  replayed: boolean;
}

export type Idempotency = ReturnType<typeof createIdempotency>;

export function createIdempotency(db: Db, clock: Clock) {
  const store = createIdempotencyStore(db);

  /**
   * Claims the key at `now` (the request's arrival), or answers with what an earlier request with
   * it decided. The claim is one conditional statement (IdempotencyStore.claim), so the database
   * decides which of requests racing for a key takes it, whichever replica they reached. One that
   * lost reads the row it lost to; should that row be released or lapse in between, it claims again.
   */
  async function begin(accountId: string, key: string, hash: string, now: number): Promise<StoredResponse | null> {
    const free = { expiredAt: now - IDEMPOTENCY_TTL_MS, abandonedAt: now - STALE_CLAIM_MS };
    for (let round = 0; round < 3; round++) {
      if (await store.claim(accountId, key, hash, now, free)) return null;
      const row = await store.find(accountId, key);
      if (!row || row.created_at <= free.expiredAt) continue;
      if (row.status_code !== null) {
        if (row.request_hash !== hash) {
          throw new UnprocessableError("this Idempotency-Key was already used with a different request body");
        }
        return { status: row.status_code, body: row.response_body ?? "", replayed: true };
      }
      if (row.created_at > free.abandonedAt) break;
    }
    throw new ConflictError("a request with this Idempotency-Key is still in progress; retry shortly");
  }

  /** Tries the release every second until it succeeds or the claim would have lapsed anyway. */
  function releaseWhenBack(accountId: string, key: string, claimedAt: number): void {
    const until = Date.now() + STALE_CLAIM_MS;
    void (async () => {
      while (Date.now() < until) {
        try {
          return await store.release(accountId, key, claimedAt);
        } catch {
          await Bun.sleep(1_000);
        }
      }
    })();
  }

  return {
    /**
     * Runs `work` at most once per (account, key, body). `work` returns the status and JSON
     * body to store; `commit` writes them, and should run in the same transaction as the
     * work's own writes so a crash cannot leave one without the other.
     */
    async run(
      accountId: string,
      key: string | null,
      request: unknown,
      work: (
        commit: (status: number, body: string) => Promise<void>,
      ) => Promise<{ status: number; body: string }> | { status: number; body: string },
    ): Promise<StoredResponse> {
      if (key === null) {
        const result = await work(async () => {});
        return { ...result, replayed: false };
      }
      validateKey(key);
      const claimedAt = clock.now();
      let replay: StoredResponse | null;
      try {
        replay = await begin(accountId, key, sha256Hex(canonicalJson(request)), claimedAt);
      } catch (error) {
        // The claim may have landed after its caller stopped waiting: freed as a failed request's is.
        if (error instanceof DatabaseUnavailableError) releaseWhenBack(accountId, key, claimedAt);
        throw error;
      }
      if (replay) return replay;
      try {
        const result = await work((status, body) => store.complete(accountId, key, status, body));
        return { ...result, replayed: false };
      } catch (error) {
        // Nothing was stored for a rejected or failed request: the key stays free for a retry. With
        // the database unavailable the release waits for it, after the caller has its 503: a retry
        // once the database is back finds the key free (or, had the commit landed after all, the
        // stored response) rather than "in progress" until the claim lapses.
        if (error instanceof DatabaseUnavailableError) releaseWhenBack(accountId, key, claimedAt);
        else await store.release(accountId, key, claimedAt);
        throw error;
      }
    },
    /** Forgets up to `limit` keys older than 24 hours; returns how many. */
    purgeExpired: (limit: number) => store.purgeBefore(clock.now() - IDEMPOTENCY_TTL_MS, limit),
  };
}

function validateKey(key: string): void {
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw new ValidationError("Idempotency-Key must be 1 to 255 printable ASCII characters");
  }
}

/** JSON with sorted object keys, so a retried body that only reorders fields still matches. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
