/**
 * API keys over a real SQLite file and a real PostgreSQL database with the clock injected: when a key was last used (written at
 * most once a minute, not on every request), and revocation scoped to one account.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { createAccountsService, KEY_USE_RESOLUTION_MS } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { type Db, sql } from "../../src/db/engine.ts";
import { AuthError, NotFoundError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { api, startTestServer, TEST_PAYOUT } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const clock = { at: T0, now: () => clock.at };

let store: TestStore;
let db: Db;
let accounts: ReturnType<typeof createAccountsService>;

async function newAccount(name: string) {
  const created = await accounts.createAccount({ name, payoutAddress: TEST_PAYOUT });
  return { accountId: created.account.id, apiKey: created.api_key, keyId: created.key_id };
}

const lastUsed = async (accountId: string, keyId: string) =>
  (await accounts.listKeys(accountId)).find((key) => key.id === keyId)!.last_used_at;

/** The stored value itself, to tell "not written" from "written with the same value". */
const storedLastUsed = async (keyId: string) =>
  (await db.get<{ last_used_at: number | null }>(sql`SELECT last_used_at FROM api_keys WHERE id = ${keyId}`))!
    .last_used_at;

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    accounts = createAccountsService({ store: createAccountStore(db), clock, ids: randomIds });
  });
  afterAll(async () => await store?.close());

  /**
   * Something that moves with every write: on SQLite the connection's total changes; on
   * PostgreSQL the key row's xmin, the transaction that last wrote it (an UPDATE setting the same
   * value still writes a new version of the row).
   */
  const writes = async (keyId: string) =>
    engine === "sqlite"
      ? (await db.get<{ n: number }>(sql`SELECT total_changes() AS n`))!.n
      : (await db.get<{ n: string }>(sql`SELECT xmin::text AS n FROM api_keys WHERE id = ${keyId}`))!.n;

  /**
   * Another connection holding what an UPDATE of api_keys would wait for: SQLite's write lock
   * (BEGIN IMMEDIATE), or PostgreSQL's table lock (EXCLUSIVE blocks writes, not reads). Waits are
   * cut short, so a request that did try to write fails instead of hanging the test.
   */
  async function holdWriteLock(): Promise<() => Promise<void>> {
    if (engine === "sqlite") {
      const writer = new Database(`${store.dataDir}/stablegate.db`);
      writer.run("PRAGMA busy_timeout = 0");
      writer.run("BEGIN IMMEDIATE");
      return async () => {
        writer.run("ROLLBACK");
        writer.close();
      };
    }
    await db.run(sql`SET lock_timeout = '2s'`);
    const writer = new SQL(store.databaseUrl!, { max: 1 });
    const held = await writer.reserve();
    await held.unsafe("BEGIN");
    await held.unsafe("LOCK TABLE api_keys IN EXCLUSIVE MODE");
    return async () => {
      await held.unsafe("ROLLBACK");
      held.release();
      await writer.close();
      await db.run(sql`RESET lock_timeout`);
    };
  }

  describe("API key last used", () => {
    test("a new key was never used; its first request records the time", async () => {
      clock.at = T0;
      const { accountId, apiKey, keyId } = await newAccount("Fresh Keys");
      expect(await lastUsed(accountId, keyId)).toBeNull();
      await accounts.authenticate(`Bearer ${apiKey}`);
      expect(await lastUsed(accountId, keyId)).toBe(new Date(T0).toISOString());
    });

    test("requests within a minute of the recorded use write nothing; the first one after it does", async () => {
      clock.at = T0;
      const { apiKey, keyId } = await newAccount("Busy Keys");
      await accounts.authenticate(`Bearer ${apiKey}`);
      const writesBefore = await writes(keyId);
      for (const offset of [1, 1_000, KEY_USE_RESOLUTION_MS - 1]) {
        clock.at = T0 + offset;
        await accounts.authenticate(`Bearer ${apiKey}`);
      }
      expect(await writes(keyId)).toBe(writesBefore);
      expect(await storedLastUsed(keyId)).toBe(T0);
      clock.at = T0 + KEY_USE_RESOLUTION_MS;
      await accounts.authenticate(`Bearer ${apiKey}`);
      expect(await writes(keyId)).not.toBe(writesBefore);
      expect(await storedLastUsed(keyId)).toBe(T0 + KEY_USE_RESOLUTION_MS);
    });

    test("within the minute a request does not even wait for the write lock (another process may hold it)", async () => {
      clock.at = T0;
      const { accountId, apiKey } = await newAccount("Locked Keys");
      await accounts.authenticate(`Bearer ${apiKey}`);
      const release = await holdWriteLock();
      try {
        clock.at = T0 + 1_000;
        expect((await accounts.authenticate(`Bearer ${apiKey}`)).id).toBe(accountId);
      } finally {
        await release();
      }
    });

    test("a refused key records no use", async () => {
      clock.at = T0;
      const { accountId, apiKey, keyId } = await newAccount("Revoked Keys");
      await accounts.revokeKey(keyId, accountId);
      await expect(accounts.authenticate(`Bearer ${apiKey}`)).rejects.toThrow(AuthError);
      expect(await lastUsed(accountId, keyId)).toBeNull();
    });
  });

  describe("revoking a key for one account", () => {
    test("another account's key is not found and stays usable", async () => {
      clock.at = T0;
      const owner = await newAccount("Key Owner");
      const other = await newAccount("Key Neighbour");
      await expect(accounts.revokeKey(owner.keyId, other.accountId)).rejects.toThrow(NotFoundError);
      expect((await accounts.authenticate(`Bearer ${owner.apiKey}`)).id).toBe(owner.accountId);
      expect((await accounts.revokeKey(owner.keyId, owner.accountId)).revoked_at).toBe(new Date(T0).toISOString());
      await expect(accounts.authenticate(`Bearer ${owner.apiKey}`)).rejects.toThrow(AuthError);
    });
  });
});

describe("stablegate key list", () => {
  test("shows when each key last authenticated an API request, null for one never used", async () => {
    const server = await startTestServer();
    try {
      const merchant = await server.createAccount("Listed Keys");
      const unused = (await runAccountCommand("key", ["create", "--account", merchant.accountId], server.env)) as {
        id: string;
      };
      const before = Date.now();
      expect((await api(server.url, merchant.apiKey)("/api/v1/payments")).status).toBe(200);
      const keys = (await runAccountCommand("key", ["list", "--account", merchant.accountId], server.env)) as Array<{
        id: string;
        last_used_at: string | null;
      }>;
      const used = Date.parse(keys.find((key) => key.id === merchant.keyId)!.last_used_at!);
      expect(used).toBeGreaterThanOrEqual(before);
      expect(keys.find((key) => key.id === unused.id)!.last_used_at).toBeNull();
    } finally {
      await server.stop();
    }
  });
});
