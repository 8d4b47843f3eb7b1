import { type Db, sqlFor } from "../db/engine.ts";

/**
 * SQL of the token buckets kept in the store, so that every replica on one PostgreSQL database
 * draws on the same ones (see createSharedRateLimiter). One statement per request refills the
 * bucket, takes a token if there is one, and says whether it did; the row is locked while it
 * does, so concurrent requests never both take the last token.
 */
export function createRateLimitStore(db: Db) {
  const least = (a: string, b: string) => sqlFor(db, `min(${a}, ${b})`, `least(${a}, ${b})`);
  // What the bucket holds now: what it had, plus what came back since, up to the burst.
  const refilled = least(
    "CAST(?2 AS DOUBLE PRECISION)",
    "rate_limits.tokens + (CAST(?4 AS BIGINT) - rate_limits.at) * CAST(?3 AS DOUBLE PRECISION) / 1000.0",
  );
  const take = db.query<{ allowed: number; tokens: number }, [string, number, number, number]>(
    `INSERT INTO rate_limits (key, tokens, allowed, at) VALUES (?1, CAST(?2 AS DOUBLE PRECISION) - 1, 1, ?4)
     ON CONFLICT (key) DO UPDATE SET
       allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
       tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
       at = ?4
     RETURNING allowed, tokens`,
  );
  const purgeIdle = db.query(
    "DELETE FROM rate_limits WHERE key IN (SELECT key FROM rate_limits WHERE at < ? ORDER BY at LIMIT ?)",
  );

  return {
    /** Takes a token from `key`'s bucket if it holds one; what is left either way. */
    take: (key: string, burst: number, perSecond: number, now: number): { allowed: boolean; tokens: number } => {
      const row = take.get(key, burst, perSecond, now)!;
      return { allowed: row.allowed === 1, tokens: row.tokens };
    },
    /** Deletes up to `limit` buckets last used before `before`. */
    purgeIdle: (before: number, limit: number): number => purgeIdle.run(before, limit).changes,
  };
}

export type RateLimitStore = ReturnType<typeof createRateLimitStore>;
