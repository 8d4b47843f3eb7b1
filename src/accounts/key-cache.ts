import { type Db, sql } from "../db/engine.ts";
import type { Clock } from "../lib/clock.ts";
import type { KeyWithAccount } from "./store.ts";

/** Longest an entry is trusted even with no change announced: a bound should a notification be lost. */
const TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;
const CHANNEL = "stablegate_account_changes";

export type KeyCache = Awaited<ReturnType<typeof createKeyCache>>;

/**
 * API keys this process resolved recently (by key hash), so a request's authentication skips the
 * join of keys and accounts. Every change to a key's revocation or to an account moves a version
 * (migration 025), and an entry is trusted only at the version it was read at:
 * - SQLite: the version is a one-row read per request, so a revocation by any process (the CLI's
 *   included) is seen by the very next request.
 * - PostgreSQL: the version is a count of NOTIFYs this replica has heard, which PostgreSQL sends to
 *   every replica when the change commits; the revoking request answers only after that. While
 *   the listening connection is down nothing is cached, and a re-subscription forgets everything.
 */
export async function createKeyCache(db: Db, clock: Clock) {
  const entries = new Map<string, { row: KeyWithAccount; version: number; until: number }>();
  let heard = 0;
  let listening = false;
  const waiting: Array<() => void> = [];
  const changed = () => {
    heard++;
    entries.clear();
    for (const wake of waiting.splice(0)) wake();
  };
  const stop =
    db.engine === "postgres" && db.listen
      ? await db.listen(CHANNEL, changed, () => {
          listening = true;
          changed();
        })
      : null;

  /** The version now, or null when nothing may be trusted from the cache. */
  const version = async (): Promise<number | null> => {
    if (db.engine === "postgres") return listening ? heard : null;
    return (await db.get<{ n: number }>(sql`SELECT n FROM account_changes`))?.n ?? null;
  };

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
    /** A change this process made: forget at once rather than wait for the version to say so. */
    forget: () => entries.clear(),
    /** How many changes this replica has heard of (PostgreSQL), for `heardSince`. */
    heard: () => heard,
    /**
     * Resolves once this replica has heard of a change after `before`: PostgreSQL sends a commit's
     * notification to every listener at once, so a request answered after its own replica heard
     * is answered after the others were told. Bounded, should the notice never come.
     */
    heardSince(before: number, withinMs = 2_000): Promise<void> {
      if (heard !== before || !listening) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, withinMs);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    close: async () => stop?.(),
  };
}
