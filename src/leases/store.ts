import { type Db, sqlFor } from "../db/engine.ts";

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
    "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
    "CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)",
  );
  // A lease nobody holds, or one whose holder let it expire, goes to the caller with the next
  // token; so does the caller's own, taken again by the same replica restarted (its data
  // directory's serve lock means its previous process is gone).
  const take = db.query<{ token: number }, [string, string, number]>(
    `INSERT INTO leases (name, holder, token, expires_at) VALUES (?1, ?2, 1, ${now} + ?3)
     ON CONFLICT (name) DO UPDATE
       SET holder = excluded.holder, token = leases.token + 1, expires_at = excluded.expires_at
       WHERE leases.expires_at <= ${now} OR leases.holder = excluded.holder
     RETURNING token`,
  );
  // Only an unexpired lease is renewed: one that lapsed was free to take, whether or not someone did.
  const renew = db.query(
    `UPDATE leases SET expires_at = ${now} + ?4 WHERE name = ?1 AND holder = ?2 AND token = ?3 AND expires_at > ${now}`,
  );
  const release = db.query("UPDATE leases SET expires_at = 0 WHERE name = ? AND holder = ? AND token = ?");
  // FOR SHARE: a takeover's UPDATE of the row waits for the transaction that checked it, and a
  // check made after a takeover committed sees the new holder. SQLite has one writer at a time.
  const holds = db.query<{ held: number }, [string, string, number]>(
    sqlFor(
      db,
      `SELECT 1 AS held FROM leases WHERE name = ? AND holder = ? AND token = ? AND expires_at > ${now}`,
      `SELECT 1 AS held FROM leases WHERE name = ? AND holder = ? AND token = ? AND expires_at > ${now} FOR SHARE`,
    ),
  );
  const all = db.query<LeaseRow, []>(
    `SELECT name, holder, token, expires_at - ${now} AS remaining_ms FROM leases ORDER BY name`,
  );

  return {
    /** The lease's new token if the caller now holds it; null while another holds it. */
    take: (name: string, holder: string, ttlMs: number): number | null => take.get(name, holder, ttlMs)?.token ?? null,
    /** Extends the caller's unexpired lease; false once it is lost. */
    renew: (name: string, holder: string, token: number, ttlMs: number): boolean =>
      renew.run(name, holder, token, ttlMs).changes === 1,
    /** Lets another replica take the lease at once (a clean shutdown). */
    release: (name: string, holder: string, token: number): void => void release.run(name, holder, token),
    /** Whether the caller still holds the lease with `token`; meant inside the transaction it guards. */
    holds: (name: string, holder: string, token: number): boolean => holds.get(name, holder, token) !== null,
    all: (): LeaseRow[] => all.all(),
  };
}

export type LeaseStore = ReturnType<typeof createLeaseStore>;
