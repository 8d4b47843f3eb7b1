import { openStore, storeLocationFrom } from "../../src/db/open.ts";

/**
 * An Idempotency-Key claimed by a request still in flight, written into the server's store (its `env`) as
 * the first request's claim is: the next request with the key then gets 409 every time, without
 * racing two requests for it.
 */
export function claimIdempotencyKey(
  env: Record<string, string>,
  accountId: string,
  key: string,
  now = Date.now(),
): void {
  const db = openStore(storeLocationFrom(env));
  try {
    db.query(
      "INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (?, ?, 'in flight', ?)",
    ).run(accountId, key, now);
  } finally {
    db.close();
  }
}
