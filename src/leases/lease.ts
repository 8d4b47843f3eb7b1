import type { Logger } from "../lib/log.ts";
import { sleep } from "../lib/sleep.ts";
import type { LeaseStore } from "./store.ts";

/**
 * The chain side's lease: watchers, settlements, bridging, redemptions and recoveries, on every
 * chain. One lease for all of them, as they share the relayer's key and, on each chain, its nonces.
 */
export const CHAIN_LEASE = "chain";

/** How long a lease lasts unrenewed: a dead holder's work resumes elsewhere within this plus TAKE_EVERY_MS. */
export const LEASE_TTL_MS = 10_000;
/** How often the holder renews (a third of the TTL: two renewals may fail before it lapses). */
const RENEW_EVERY_MS = 3_000;
/** How often a replica without the lease tries to take it. */
const TAKE_EVERY_MS = 2_000;

export interface LeaseStatus {
  name: string;
  held: boolean;
  /** The fencing token of this replica's term while it holds the lease. */
  token: number | null;
  /** Terms this replica has held since it started. */
  terms: number;
}

/** Thrown by `assertHeld` when the lease was lost: what the caller was about to record must not be. */
export class LeaseLostError extends Error {
  constructor(name: string) {
    super(`lease ${name} is no longer held by this replica`);
    this.name = "LeaseLostError";
  }
}

export interface LeaseDeps {
  store: LeaseStore;
  name: string;
  /** This replica, as the leases table names it. */
  holder: string;
  log: Logger;
  /** What only the holder does: from taking the lease until `signal` aborts (lease lost, or server stopping). */
  work: (signal: AbortSignal) => Promise<unknown>;
  ttlMs?: number;
  renewEveryMs?: number;
  takeEveryMs?: number;
}

/**
 * Work that one replica at a time may do, held through a lease with a fencing token: taken
 * when free, renewed while held, and released on a clean stop so another replica takes over at
 * once. Losing it (a renewal refused or failed) aborts the work, and the next term waits for
 * the last one's work to end, so one process never runs two terms at once. Renewal alone
 * cannot stop a paused holder from writing after its lease lapsed: what the work records is
 * fenced with `assertHeld`, in the transaction that records it.
 */
export function createLease(deps: LeaseDeps) {
  const { store, name, holder, log } = deps;
  const ttlMs = deps.ttlMs ?? LEASE_TTL_MS;
  let term: { token: number } | null = null;
  let terms = 0;

  async function hold(token: number, signal: AbortSignal): Promise<void> {
    term = { token };
    terms++;
    log.info("lease taken; starting its work", { lease: name, token });
    const stop = new AbortController();
    const stopNow = () => stop.abort();
    signal.addEventListener("abort", stopNow, { once: true });
    const working = deps
      .work(stop.signal)
      .catch((error) => log.error("leased work failed", { lease: name, error }))
      .finally(() => {
        if (!stop.signal.aborted) log.error("leased work ended by itself; giving the lease up", { lease: name });
        stop.abort();
      });
    try {
      while (!stop.signal.aborted) {
        await sleep(deps.renewEveryMs ?? RENEW_EVERY_MS, stop.signal);
        if (stop.signal.aborted) break;
        let renewed = false;
        try {
          renewed = await store.renew(name, holder, token, ttlMs);
        } catch (error) {
          log.warn("lease renewal failed", { lease: name, error });
        }
        if (!renewed) {
          log.warn("lease lost; stopping its work", { lease: name, token });
          stop.abort();
        }
      }
      await working;
    } finally {
      signal.removeEventListener("abort", stopNow);
      term = null;
      await release(token);
    }
  }

  /** Lets another replica take the lease at once. */
  async function release(token: number): Promise<void> {
    try {
      await store.release(name, holder, token);
    } catch {
      // The database is gone too: the lease lapses on its own.
    }
  }

  return {
    name,
    holder,
    /**
     * Throws LeaseLostError unless this replica holds the lease in its current term. Call it
     * inside the transaction that records what only the holder may do: the check and the write
     * then commit together, or neither does.
     */
    async assertHeld(): Promise<void> {
      if (!term || !(await store.holds(name, holder, term.token))) throw new LeaseLostError(name);
    },
    /** Whether this replica holds the lease now, the token of its term, and how many terms it had. */
    status: (): LeaseStatus => ({ name, held: term !== null, token: term?.token ?? null, terms }),
    /** Takes the lease whenever it is free and works while holding it, until `signal` aborts. */
    async run(signal: AbortSignal): Promise<void> {
      while (!signal.aborted) {
        let token: number | null = null;
        try {
          token = await store.take(name, holder, ttlMs);
        } catch (error) {
          log.warn("lease: could not ask for it", { lease: name, error });
        }
        // Taken while stopping (the answer came after the abort): given back, its work never started.
        if (token !== null && signal.aborted) await release(token);
        else if (token !== null) await hold(token, signal);
        else await sleep(deps.takeEveryMs ?? TAKE_EVERY_MS, signal);
      }
    },
  };
}

export type Lease = ReturnType<typeof createLease>;
