import { Database } from "bun:sqlite";
import { join } from "node:path";

/**
 * An Idempotency-Key claimed by a request still in flight, written into the server's database as
 * the first request's claim is: the next request with the key then gets 409 every time, without
 * racing two requests for it.
 */
export function claimIdempotencyKey(dataDir: string, accountId: string, key: string, now = Date.now()): void {
  const db = new Database(join(dataDir, "stablegate.db"));
  try {
    db.run("PRAGMA busy_timeout = 5000");
    db.query(
      "INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (?, ?, 'in flight', ?)",
    ).run(accountId, key, now);
  } finally {
    db.close();
  }
}
