import { AuthError } from "../lib/errors.ts";
import { bearerMatches } from "./metrics-routes.ts";

/** What anyone may learn from /readyz: whether to send this replica traffic, and nothing else. */
export type ReadyStatus = "ready" | "not_ready";

/**
 * Who may see /readyz's details (the relayer's address and gas on every chain, the last RPC
 * errors, the leases): whoever sends the metrics token. No Authorization header: the status only.
 * A header with anything else is refused (401), so a misconfigured monitor finds out instead of
 * silently getting less; with no token configured there is nothing that unlocks them.
 */
export function readinessAccess(token: string | null, header: string | null): "status" | "details" {
  if (header === null) return "status";
  if (token === null)
    throw new AuthError(
      "readiness details are not served over HTTP on this server: STABLEGATE_METRICS_TOKEN is not set",
    );
  if (!bearerMatches(header, token))
    throw new AuthError("readiness details need the metrics token (Authorization: Bearer <token>)");
  return "details";
}
