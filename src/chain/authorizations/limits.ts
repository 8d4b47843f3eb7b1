import { isoMillis } from "../../lib/clock.ts";
import { TooManyRequestsError } from "../../lib/errors.ts";
import type { AuthorizationStore } from "./store.ts";

/**
 * How many authorizations the relayer accepts, and so pays gas for. Counted from the stored
 * records (every replica on one database sees the same counts, and a restart forgets nothing);
 * only accepted ones count: a refusal costs no gas. An honest payer signs one per payment.
 */
export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;
/** Per payment in an hour: a payer whose first one failed (say, spent elsewhere) may try again twice. */
export const AUTHORIZATIONS_PER_PAYMENT_PER_HOUR = 3;
/**
 * Per client (its address, src/http/client-address.ts, or the payer's) in an hour, across all
 * payments. Not for the facilitator: there the asker is the merchant's own server, with its API
 * key, settling what its customers pay it, and an agent buying many calls is one payer; the
 * account's day limit bounds it.
 */
export const AUTHORIZATIONS_PER_CLIENT_PER_HOUR = 10;
/** Per account in a day: far above a shop's day, far below what would drain a relayer. */
export const AUTHORIZATIONS_PER_ACCOUNT_PER_DAY = 2_000;

export interface AuthorizationLimits {
  perPaymentPerHour: number;
  perClientPerHour: number;
  perAccountPerDay: number;
}

export const AUTHORIZATION_LIMITS: AuthorizationLimits = {
  perPaymentPerHour: AUTHORIZATIONS_PER_PAYMENT_PER_HOUR,
  perClientPerHour: AUTHORIZATIONS_PER_CLIENT_PER_HOUR,
  perAccountPerDay: AUTHORIZATIONS_PER_ACCOUNT_PER_DAY,
};

/** Refuses with 429 (and Retry-After) an authorization a limit would pass; changes nothing. */
export async function checkAuthorizationLimits(
  store: AuthorizationStore,
  ask: { paymentId: string | null; client: string; accountId: string; source: string; now: number },
  limits: AuthorizationLimits = AUTHORIZATION_LIMITS,
): Promise<void> {
  const { now } = ask;
  if (ask.paymentId !== null) {
    const { n, oldest } = await store.countForPaymentSince(ask.paymentId, now - HOUR_MS);
    if (n >= limits.perPaymentPerHour) {
      // The oldest counted leaving the hour brings the count under the limit again.
      const until = (oldest ?? now) + HOUR_MS;
      throw tooMany(
        `This payment has had ${n} signed payments in the last hour, the most allowed; ` +
          `try again after ${isoMillis(until).slice(11, 16)} UTC, or pay with a plain transfer`,
        until - now,
      );
    }
  }
  const byClient = ask.source === "facilitator" ? 0 : await store.countForClientSince(ask.client, now - HOUR_MS);
  if (byClient >= limits.perClientPerHour)
    throw tooMany(
      `You have sent ${byClient} signed payments in the last hour, the most allowed; ` +
        "try again later, or pay with a plain transfer",
      HOUR_MS,
    );
  const byAccount = await store.countForAccountSince(ask.accountId, now - DAY_MS);
  if (byAccount >= limits.perAccountPerDay)
    throw tooMany(
      "This merchant has taken as many signed payments today as it may; pay with a plain transfer instead",
      DAY_MS,
    );
}

const tooMany = (message: string, waitMs: number) =>
  new TooManyRequestsError(message, Math.max(1, Math.ceil(waitMs / 1000)));
