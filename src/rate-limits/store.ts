import { type Db, type Sql, sql, sqlFor } from "../db/engine.ts";

/**
 * SQL of the token buckets kept in the store, so that every replica on one PostgreSQL database
 * draws on the same ones (see createSharedRateLimiter). One statement per request refills the
 * bucket, takes a token if there is one, and says whether it did; the row is locked while it
 * does, so concurrent requests never both take the last token.
 */
export function createRateLimitStore(db: Db) {
  const least = (a: Sql, b: Sql) => sqlFor(db, sql`min(${a}, ${b})`, sql`least(${a}, ${b})`);

  return {
    /** Takes a token from `key`'s bucket if it holds one; what is left either way. */
    take: async (
      key: string,
      burst: number,
      perSecond: number,
      now: number,
    ): Promise<{ allowed: boolean; tokens: number }> => {
      // What the bucket holds now: what it had, plus what came back since, up to the burst.
      const refilled = least(
        sql`CAST(${burst} AS DOUBLE PRECISION)`,
        sql`rate_limits.tokens
            + (CAST(${now} AS BIGINT) - rate_limits.at) * CAST(${perSecond} AS DOUBLE PRECISION) / 1000.0`,
      );
      const row = (await db.get<{ allowed: number; tokens: number }>(
        sql`INSERT INTO rate_limits (key, tokens, allowed, at)
            VALUES (${key}, CAST(${burst} AS DOUBLE PRECISION) - 1, 1, ${now})
             ON CONFLICT (key) DO UPDATE SET
               allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
               tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
               at = ${now}
             RETURNING allowed, tokens`,
      ))!;
      return { allowed: row.allowed === 1, tokens: row.tokens };
    },
    /** Deletes up to `limit` buckets last used before `before`. */
    purgeIdle: (before: number, limit: number): Promise<number> =>
      db.run(
        sql`DELETE FROM rate_limits WHERE key IN (SELECT key FROM rate_limits WHERE at < ${before}
            ORDER BY at LIMIT ${limit})`,
      ),
  };
}

export type RateLimitStore = ReturnType<typeof createRateLimitStore>;
