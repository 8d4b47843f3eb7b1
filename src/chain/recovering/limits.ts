import type { Account } from "../../accounts/service.ts";
import { isoMillis } from "../../lib/clock.ts";
import { TooManyRequestsError } from "../../lib/errors.ts";
import type { RecoveryStore } from "./store.ts";

/**
 * Every recovery is a transaction the relayer pays for, asked by a merchant for a token the
 * merchant names; these bound how often. A mistaken transfer is rare, so the bounds stay far
 * above what an honest account needs, and every request counts, whatever its outcome.
 */

/** The window both limits count in; one request per payment, chain and token (or native coin) in it. */
export const RECOVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Requests one account may make in the window, across all its payments and chains. */
export const RECOVERIES_PER_ACCOUNT = 10;

/** Refuses with 429 (and Retry-After) a request either limit would pass; changes nothing. */
export async function checkRecoveryLimits(
  store: RecoveryStore,
  ask: { account: Account; paymentId: string; chainId: number; chainName: string; token: string | null; now: number },
): Promise<void> {
  const since = ask.now - RECOVERY_WINDOW_MS;
  const latest = await store.latestFor(ask.paymentId, ask.chainId, ask.token, since);
  if (latest !== null) {
    const what = ask.token ? `token ${ask.token}` : "the native coin";
    throw tooMany(
      `a recovery of ${what} on ${ask.chainName} was asked for this payment at ${isoMillis(latest)}; ` +
        `the same token may be recovered once in 24 hours, next from ${isoMillis(latest + RECOVERY_WINDOW_MS)}`,
      latest + RECOVERY_WINDOW_MS - ask.now,
    );
  }
  const asked = await store.askedByAccountSince(ask.account.id, since);
  if (asked.length >= RECOVERIES_PER_ACCOUNT) {
    // The request that must leave the window before the count is under the limit again.
    const until = asked[asked.length - RECOVERIES_PER_ACCOUNT]! + RECOVERY_WINDOW_MS;
    throw tooMany(
      `this account has asked for ${asked.length} recoveries in the last 24 hours, the most allowed is ` +
        `${RECOVERIES_PER_ACCOUNT}; the next may be asked from ${isoMillis(until)}`,
      until - ask.now,
    );
  }
}

const tooMany = (message: string, waitMs: number) =>
  new TooManyRequestsError(message, Math.max(1, Math.ceil(waitMs / 1000)));
