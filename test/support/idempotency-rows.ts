import { sql } from "../../src/db/engine.ts";
import { withServerStore } from "./server-store.ts";

/**
 * An Idempotency-Key claimed by a request still in flight, written into the server's store (its `env`) as
 * the first request's claim is: the next request with the key then gets 409 every time, without
 * racing two requests for it.
 */
export async function claimIdempotencyKey(
  env: Record<string, string>,
  accountId: string,
  key: string,
  now = Date.now(),
): Promise<void> {
  await withServerStore(env, (db) =>
    db.run(
      sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at)
           VALUES (${accountId}, ${key}, 'in flight', ${now})`,
    ),
  );
}
