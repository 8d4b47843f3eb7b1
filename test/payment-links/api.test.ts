/**
 * The payment link API over real HTTP against the real server and SQLite file: create each kind,
 * list and paginate, retrieve, deactivate, scoping, idempotent replays, and a 400 naming the
 * field for every bad one (with nothing stored).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { type Api, api, isErrorBody, startTestServer, TEST_BASE_URL, type TestServer } from "../support/server.ts";

let server: TestServer;
let alice: Api;
let bob: Api;

beforeAll(async () => {
  server = await startTestServer();
  alice = api(server.url, (await server.createAccount("Alice")).apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
});
afterAll(() => server.stop());

const linkCount = async () =>
  (await server.running.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payment_links`))!.n;
const create = (as: Api, body: unknown, headers: Record<string, string> = {}) =>
  as("/api/v1/payment_links", { method: "POST", body, headers });

describe("POST /api/v1/payment_links", () => {
  test("a fixed amount: 201 with the link object and its public url", async () => {
    const res = await create(alice, {
      amount: "25.00",
      description: "Pour-over class",
      success_url: "https://shop.example/thanks",
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      object: "payment_link",
      active: true,
      amount: "25.00",
      min_amount: null,
      max_amount: null,
      currency: "USDC",
      description: "Pour-over class",
      line_items: null,
      success_url: "https://shop.example/thanks",
      metadata: null,
    });
    expect(res.json.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
    expect(res.json.url).toBe(`${TEST_BASE_URL}/l/${res.json.id}`);
    expect(res.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("line items: the amount is their total; with an agreeing amount too", async () => {
    const line_items = [
      { description: "Ticket", unit_amount: "12.50", quantity: 2 },
      { description: "Programme", unit_amount: "3.00", quantity: 1 },
    ];
    const res = await create(alice, { line_items });
    expect(res.status).toBe(201);
    expect(res.json.amount).toBe("28.00");
    expect(res.json.line_items).toEqual([
      { description: "Ticket", unit_amount: "12.50", quantity: 2, amount: "25.00" },
      { description: "Programme", unit_amount: "3.00", quantity: 1, amount: "3.00" },
    ]);
    expect((await create(alice, { amount: "28.00", line_items })).status).toBe(201);
  });

  test("no amount: the payer chooses, optionally between min_amount and max_amount", async () => {
    const open = await create(alice, { description: "Tips" });
    expect(open.status).toBe(201);
    expect(open.json).toMatchObject({ amount: null, min_amount: null, max_amount: null });
    const bounded = await create(alice, { description: "Donation", min_amount: "5.00", max_amount: "500.00" });
    expect(bounded.status).toBe(201);
    expect(bounded.json).toMatchObject({ amount: null, min_amount: "5.00", max_amount: "500.00" });
    const floor = await create(alice, { min_amount: "1.00" });
    expect(floor.json).toMatchObject({ min_amount: "1.00", max_amount: null });
  });

  test("metadata is returned byte for byte, as on payments", async () => {
    const body = '{"amount":"3.00","metadata":{"campaign":"spring \\u00e9t\\u00e9","sku":"A-1"}}';
    const res = await create(alice, body);
    expect(res.status).toBe(201);
    expect(res.text).toContain('"metadata":{"campaign":"spring \\u00e9t\\u00e9","sku":"A-1"}');
    const again = await alice(`/api/v1/payment_links/${res.json.id}`);
    expect(again.text).toBe(res.text);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ["amount not a decimal", { amount: "25" }, /^amount must be a decimal string/],
    ["amount zero", { amount: "0.00" }, /^amount must be greater than 0\.00/],
    ["amount too large", { amount: "1000000000.01" }, /^amount must be at most 1000000000\.00/],
    [
      "amount and line_items differ",
      { amount: "9.00", line_items: [{ description: "A", unit_amount: "1.00", quantity: 2 }] },
      /^amount 9\.00 USDC does not match line_items total 2\.00 USDC$/,
    ],
    ["line_items empty", { line_items: [] }, /^line_items must be a list of 1 to 50 items/],
    [
      "a line item without quantity",
      { line_items: [{ description: "A", unit_amount: "1.00" }] },
      /^line_items\[0\]\.quantity is required/,
    ],
    [
      "a fractional quantity",
      { line_items: [{ description: "A", unit_amount: "1.00", quantity: 1.5 }] },
      /^line_items\[0\]\.quantity must be a whole number/,
    ],
    ["min_amount not a decimal", { min_amount: "five" }, /^min_amount must be a decimal string/],
    ["max_amount zero", { max_amount: "0.00" }, /^max_amount must be greater than 0\.00/],
    ["min_amount too large", { min_amount: "1000000000.01" }, /^min_amount must be at most 1000000000\.00$/],
    ["max_amount far too large", { max_amount: "99999999999999.00" }, /^max_amount must be at most 1000000000\.00$/],
    [
      "min_amount above max_amount",
      { min_amount: "10.00", max_amount: "5.00" },
      /^min_amount 10\.00 USDC is more than max_amount 5\.00 USDC$/,
    ],
    [
      "min_amount with a fixed amount",
      { amount: "5.00", min_amount: "1.00" },
      /^min_amount applies only when the payer chooses/,
    ],
    [
      "max_amount with line items",
      { line_items: [{ description: "A", unit_amount: "1.00", quantity: 1 }], max_amount: "9.00" },
      /^max_amount applies only when the payer chooses/,
    ],
    [
      "description too long",
      { amount: "1.00", description: "x".repeat(501) },
      /^description must be a string of at most 500 characters/,
    ],
    [
      "success_url not https",
      { amount: "1.00", success_url: "http://shop.example/thanks" },
      /^success_url must be an https URL/,
    ],
    ["metadata not an object", { amount: "1.00", metadata: ["a"] }, /^metadata must be an object/],
    ["metadata value not a string", { amount: "1.00", metadata: { n: 1 } }, /^metadata\.n must be a string/],
    [
      "metadata key too long",
      { amount: "1.00", metadata: { ["k".repeat(41)]: "v" } },
      /^metadata keys must be 1 to 40 characters/,
    ],
    ["an unknown field", { amount: "1.00", reference: "order-1" }, /^unknown field reference$/],
    ["active on create", { amount: "1.00", active: false }, /^unknown field active$/],
  ];

  test.each(bad)("%s: 400 naming the field, nothing stored", async (_name, body, message) => {
    const before = await linkCount();
    const res = await create(alice, body);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toMatch(message);
    expect(await linkCount()).toBe(before);
  });

  test("malformed JSON is a 400; a missing key is a 401", async () => {
    expect((await create(alice, "{nope")).status).toBe(400);
    const anonymous = api(server.url, null);
    const res = await create(anonymous, { amount: "1.00" });
    expect(res.status).toBe(401);
    expect(isErrorBody(res.json)).toBe(true);
  });
});

describe("Idempotency-Key on payment link requests", () => {
  test("a create replayed with the same key returns the same link, marked, and stores one", async () => {
    const key = `plink-${crypto.randomUUID()}`;
    const before = await linkCount();
    const first = await create(alice, { amount: "8.00", metadata: { a: "1" } }, { "idempotency-key": key });
    const second = await create(alice, { metadata: { a: "1" }, amount: "8.00" }, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
    expect(await linkCount()).toBe(before + 1);
  });

  test("the same key with another body is 422; another account's same key is its own", async () => {
    const key = `plink-${crypto.randomUUID()}`;
    expect((await create(alice, { amount: "8.00" }, { "idempotency-key": key })).status).toBe(201);
    const other = await create(alice, { amount: "9.00" }, { "idempotency-key": key });
    expect(other.status).toBe(422);
    expect(isErrorBody(other.json)).toBe(true);
    const bobs = await create(bob, { amount: "9.00" }, { "idempotency-key": key });
    expect(bobs.status).toBe(201);
    expect(bobs.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a deactivation replayed with the same key answers the stored response", async () => {
    const link = (await create(alice, { amount: "4.00" })).json;
    const key = `deactivate-${crypto.randomUUID()}`;
    const off = () =>
      alice(`/api/v1/payment_links/${link.id}`, { body: { active: false }, headers: { "idempotency-key": key } });
    const first = await off();
    const second = await off();
    expect(first.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.text).toBe(first.text);
  });
});

describe("GET /api/v1/payment_links and /{id}", () => {
  /** An account of its own, so the listing holds exactly these five links, newest first. */
  let lister: Api;
  const mine: string[] = [];

  beforeAll(async () => {
    lister = api(server.url, (await server.createAccount("Lister")).apiKey);
    for (let i = 0; i < 5; i++) mine.unshift((await create(lister, { amount: `${i + 1}.00` })).json.id);
  });

  test("lists newest first with has_more, and pages with starting_after", async () => {
    const first = await lister("/api/v1/payment_links?limit=2");
    expect(first.status).toBe(200);
    expect(first.json.object).toBe("list");
    expect(first.json.data.map((l: { id: string }) => l.id)).toEqual(mine.slice(0, 2));
    expect(first.json.has_more).toBe(true);
    const second = await lister(`/api/v1/payment_links?limit=2&starting_after=${mine[1]}`);
    expect(second.json.data.map((l: { id: string }) => l.id)).toEqual(mine.slice(2, 4));
    const last = await lister(`/api/v1/payment_links?limit=2&starting_after=${mine[3]}`);
    expect(last.json.data.map((l: { id: string }) => l.id)).toEqual(mine.slice(4));
    expect(last.json.has_more).toBe(false);
    const all = await lister("/api/v1/payment_links");
    expect(all.json.data).toHaveLength(5);
    const exactly = await lister("/api/v1/payment_links?limit=5");
    expect(exactly.json.data).toHaveLength(5);
    expect(exactly.json.has_more).toBe(false);
  });

  test("each listed link is byte-equal to retrieving it", async () => {
    const list = await lister("/api/v1/payment_links?limit=100");
    const one = await lister(`/api/v1/payment_links/${mine[0]}`);
    expect(one.status).toBe(200);
    expect(list.text).toContain(one.text);
  });

  test("bad list parameters are 400s naming them", async () => {
    const limit = await lister("/api/v1/payment_links?limit=0");
    expect(limit.status).toBe(400);
    expect(limit.json.error).toBe("limit must be a whole number from 1 to 100");
    const cursor = await lister("/api/v1/payment_links?starting_after=pay_1");
    expect(cursor.status).toBe(400);
    expect(cursor.json.error).toBe("starting_after must be the id of a payment link");
    const unknown = await lister("/api/v1/payment_links?starting_after=plink_000000000000000000000000");
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatch(/^starting_after: no payment link/);
  });

  test("another account's link is 404 to get, to list after and to change, and stays as it was", async () => {
    const res = await bob(`/api/v1/payment_links/${mine[0]}`);
    expect(res.status).toBe(404);
    expect(isErrorBody(res.json)).toBe(true);
    const change = await bob(`/api/v1/payment_links/${mine[0]}`, { body: { active: false } });
    expect(change.status).toBe(404);
    expect((await lister(`/api/v1/payment_links/${mine[0]}`)).json.active).toBe(true);
    expect((await bob(`/api/v1/payment_links?starting_after=${mine[0]}`)).status).toBe(400);
    const bobs = await bob("/api/v1/payment_links?limit=100");
    expect(bobs.json.data.map((l: { id: string }) => l.id)).not.toContain(mine[0]);
  });

  test("an unknown or malformed id is 404", async () => {
    expect((await lister("/api/v1/payment_links/plink_000000000000000000000000")).status).toBe(404);
    expect((await lister("/api/v1/payment_links/nope")).status).toBe(404);
  });
});

describe("POST /api/v1/payment_links/{id}", () => {
  test('{"active": false} deactivates and {"active": true} turns it on again', async () => {
    const link = (await create(alice, { amount: "6.00" })).json;
    const off = await alice(`/api/v1/payment_links/${link.id}`, { body: { active: false } });
    expect(off.status).toBe(200);
    expect(off.json).toMatchObject({ id: link.id, object: "payment_link", active: false });
    expect((await alice(`/api/v1/payment_links/${link.id}`)).json.active).toBe(false);
    const on = await alice(`/api/v1/payment_links/${link.id}`, { body: { active: true } });
    expect(on.json.active).toBe(true);
  });

  test.each([
    ["active missing", {}, /^active is required/],
    ["active not a boolean", { active: "false" }, /^active must be true or false$/],
    ["another field", { active: false, amount: "2.00" }, /^unknown field amount$/],
  ])("%s: 400, the link unchanged", async (_name, body, message) => {
    const created = await create(alice, { amount: "6.00" });
    const res = await alice(`/api/v1/payment_links/${created.json.id}`, { body });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toMatch(message);
    expect((await alice(`/api/v1/payment_links/${created.json.id}`)).text).toBe(created.text);
  });
});
