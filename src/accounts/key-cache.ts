import { type Db, sql } from "../db/engine.ts";
import type { Clock } from "../lib/clock.ts";
import type { KeyWithAccount } from "./store.ts";

/** Longest an entry is kept, changed or not: a bound on what the cache holds for keys gone quiet. */
const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export type KeyCache = ReturnType<typeof createKeyCache>;

/**
 * API keys this process resolved recently (by key hash), so a request's authentication on SQLite
 * reads one row rather than the join of keys and accounts. Every change to a key's revocation or
 * to an account moves a version (migration 025: triggers, whichever process or code path makes
 * the change, the CLI's included), and an entry is trusted only at the version it was read at:
 * each request reads the version, so a revocation is seen by the very next one.
 *
 * SQLite only. On PostgreSQL reading the version is a round trip like reading the key itself, so a
 * cache there would buy nothing but the chance of a stale answer: each request reads the key.
 */
export function createKeyCache(db: Db, clock: Clock) {
  const entries = new Map<string, { row: KeyWithAccount; version: number; until: number }>();
  const version = async (): Promise<number | null> =>
    (await db.get<{ n: number }>(sql`SELECT n FROM account_changes`))?.n ?? null;

  return {
    /** The key's cached row, when it is still what the store holds. */
    async get(hash: string): Promise<KeyWithAccount | undefined> {
      const entry = entries.get(hash);
      if (!entry) return undefined;
      if (entry.until > clock.now() && entry.version === (await version())) return entry.row;
      entries.delete(hash);
      return undefined;
    },
    /** Reads the version first, then the row with `read`: a change between the two only makes the entry older. */
    async fill(hash: string, read: () => Promise<KeyWithAccount | null>): Promise<KeyWithAccount | null> {
      const at = await version();
      const row = await read();
      if (row && at !== null) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(hash, { row, version: at, until: clock.now() + TTL_MS });
      }
      return row;
    },
  };
}
