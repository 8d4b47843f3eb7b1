/**
 * What the dashboard's forms answer when there is nothing to act on or a service refused: the
 * account's "not found" page, and a refusal as a notice and a status for the page to show.
 */
import { statusOf } from "../http/errors.ts";
import { ConflictError, DomainError, NotFoundError } from "../lib/errors.ts";
import type { Notice } from "./admin-page.ts";
import type { DashboardSession, NavKey } from "./kit.ts";
import { notFoundPage as notFound } from "./layout.ts";

/** The 404 page of an id that is not the signed-in account's (or no longer there). */
export const notFoundPage = (session: DashboardSession, nav: NavKey, back: { href: string; label: string }) =>
  notFound(session, { nav, title: "Not found", message: "There is nothing with this id in your account.", back });

/** A service's refusal as a notice and a status; undefined for an unknown id (the caller's 404). */
export function refusal(error: unknown): { notice: Notice; status: number; retryAfter?: string } | undefined {
  if (error instanceof NotFoundError) return undefined;
  if (!(error instanceof DomainError)) throw error;
  // The idempotency layer's words are about API headers; a dashboard user double-clicked.
  if (error instanceof ConflictError)
    return {
      notice: {
        tone: "info",
        text: "This form is still being submitted. Reload the page in a moment to see the result.",
      },
      status: statusOf(error),
    };
  const wait = error.retryAfterSeconds;
  return {
    notice: { tone: "bad", text: wait === undefined ? error.message : `${error.message} (in about ${wait} s)` },
    status: statusOf(error),
    retryAfter: wait === undefined ? undefined : String(wait),
  };
}
