import { type Db, sql, sqlFor } from "../db/engine.ts";

export interface LeaseRow {
  name: string;
  holder: string;
  token: number;
  /** Until it expires, by the database's clock; 0 or less once it has. */
  remaining_ms: number;
}

/**
 * SQL of leases. Time is the database's clock, never a replica's, so replicas whose clocks
 * disagree still agree on when a lease has expired.
 */
export function createLeaseStore(db: Db) {
  const now = sqlFor(
    db,
    sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`,
    sql`CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)`,
  );

  return {
    /**
     * The lease's new token if the caller now holds it; null while another holds it. A lease
     * nobody holds, or one whose holder let it expire, goes to the caller with the next token; so
     * does the caller's own, taken again by the same replica restarted (its data directory's
     * serve lock means its previous process is gone).
     */
    take: async (name: string, holder: string, ttlMs: number): Promise<number | null> =>
      (
        await db.get<{ token: number }>(
          sql`INSERT INTO leases (name, holder, token, expires_at) VALUES (${name}, ${holder}, 1, ${now} + ${ttlMs})
               ON CONFLICT (name) DO UPDATE
                 SET holder = excluded.holder, token = leases.token + 1, expires_at = excluded.expires_at
                 WHERE leases.expires_at <= ${now} OR leases.holder = excluded.holder
               RETURNING token`,
        )
      )?.token ?? null,
    /**
     * Extends the caller's unexpired lease; false once it is lost. Only an unexpired lease is
     * renewed: one that lapsed was free to take, whether or not someone did.
     */
    renew: async (name: string, holder: string, token: number, ttlMs: number): Promise<boolean> =>
      (await db.run(
        sql`UPDATE leases SET expires_at = ${now} + ${ttlMs}
             WHERE name = ${name} AND holder = ${holder} AND token = ${token} AND expires_at > ${now}`,
      )) === 1,
    /** Lets another replica take the lease at once (a clean shutdown). */
    release: async (name: string, holder: string, token: number): Promise<void> =>
      void (await db.run(
        sql`UPDATE leases SET expires_at = 0 WHERE name = ${name} AND holder = ${holder} AND token = ${token}`,
      )),
    /**
     * Whether the caller still holds the lease with `token`; meant inside the transaction it
     * guards. FOR SHARE: a takeover's UPDATE of the row waits for the transaction that checked
     * it, and a check made after a takeover committed sees the new holder. SQLite has one writer
     * at a time.
     */
    holds: async (name: string, holder: string, token: number): Promise<boolean> =>
      (await db.get<{ held: number }>(
        sqlFor(
          db,
          sql`SELECT 1 AS held FROM leases WHERE name = ${name} AND holder = ${holder} AND token = ${token}
              AND expires_at > ${now}`,
          sql`SELECT 1 AS held FROM leases WHERE name = ${name} AND holder = ${holder} AND token = ${token}
              AND expires_at > ${now} FOR SHARE`,
        ),
      )) !== null,
    all: (): Promise<LeaseRow[]> =>
      db.all<LeaseRow>(sql`SELECT name, holder, token, expires_at - ${now} AS remaining_ms FROM leases ORDER BY name`),
  };
}

export type LeaseStore = ReturnType<typeof createLeaseStore>;
