import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: Api;
let bob: Api;
let aliceId: string;

beforeAll(async () => {
  server = await startTestServer();
  const a = await server.createAccount("Alice");
  aliceId = a.accountId;
  alice = api(server.url, a.apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
});
afterAll(async () => await server.stop());

let keyCounter = 0;
const freshKey = () => `test-key-${++keyCounter}-${crypto.randomUUID()}`;
const withKey = (as: Api, key: string, body: unknown) =>
  as("/api/v1/payments", { method: "POST", body, headers: { "idempotency-key": key } });
const paymentCount = async (accountId: string) =>
  (await server.running.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payments WHERE account_id = ${accountId}`))!
    .n;

describe("Idempotency-Key on POST /api/v1/payments", () => {
  test("the same key and body replays the original: same status, byte-equal body, one payment", async () => {
    const key = freshKey();
    const before = await paymentCount(aliceId);
    const body = { amount: "25.00", description: "Replay me", metadata: { order: "1" } };
    const first = await withKey(alice, key, body);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await withKey(alice, key, body);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    const third = await withKey(alice, key, body);
    expect(third.text).toBe(first.text);
    expect(await paymentCount(aliceId)).toBe(before + 1);
    const retrieved = await alice(`/api/v1/payments/${first.json.id}`);
    expect(retrieved.text).toBe(first.text);
  });

  test("a body that only reorders keys (and whitespace) still replays", async () => {
    const key = freshKey();
    const first = await withKey(alice, key, `{"amount":"25.00","description":"x","metadata":{"a":"1","b":"2"}}`);
    expect(first.status).toBe(201);
    const second = await withKey(
      alice,
      key,
      `{ "metadata": {"b":"2", "a":"1"}, "description": "x", "amount": "25.00" }`,
    );
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
  });

  test("the same key with a different body is 422 and creates nothing", async () => {
    const key = freshKey();
    const first = await withKey(alice, key, { amount: "25.00" });
    expect(first.status).toBe(201);
    const before = await paymentCount(aliceId);
    const second = await withKey(alice, key, { amount: "26.00" });
    expect(second.status).toBe(422);
    expect(isErrorBody(second.json)).toBe(true);
    expect(second.text).not.toContain(first.json.id);
    expect(await paymentCount(aliceId)).toBe(before);
    // The original is still replayable afterwards.
    const third = await withKey(alice, key, { amount: "25.00" });
    expect(third.text).toBe(first.text);
  });

  test("a key of 255 characters is accepted, 256 is 400 and stores nothing", async () => {
    const ok = await withKey(alice, "k".repeat(255), { amount: "1.00" });
    expect(ok.status).toBe(201);
    const before = await paymentCount(aliceId);
    const tooLong = await withKey(alice, "k".repeat(256), { amount: "1.00" });
    expect(tooLong.status).toBe(400);
    expect(isErrorBody(tooLong.json)).toBe(true);
    expect(tooLong.json.error).toMatch(/Idempotency-Key/i);
    expect(await paymentCount(aliceId)).toBe(before);
  });

  test("an empty key is 400", async () => {
    const res = await withKey(alice, "", { amount: "1.00" });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test("a key of one character is accepted and replays", async () => {
    // Its own account: one-character keys are few, and another test's must not answer for this one.
    const carol = api(server.url, (await server.createAccount("Carol")).apiKey);
    const first = await withKey(carol, "7", { amount: "1.00" });
    expect(first.status).toBe(201);
    const again = await withKey(carol, "7", { amount: "1.00" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
  });

  test("a request rejected by schema validation stores nothing: the key then works with a valid body", async () => {
    const key = freshKey();
    const bad = await withKey(alice, key, { amount: "abc" });
    expect(bad.status).toBe(400);
    const good = await withKey(alice, key, { amount: "10.00" });
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
    expect(good.json.amount).toBe("10.00");
  });

  test("a request rejected by a business rule stores nothing: the key then works with a valid body", async () => {
    const key = freshKey();
    const bad = await withKey(alice, key, {
      amount: "25.00",
      line_items: [{ description: "A", unit_amount: "30.00", quantity: 1 }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("amount 25.00 USDC does not match line_items total 30.00 USDC");
    const again = await withKey(alice, key, {
      amount: "25.00",
      line_items: [{ description: "A", unit_amount: "30.00", quantity: 1 }],
    });
    expect(again.status).toBe(400); // re-validated, not a stored 400
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    const good = await withKey(alice, key, {
      amount: "30.00",
      line_items: [{ description: "A", unit_amount: "30.00", quantity: 1 }],
    });
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
    expect(good.json.amount).toBe("30.00");
  });

  test("keys are scoped per account: the same key on two accounts creates two payments", async () => {
    const key = freshKey();
    const a = await withKey(alice, key, { amount: "5.00" });
    const b = await withKey(bob, key, { amount: "5.00" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(a.json.id).not.toBe(b.json.id);
    expect((await bob(`/api/v1/payments/${b.json.id}`)).status).toBe(200);
    expect((await bob(`/api/v1/payments/${a.json.id}`)).status).toBe(404);
    // And a different body on the other account is not a 422 either.
    const c = await withKey(bob, freshKey(), { amount: "6.00" });
    expect(c.status).toBe(201);
  });

  test("requests without a key are never deduplicated", async () => {
    const before = await paymentCount(aliceId);
    const [a, b] = await Promise.all([
      alice("/api/v1/payments", { body: { amount: "2.00" } }),
      alice("/api/v1/payments", { body: { amount: "2.00" } }),
    ]);
    expect(a!.json.id).not.toBe(b!.json.id);
    expect(await paymentCount(aliceId)).toBe(before + 2);
  });

  test("8 simultaneous requests with one key create exactly one payment", async () => {
    const carol = await server.createAccount("Carol");
    const as = api(server.url, carol.apiKey);
    const key = freshKey();
    const body = { amount: "42.00", description: "race" };
    const responses = await Promise.all(Array.from({ length: 8 }, () => withKey(as, key, body)));
    for (const res of responses) expect([201, 409]).toContain(res.status);
    const ok = responses.filter((r) => r.status === 201);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.json.id)).size).toBe(1);
    for (const res of responses.filter((r) => r.status === 409)) expect(isErrorBody(res.json)).toBe(true);
    const list = await as("/api/v1/payments");
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0].id).toBe(ok[0]!.json.id);
    expect(await paymentCount(carol.accountId)).toBe(1);
  });
});
