import { TooManyRequestsError, UnavailableError } from "../lib/errors.ts";

/** Open event streams an account may hold at once: a developer's `listen` or two, and a dashboard. */
export const MAX_STREAMS_PER_ACCOUNT = 5;

/**
 * Open event streams one API key may hold at once, so a key that leaks (or a client that
 * reconnects without closing) cannot take every one of its account's places.
 */
export const MAX_STREAMS_PER_KEY = 2;

/** A comment line every so often, so proxies and load balancers keep an idle stream open. */
export const HEARTBEAT_MS = 15_000;

export type EventFeed = ReturnType<typeof createEventFeed>;

/**
 * Who follows an account's events live: streams subscribe here and are woken when an event is
 * written, instead of each polling the database. `notify` is called once the writing transaction
 * has ended (events.written waits for it) and runs the wake-ups on a later turn of the event
 * loop, so they never read a row that may yet roll back.
 */
export function createEventFeed(options: { heartbeatMs?: number } = {}) {
  const followers = new Map<string, Set<() => void>>(); // account id -> wake-ups
  const perKey = new Map<string, number>(); // key id -> open streams
  const closers = new Set<() => void>();
  let closed = false;
  let pending = false;

  return {
    /** How often an idle stream sends a comment line (tests shorten it). */
    heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,

    /** An event was written and its transaction is over: wake every stream. */
    notify(): void {
      if (pending || closed) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        for (const wakes of followers.values()) for (const wake of wakes) wake();
      });
    },

    /**
     * Follows `accountId` for a stream opened with the key `keyId`: `wake` runs after each write,
     * `close` once when the server shuts down. Returns the way to stop following (once is enough;
     * more are ignored). Refused beyond MAX_STREAMS_PER_KEY open streams of the key and
     * MAX_STREAMS_PER_ACCOUNT of the account.
     */
    follow(accountId: string, keyId: string, wake: () => void, close: () => void): () => void {
      if (closed) throw new UnavailableError("the server is shutting down", 5);
      const wakes = followers.get(accountId) ?? new Set();
      const ofKey = perKey.get(keyId) ?? 0;
      if (ofKey >= MAX_STREAMS_PER_KEY)
        throw new TooManyRequestsError(
          `at most ${MAX_STREAMS_PER_KEY} event streams may be open per API key; close one first`,
          5,
        );
      if (wakes.size >= MAX_STREAMS_PER_ACCOUNT)
        throw new TooManyRequestsError(
          `at most ${MAX_STREAMS_PER_ACCOUNT} event streams may be open per account; close one first`,
          5,
        );
      wakes.add(wake);
      followers.set(accountId, wakes);
      perKey.set(keyId, ofKey + 1);
      closers.add(close);
      let following = true;
      return () => {
        if (!following) return;
        following = false;
        wakes.delete(wake);
        if (wakes.size === 0) followers.delete(accountId);
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
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
