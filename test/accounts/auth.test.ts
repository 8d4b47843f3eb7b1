import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { raw, sql, sqlFor } from "../../src/db/engine.ts";
import { openStore, storeLocationFrom } from "../../src/db/open.ts";
import {
  concretePath,
  MERCHANT_ROUTES,
  type MerchantRoute,
  namesAnObject,
  type OwnedObjects,
} from "../support/merchant-routes.ts";
import { insertPendingRecovery } from "../support/recovery-rows.ts";
import { markReceived } from "../support/refund-rows.ts";
import {
  type ApiRequest,
  api,
  isErrorBody,
  rawApi,
  startTestServer,
  type TestAccount,
  type TestServer,
} from "../support/server.ts";

let server: TestServer;
let merchant: TestAccount;

let owned: OwnedObjects;

beforeAll(async () => {
  server = await startTestServer();
  merchant = await server.createAccount("Auth Shop");
  owned = await createOwnedObjects(merchant);
});
afterAll(() => server.stop());

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const wellFormedKey = () =>
  `sk_live_${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => BASE62[b % 62]).join("")}`;

const requestOf = (route: MerchantRoute): ApiRequest => ({ method: route.method, body: route.body });

/**
 * A payment (with funds received), a webhook endpoint, a test event and its delivery, a payment
 * link (made through the API), a recovery and a refund.
 */
