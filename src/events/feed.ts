import { TooManyRequestsError, UnavailableError } from "../lib/errors.ts";

/** Open event streams an account may hold at once: a developer's `listen` or two, and a dashboard. */
export const MAX_STREAMS_PER_ACCOUNT = 5;

/** A comment line every so often, so proxies and load balancers keep an idle stream open. */
export const HEARTBEAT_MS = 15_000;

export type EventFeed = ReturnType<typeof createEventFeed>;

/**
 * Who follows an account's events live: streams subscribe here and are woken when an event is
 * written, instead of each polling the database. `notify` runs the wake-ups on a later turn of
 * the event loop, so they read after the writing transaction has committed (all transactions
 * here are synchronous), never a row that may yet roll back.
 */
export function createEventFeed(options: { heartbeatMs?: number } = {}) {
  const followers = new Map<string, Set<() => void>>(); // account id -> wake-ups
  const closers = new Set<() => void>();
  let closed = false;
  let pending = false;

  return {
    /** How often an idle stream sends a comment line (tests shorten it). */
    heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,

    /** An event was written: wake every stream once the current transaction is over. */
    notify(): void {
      if (pending || closed) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        for (const wakes of followers.values()) for (const wake of wakes) wake();
      });
    },

    /**
     * Follows `accountId`: `wake` runs after each write, `close` once when the server shuts down.
     * Returns the way to stop following. Refused beyond MAX_STREAMS_PER_ACCOUNT open streams.
     */
    follow(accountId: string, wake: () => void, close: () => void): () => void {
      if (closed) throw new UnavailableError("the server is shutting down", 5);
      const wakes = followers.get(accountId) ?? new Set();
      if (wakes.size >= MAX_STREAMS_PER_ACCOUNT)
        throw new TooManyRequestsError(
          `at most ${MAX_STREAMS_PER_ACCOUNT} event streams may be open per account; close one first`,
          5,
        );
      wakes.add(wake);
      followers.set(accountId, wakes);
      closers.add(close);
      return () => {
        wakes.delete(wake);
        if (wakes.size === 0) followers.delete(accountId);
        closers.delete(close);
      };
    },

    /** Streams open now, so tests can see that a closed connection left nothing behind. */
    open: (): number => closers.size,

    /** Server shutdown: every stream ends, and none may open. */
    closeAll(): void {
      closed = true;
      for (const close of [...closers]) close();
    },
  };
}
