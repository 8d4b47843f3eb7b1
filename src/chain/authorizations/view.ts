import type { AuthorizationRecord } from "./types.ts";

/**
 * An authorization as the payer's page sees it: what happened to what the page itself sent, and
 * nothing about the payer beyond it.
 */
export function publicAuthorizationView(record: AuthorizationRecord) {
  return {
    id: record.id,
    status: record.status,
    tx_hash: record.tx_hash,
    error: record.failure?.message ?? null,
  };
}

export type PublicAuthorizationView = ReturnType<typeof publicAuthorizationView>;