async function createOwnedObjects(account: TestAccount): Promise<OwnedObjects> {
  const call = api(server.url, account.apiKey);
  const payment = await call("/api/v1/payments", { body: { amount: "2.00", invoice_number: "INV-SWEEP" } });
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/owned" } });
  const sent = await call(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" });
  const link = await call("/api/v1/payment_links", { body: { amount: "2.00" } });
  expect([payment.status, endpoint.status, sent.status, link.status]).toEqual([201, 201, 202, 201]);
  await markReceived(server.env, payment.json.id, 2_000_000n);
  const refund = await call(`/api/v1/payments/${payment.json.id}/refunds`, { body: { amount: "1.00" } });
  expect(refund.status).toBe(201);
  return {
    refundId: refund.json.id,
    recoveryId: await insertPendingRecovery(server.env, payment.json.id),
    paymentId: payment.json.id,
    endpointId: endpoint.json.id,
    deliveryId: sent.json.delivery.id,
    eventId: sent.json.event_id,
    linkId: link.json.id,
  };
}

/** A request with exactly this Authorization header (none when null). */
function withAuthorization(authorization: string | null, path = "/api/v1/payments", req: ApiRequest = {}) {
  return api(server.url, null)(path, { ...req, headers: authorization === null ? {} : { authorization } });
}

describe("merchant API authentication: 401 for every bad key", () => {
  const cases: Array<[string, () => string | null]> = [
    ["a missing header", () => null],
    ["an empty header", () => ""],
    ['"Bearer" alone', () => "Bearer"],
    ['"Bearer " with a blank key', () => "Bearer    "],
    ["the wrong scheme (Basic)", () => `Basic ${Buffer.from(`${merchant.apiKey}:`).toString("base64")}`],
    ["the wrong scheme (Token)", () => `Token ${merchant.apiKey}`],
    ["the key without a scheme", () => merchant.apiKey],
    ["a malformed key (too short)", () => "Bearer sk_live_abc"],
    ["a malformed key (test prefix)", () => `Bearer sk_test_${merchant.apiKey.slice(8)}`],
    ["a malformed key (too long)", () => `Bearer ${merchant.apiKey}x`],
    ["a malformed key (bad character)", () => `Bearer ${merchant.apiKey.slice(0, -1)}!`],
    ["two keys", () => `Bearer ${merchant.apiKey} ${merchant.apiKey}`],
    ["an unknown well-formed key", () => `Bearer ${wellFormedKey()}`],
    [
      "the key's SHA-256 hash instead of the key",
      () => `Bearer ${createHash("sha256").update(merchant.apiKey).digest("hex")}`,
    ],
  ];

  test.each(cases)("%s, on every merchant route", async (_name, header) => {
    for (const route of MERCHANT_ROUTES) {
      const res = await withAuthorization(header(), concretePath(route, owned), requestOf(route));
      expect({ route: route.path, status: res.status }).toEqual({ route: route.path, status: 401 });
      expect(isErrorBody(res.json)).toBe(true);
      expect(res.text).not.toContain(merchant.apiKey);
    }
  });

  test("the valid key works (control)", async () => {
    const res = await withAuthorization(`Bearer ${merchant.apiKey}`);
    expect(res.status).toBe(200);
  });

  test("a bad key is 401 before the body is looked at", async () => {
    const res = await withAuthorization(`Bearer ${wellFormedKey()}`, "/api/v1/payments", { body: "{not json" });
    expect(res.status).toBe(401);
  });
});

describe("key revocation", () => {
  test("a key revoked through the CLI while the server runs is refused on the next request", async () => {
    const account = await server.createAccount("Revoking Shop");
    const second = (await runAccountCommand("key", ["create", "--account", account.accountId], server.env)) as {
      id: string;
      api_key: string;
    };
    expect((await withAuthorization(`Bearer ${account.apiKey}`)).status).toBe(200);
    expect((await withAuthorization(`Bearer ${second.api_key}`)).status).toBe(200);

    const revoked = (await runAccountCommand("key", ["revoke", account.keyId], server.env)) as {
      id: string;
      revoked_at: string | null;
    };
    expect(revoked.id).toBe(account.keyId);
    expect(revoked.revoked_at).not.toBeNull();

    const res = await withAuthorization(`Bearer ${account.apiKey}`);
    expect(res.status).toBe(401);
    expect(isErrorBody(res.json)).toBe(true);
    // The account's other key is unaffected.
    expect((await withAuthorization(`Bearer ${second.api_key}`)).status).toBe(200);
  });

  test("a key revoked through the CLI is refused by the next retrieve of its own payment (on PostgreSQL one statement reads the key with it)", async () => {
    const account = await server.createAccount("Revoking Retriever");
    const created = await api(server.url, account.apiKey)("/api/v1/payments", { body: { amount: "1.00" } });
    expect(created.status).toBe(201);
    const path = `/api/v1/payments/${created.json.id}`;
    const retrieved = await withAuthorization(`Bearer ${account.apiKey}`, path);
    expect(retrieved.status).toBe(200);
    expect(retrieved.json.id).toBe(created.json.id);

    await runAccountCommand("key", ["revoke", account.keyId], server.env);
    const res = await withAuthorization(`Bearer ${account.apiKey}`, path);
    expect(res.status).toBe(401);
    expect(res.text).toBe((await withAuthorization(`Bearer ${wellFormedKey()}`, path)).text);
  });

  test("a revoked key's error is the same as an unknown key's", async () => {
    const account = await server.createAccount("Same Error Shop");
    await runAccountCommand("key", ["revoke", account.keyId], server.env);
    const revoked = await withAuthorization(`Bearer ${account.apiKey}`);
    const unknown = await withAuthorization(`Bearer ${wellFormedKey()}`);
    expect(revoked.status).toBe(401);
    expect(revoked.text).toBe(unknown.text);
  });
});

describe("key storage", () => {
  test("the database stores only the SHA-256 hash of a key", async () => {
    const account = await server.createAccount("Hash Shop");
    const expectedHash = createHash("sha256").update(account.apiKey).digest("hex");
    const db = await openStore(storeLocationFrom(server.env));
    try {
      const keyRow = (await db.get<Record<string, unknown>>(sql`SELECT * FROM api_keys WHERE id = ${account.keyId}`))!;
      expect(keyRow.key_hash).toBe(expectedHash);
      // No column of any row of any table holds the key.
      const tables = await db.all<{ name: string }>(
        sqlFor(
          db,
          sql`SELECT name FROM sqlite_master WHERE type = 'table'`,
          sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`,
        ),
      );
      expect(tables.map((t) => t.name)).toContain("api_keys");
      for (const { name } of tables) {
        for (const row of await db.all<Record<string, unknown>>(sql`SELECT * FROM ${raw(`"${name}"`)}`)) {
          for (const value of Object.values(row)) expect(String(value)).not.toContain(account.apiKey);
        }
      }
    } finally {
      await db.close();
    }
    // Nor does any byte of the files in the data dir (database, WAL, anything else).
    for (const file of readdirSync(server.dataDir)) {
      const bytes = readFileSync(join(server.dataDir, file));
      expect(bytes.includes(account.apiKey)).toBe(false);
      expect(bytes.includes(account.apiKey.slice(8))).toBe(false);
    }
  });

  test("key list shows no secrets", async () => {
    const account = await server.createAccount("List Shop");
    const list = (await runAccountCommand("key", ["list", "--account", account.accountId], server.env)) as Array<
      Record<string, unknown>
    >;
    expect(list).toHaveLength(1);
    const text = JSON.stringify(list);
    expect(text).not.toContain(account.apiKey);
    expect(text).not.toContain(account.apiKey.slice(8, -4));
    expect(text).not.toContain(createHash("sha256").update(account.apiKey).digest("hex"));
    expect(list[0]).not.toHaveProperty("key_hash");
    expect(list[0]).not.toHaveProperty("api_key");
    expect(list[0]!.id).toBe(account.keyId);
    expect(list[0]!.account_id).toBe(account.accountId);
  });

  test("the account create output is the only place the key appears", async () => {
    const out = (await runAccountCommand(
      "account",
      ["create", "--name", "Once", "--payout-address", "0x2222222222222222222222222222222222222222"],
      server.env,
    )) as {
      account: Record<string, unknown>;
      api_key: string;
    };
    expect(out.api_key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(JSON.stringify(out.account)).not.toContain(out.api_key);
    const all = JSON.stringify(await runAccountCommand("key", ["list"], server.env));
    expect(all).not.toContain(out.api_key);
  });
});

describe("every merchant route", () => {
  test("the route table lists exactly the registered /api/v1 routes", () => {
    const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
    const registered = server.running.routes
      .filter((r) => r.path.startsWith("/api/v1/"))
      .map(key)
      .sort();
    expect(MERCHANT_ROUTES.map(key).sort()).toEqual(registered);
  });

  test("the owner's key succeeds on each route (so the refusals below are about the key, not the request)", async () => {
    let unchanged: OwnedObjects | undefined;
    for (const route of MERCHANT_ROUTES) {
      // Fresh for routes that delete or retry; reads share one set (an account has a limited number of endpoints).
      const objects = route.writes
        ? await createOwnedObjects(merchant)
        : (unchanged ??= await createOwnedObjects(merchant));
      const path = concretePath(route, objects);
      const req = requestOf(route);
      // An open stream never ends by itself: its status is the answer, then the client leaves.
      let status: number;
      if (route.streams) {
        const res = await rawApi(server.url, merchant.apiKey)(path, req);
        await res.body?.cancel();
        status = res.status;
      } else status = (await api(server.url, merchant.apiKey)(path, req)).status;
      expect({ route: route.path, ok: status >= 200 && status < 300 }).toEqual({ route: route.path, ok: true });
    }
  });

  test("another account's key gets 404 for every object of this account, and changes nothing", async () => {
    const stranger = await server.createAccount("Stranger Shop");
    const mine = api(server.url, merchant.apiKey);
    const before = await Promise.all([
      mine("/api/v1/webhook_endpoints"),
      mine(`/api/v1/webhook_endpoints/${owned.endpointId}/deliveries`),
    ]);
    const linkBefore = (await mine(`/api/v1/payment_links/${owned.linkId}`)).text;
    for (const route of MERCHANT_ROUTES.filter(namesAnObject)) {
      const res = await withAuthorization(`Bearer ${stranger.apiKey}`, concretePath(route, owned), requestOf(route));
      expect({ route: route.path, status: res.status }).toEqual({ route: route.path, status: 404 });
      expect(isErrorBody(res.json)).toBe(true);
    }
    const after = await Promise.all([
      mine("/api/v1/webhook_endpoints"),
      mine(`/api/v1/webhook_endpoints/${owned.endpointId}/deliveries`),
    ]);
    expect(after.map((r) => r.json.data.map((o: { id: string }) => o.id))).toEqual(
      before.map((r) => r.json.data.map((o: { id: string }) => o.id)),
    );
    expect((await mine(`/api/v1/payment_links/${owned.linkId}`)).text).toBe(linkBefore);
  });
});
