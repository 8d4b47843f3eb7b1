/**
 * A key revoked, or an account changed, by another process (the CLI on SQLite, another replica on
 * PostgreSQL) is what the next request to a server that had just used the key sees
 * (src/accounts/key-cache.ts): a read on SQLite through the cache's version check, on PostgreSQL
 * by reading the key each time; a payment create on PostgreSQL through its insert, which stores
 * the payment only while the version its key was read at holds, and is made again from a fresh
 * read when it does not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { sql } from "../../src/db/engine.ts";
import { PgDb } from "../../src/db/postgres.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

const NEW_PAYOUT = "0x2222222222222222222222222222222222222222";

describe.each(["sqlite", "postgres"] as const)("%s", (engine) => {
  let server: TestServer;
  /** Changes made as another process would make them: the CLI on SQLite, another replica on PostgreSQL. */
  let elsewhere: {
    revoke(keyId: string): Promise<void>;
    setPayout(accountId: string, address: string): Promise<void>;
    setSpeed(accountId: string, speed: string): Promise<void>;
    close(): Promise<void>;
  };

  beforeAll(async () => {
    const databaseUrl = engine === "postgres" ? await createTestDatabase() : null;
    server = await startTestServer({ databaseUrl });
    if (engine === "sqlite") {
      const cli = async (args: string[]) => {
        const out = await runCli(args, server.env);
        expect(out.code).toBe(0);
      };
      elsewhere = {
        revoke: (keyId) => cli(["key", "revoke", keyId]),
        setPayout: (accountId, address) => cli(["account", "set-payout", accountId, address]),
        setSpeed: (accountId, speed) => cli(["account", "set-speed", accountId, speed]),
        close: async () => {},
      };
    } else {
      const db = await PgDb.open(databaseUrl!);
      const store = createAccountStore(db);
      const replica = createAccountsService({ store, clock: systemClock, ids: randomIds });
      elsewhere = {
        revoke: async (keyId) => {
          await replica.revokeKey(keyId);
        },
        setPayout: async (accountId, address) => {
          await db.transaction(() => store.setPayoutAddress(accountId, address));
        },
        setSpeed: async (accountId, speed) => {
          await replica.setSpeed(accountId, speed);
        },
        close: () => db.close(),
      };
    }
  });
  afterAll(async () => {
    await elsewhere.close();
    await server.stop();
  });

  test("a key revoked elsewhere fails the very next request, though the server had it cached", async () => {
    const account = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    for (let i = 0; i < 3; i++) expect((await merchant("/api/v1/payments?limit=1")).status).toBe(200);
    await elsewhere.revoke(account.keyId);
    expect((await merchant("/api/v1/payments?limit=1")).status).toBe(401);
  });

  test("an account changed elsewhere is what the next request acts for", async () => {
    const account = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    const before = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    expect(before.status).toBe(201);
    await elsewhere.setPayout(account.accountId, NEW_PAYOUT);
    const after = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    expect(after.status).toBe(201);
    // The deposit address commits to the payout: a stale cached account would issue the old terms.
    const payouts = await server.running.db.all<{ id: string; payout_address: string }>(
      sql`SELECT id, payout_address FROM payments WHERE id IN (${before.json.id}, ${after.json.id})`,
    );
    expect(payouts.find((row) => row.id === before.json.id)!.payout_address).not.toBe(NEW_PAYOUT);
    expect(payouts.find((row) => row.id === after.json.id)!.payout_address).toBe(NEW_PAYOUT);
  });

  test("a key revoked elsewhere fails the very next retrieve, though the server had it cached", async () => {
    const account = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    const created = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
    for (let i = 0; i < 3; i++) expect((await merchant(`/api/v1/payments/${created.json.id}`)).status).toBe(200);
    await elsewhere.revoke(account.keyId);
    expect((await merchant(`/api/v1/payments/${created.json.id}`)).status).toBe(401);
    // An id it does not own or that does not exist is 401 as well, never 404: the key comes first.
    expect((await merchant(`/api/v1/payments/0x${"ab".repeat(32)}`)).status).toBe(401);
  });

  test("a key revoked elsewhere fails the very next create, and nothing is stored for it", async () => {
    const account = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    for (let i = 0; i < 3; i++)
      expect((await merchant("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(201);
    await elsewhere.revoke(account.keyId);
    for (const headers of [{}, { "idempotency-key": "after-revoke" }] as Record<string, string>[]) {
      const refused = await merchant("/api/v1/payments", { body: { amount: "2.00" }, headers });
      expect(refused.status).toBe(401);
    }
    const stored = await server.running.db.all<{ amount: number }>(
      sql`SELECT amount FROM payments WHERE account_id = ${account.accountId}`,
    );
    expect(stored.map((row) => row.amount)).toEqual([1_000_000, 1_000_000, 1_000_000]);
  });

  test("a change to another account leaves this one's next create as it was: made once, on its own terms", async () => {
    const account = await server.createAccount();
    const other = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    expect((await merchant("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(201);
    // Moves the version every cached key was read at (on PostgreSQL the insert then finds it moved).
    await elsewhere.setSpeed(other.accountId, "fast");
    const after = await merchant("/api/v1/payments", { body: { amount: "4.00" } });
    expect(after.status).toBe(201);
    const rows = await server.running.db.all<{ amount: number; speed: string; account_id: string }>(
      sql`SELECT amount, speed, account_id FROM payments WHERE account_id IN (${account.accountId}, ${other.accountId})
           ORDER BY amount`,
    );
    expect(rows).toEqual([
      { amount: 1_000_000, speed: after.json.speed, account_id: account.accountId },
      { amount: 4_000_000, speed: after.json.speed, account_id: account.accountId },
    ]);
    expect(after.json.speed).not.toBe("fast");
  });

  test("a create with an Idempotency-Key made while the account changed is made once, for the new terms", async () => {
    const account = await server.createAccount();
    const merchant = api(server.url, account.apiKey);
    expect((await merchant("/api/v1/payments", { body: { amount: "1.00" } })).status).toBe(201);
    await elsewhere.setPayout(account.accountId, NEW_PAYOUT);
    await elsewhere.setSpeed(account.accountId, "final");
    const headers = { "idempotency-key": `changed-${account.accountId}` };
    const first = await merchant("/api/v1/payments", { body: { amount: "3.00" }, headers });
    expect(first.status).toBe(201);
    const replay = await merchant("/api/v1/payments", { body: { amount: "3.00" }, headers });
    expect(replay.status).toBe(201);
    expect(replay.json.id).toBe(first.json.id);
    const rows = await server.running.db.all<{ payout_address: string; speed: string }>(
      sql`SELECT payout_address, speed FROM payments WHERE account_id = ${account.accountId} AND amount = 3000000`,
    );
    expect(rows).toEqual([{ payout_address: NEW_PAYOUT, speed: "final" }]);
  });
});
