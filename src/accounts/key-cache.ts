import { type Db, isPostgres, sql } from "../db/engine.ts";
import type { Clock } from "../lib/clock.ts";
import type { KeyWithAccount } from "./store.ts";

/** Longest an entry is kept, changed or not: a bound on what the cache holds for keys gone quiet. */
const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export type KeyCache = ReturnType<typeof createKeyCache>;

/**
 * API keys this process resolved recently (by key hash), with their accounts. A revocation must
 * bite on the next request, whichever process made it (the CLI, another replica), so an entry
 * answers only where that holds. Every read of a key carries, from the same statement, the
 * version that migration 025's triggers move at every change to a key's revocation or to an
 * account, whichever process or code path makes it, the CLI's included (`KeyWithAccount.version`).
 *
 * - On SQLite every request reads that version, and an entry counts only while it is still the
 *   one the entry was read at: one row read in this process rather than the join of keys and
 *   accounts.
 * - On PostgreSQL reading the version is a round trip like reading the key itself, so a request
 *   reads its key, unless the one statement that answers it confirms the key itself
 *   (`confirmedByStatement`): a payment create, whose INSERT stores the payment only while the
 *   version is still the entry's (src/payments/insert-store.ts), or a retrieve, which reads the
 *   payment only while the key is live (src/payments/retrieve-store.ts). Either is made again from
 *   a fresh read when the key did not hold. Such a request takes an entry younger than TTL_MS
 *   (`recent`); any other refreshes the entry with what it read.
 */
export function createKeyCache(db: Db, clock: Clock) {
  const entries = new Map<string, { row: KeyWithAccount; until: number }>();
  const versioned = !isPostgres(db);
  const version = async (): Promise<number | null> =>
    (await db.get<{ n: number }>(sql`SELECT n FROM account_changes`))?.n ?? null;

  /** The entry, when it may answer this request. */
  async function cached(hash: string, confirmedByStatement: boolean): Promise<KeyWithAccount | undefined> {
    if (!versioned && !confirmedByStatement) return undefined;
    const entry = entries.get(hash);
    if (!entry) return undefined;
    if (entry.until > clock.now() && (!versioned || entry.row.version === (await version()))) return entry.row;
    entries.delete(hash);
    return undefined;
  }

  function remember(hash: string, row: KeyWithAccount | null): void {
    // Never a row without its version: nothing could tell when it went stale.
    if (!row || row.version == null) {
      entries.delete(hash);
      return;
    }
    if (entries.size >= MAX_ENTRIES) entries.clear();
    entries.set(hash, { row, until: clock.now() + TTL_MS });
  }

  return {
    /** The key's row, from the cache when it may answer (see above), else from `read`, which refreshes the entry. */
    async resolve(
      hash: string,
      read: () => Promise<KeyWithAccount | null>,
      { confirmedByStatement = false } = {},
    ): Promise<KeyWithAccount | null> {
      const hit = await cached(hash, confirmedByStatement);
      if (hit) return hit;
      const row = await read();
      remember(hash, row);
      return row;
    },
    /** On PostgreSQL, the entry for a request whose statement confirms the key; undefined elsewhere. */
    recent: (hash: string): Promise<KeyWithAccount | undefined> =>
      versioned ? Promise.resolve(undefined) : cached(hash, true),
    /** On PostgreSQL, what a statement of its own read of the key (the retrieve's); nothing on SQLite. */
    remember(hash: string, row: KeyWithAccount | null): void {
      if (!versioned) remember(hash, row);
    },
  };
}
