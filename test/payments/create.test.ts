import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { type Api, api, isErrorBody, startTestServer, TEST_BASE_URL, type TestServer } from "../support/server.ts";

const WINDOW_MS = 45 * 60_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 24 * 60 * 60_000;

let server: TestServer;
let merchant: Api;
/** An account that only ever sends rejected requests: its list must stay empty. */
let rejecter: Api;

beforeAll(async () => {
  server = await startTestServer({ paymentWindowMs: WINDOW_MS });
  merchant = api(server.url, (await server.createAccount("Shop")).apiKey);
  const rejected = await server.createAccount("Rejected");
  rejecterId = rejected.accountId;
  rejecter = api(server.url, rejected.apiKey);
});
afterAll(async () => await server.stop());

const create = (body: unknown, headers?: Record<string, string>) => merchant("/api/v1/payments", { body, headers });

/** Payments stored for the rejecter account, read from the SQLite file itself. */
let rejecterId: string;
const rejecterRows = async () =>
  (await server.running.db.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM payments WHERE account_id = ${rejecterId}`,
  ))!.n;

/** Posts as the rejecter; asserts a 400 `{"error"}` and that nothing was stored. */
async function rejected(body: unknown, message?: string | RegExp) {
  const before = await rejecterRows();
  const res = await rejecter("/api/v1/payments", { method: "POST", body });
  expect(res.status).toBe(400);
  expect(isErrorBody(res.json)).toBe(true);
  if (typeof message === "string") expect(res.json.error).toBe(message);
  else if (message) expect(res.json.error).toMatch(message);
  expect(await rejecterRows()).toBe(before);
  return res;
}

const item = (description: string, unit_amount: string, quantity: unknown) => ({ description, unit_amount, quantity });

describe("POST /api/v1/payments: happy path", () => {
  test("201 with the payment object of spec §2.1", async () => {
    const before = Date.now();
    const res = await create({ amount: "25.00" });
    const after = Date.now();
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toContain("application/json");
    const p = res.json;
    expect(p.status).toBe("pending");
    expect(p.amount).toBe("25.00");
    expect(p.amount_received).toBeNull();
    expect(p.currency).toBe("USDC");
    expect(p.id).toMatch(/^0x[0-9a-f]{64}$/);
    expect(p.pay_url).toBe(`${TEST_BASE_URL}/pay/${p.id}`);
    expect(p.deposit_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(Number.isInteger(p.fee_bps)).toBe(true);
    expect(p.fee_bps).toBe(0);
    expect(p.created_at).toMatch(ISO_MS);
    expect(p.expires_at).toMatch(ISO_MS);
    const created = Date.parse(p.created_at);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(after);
    expect(Date.parse(p.expires_at) - created).toBe(WINDOW_MS);
  });

  test("ids and deposit addresses differ between payments", async () => {
    const [a, b] = await Promise.all([create({ amount: "1.00" }), create({ amount: "1.00" })]);
    expect(a!.json.id).not.toBe(b!.json.id);
    expect(a!.json.deposit_address).not.toBe(b!.json.deposit_address);
  });

  test("every optional field is echoed; null when absent", async () => {
    const absent = (await create({ amount: "5.00" })).json;
    for (const field of [
      "description",
      "reference",
      "success_url",
      "customer_email",
      "customer_name",
      "invoice_number",
      "due_at",
      "metadata",
      "line_items",
    ]) {
      expect(absent).toHaveProperty(field);
      expect(absent[field]).toBeNull();
    }
    const dueAt = new Date(Date.now() + 2 * DAY_MS).toISOString();
    const sent = {
      amount: "5.00",
      description: "Two coffees",
      reference: "order-1234",
      success_url: "https://shop.example.com/thanks?order=1234",
      customer_email: "payer@example.com",
      customer_name: "Ada Lovelace",
      invoice_number: "INV-2024-001",
      due_at: dueAt,
      metadata: { order_id: "1234" },
    };
    const res = await create(sent);
    expect(res.status).toBe(201);
    for (const [field, value] of Object.entries(sent)) expect(res.json[field]).toEqual(value);
  });

  test("line_items derive the amount: 2 x 12.50 + 1 x 0.99 = 25.99, each with its amount", async () => {
    const res = await create({ line_items: [item("Widget", "12.50", 2), item("Sticker", "0.99", 1)] });
    expect(res.status).toBe(201);
    expect(res.json.amount).toBe("25.99");
    expect(res.json.line_items).toEqual([
      { description: "Widget", unit_amount: "12.50", quantity: 2, amount: "25.00" },
      { description: "Sticker", unit_amount: "0.99", quantity: 1, amount: "0.99" },
    ]);
  });

  test("amount and line_items that agree are accepted", async () => {
    const res = await create({ amount: "25.99", line_items: [item("Widget", "12.50", 2), item("Sticker", "0.99", 1)] });
    expect(res.status).toBe(201);
    expect(res.json.amount).toBe("25.99");
  });

  test("50 line items are accepted", async () => {
    const items = Array.from({ length: 50 }, (_, i) => item(`Item ${i}`, "1.00", 1));
    const res = await create({ line_items: items });
    expect(res.status).toBe(201);
    expect(res.json.amount).toBe("50.00");
    expect(res.json.line_items).toHaveLength(50);
  });

  test("the largest amount, 1000000000.00, is accepted", async () => {
    const res = await create({ amount: "1000000000.00" });
    expect(res.status).toBe(201);
    expect(res.json.amount).toBe("1000000000.00");
  });

  test("the smallest amount, 0.01, is accepted", async () => {
    expect((await create({ amount: "0.01" })).json.amount).toBe("0.01");
  });

  test("a description of 500 characters is accepted", async () => {
    const description = "d".repeat(500);
    const res = await create({ amount: "1.00", description });
    expect(res.status).toBe(201);
    expect(res.json.description).toBe(description);
  });

  test("an https success_url is accepted", async () => {
    const res = await create({ amount: "1.00", success_url: "https://example.com/done" });
    expect(res.status).toBe(201);
    expect(res.json.success_url).toBe("https://example.com/done");
  });
});

describe("POST /api/v1/payments: due_at", () => {
  test("due_at beyond the window extends expires_at to due_at", async () => {
    const dueAt = new Date(Date.now() + 3 * DAY_MS).toISOString();
    const res = await create({ amount: "10.00", due_at: dueAt });
    expect(res.status).toBe(201);
    expect(res.json.due_at).toBe(dueAt);
    expect(res.json.expires_at).toBe(dueAt);
  });

  test("due_at inside the window leaves expires_at at created_at + window", async () => {
    const dueAt = new Date(Date.now() + 5 * 60_000).toISOString();
    const res = await create({ amount: "10.00", due_at: dueAt });
    expect(res.status).toBe(201);
    expect(res.json.due_at).toBe(dueAt);
    expect(Date.parse(res.json.expires_at) - Date.parse(res.json.created_at)).toBe(WINDOW_MS);
  });

  test("a bare date means the end of that day, UTC", async () => {
    const date = new Date(Date.now() + 10 * DAY_MS).toISOString().slice(0, 10);
    const res = await create({ amount: "10.00", due_at: date });
    expect(res.status).toBe(201);
    expect(res.json.due_at).toBe(`${date}T23:59:59.999Z`);
    expect(res.json.expires_at).toBe(`${date}T23:59:59.999Z`);
  });

  test("a date-time with an offset is normalised to UTC", async () => {
    const when = new Date(Date.now() + 2 * DAY_MS);
    when.setUTCMilliseconds(0);
    const local = `${new Date(when.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const res = await create({ amount: "10.00", due_at: local });
    expect(res.status).toBe(201);
    expect(res.json.due_at).toBe(when.toISOString());
  });

  test("due_at in the past is 400", async () => {
    await rejected({ amount: "10.00", due_at: new Date(Date.now() - 60_000).toISOString() }, /due_at/);
    await rejected({ amount: "10.00", due_at: "2001-01-01" }, /due_at/);
  });

  test("due_at more than a year ahead is 400", async () => {
    await rejected({ amount: "10.00", due_at: new Date(Date.now() + 367 * DAY_MS).toISOString() }, /due_at/);
    await rejected({ amount: "10.00", due_at: new Date(Date.now() + 2 * 365 * DAY_MS).toISOString().slice(0, 10) });
  });

  test("a due_at that is not ISO 8601 is 400", async () => {
    await rejected({ amount: "10.00", due_at: "next tuesday" }, /due_at/);
    await rejected({ amount: "10.00", due_at: "2030-13-45" });
  });
});

describe("POST /api/v1/payments: metadata", () => {
  test("metadata is returned as sent minus the whitespace between tokens: key order, unicode and escapes kept", async () => {
    const metadata = `{ "b":"1", "2":"two","a":"caf\\u00e9 \\"quoted\\" back\\\\slash \\/ tab\\t","emoji":"💸 naïve 日本","1" : "one" }`;
    const stored = `{"b":"1","2":"two","a":"caf\\u00e9 \\"quoted\\" back\\\\slash \\/ tab\\t","emoji":"💸 naïve 日本","1":"one"}`;
    const res = await create(`{"amount":"25.00","metadata":${metadata}}`);
    expect(res.status).toBe(201);
    expect(res.text).toContain(`"metadata":${stored}`);
    expect(res.json.metadata).toEqual(JSON.parse(metadata));
    const retrieved = await merchant(`/api/v1/payments/${res.json.id}`);
    expect(retrieved.text).toContain(`"metadata":${stored}`);
  });

  test("250 KB of whitespace inside metadata is not stored: the payment keeps the tokens only", async () => {
    const res = await create(`{"amount":"25.00","metadata":{"a":"1",${" \n".repeat(125_000)}"b":"2"}}`);
    expect(res.status).toBe(201);
    expect(res.text).toContain(`"metadata":{"a":"1","b":"2"}`);
    const row = (await server.running.db.get<{ metadata: string }>(
      sql`SELECT metadata FROM payments WHERE id = ${res.json.id}`,
    ))!;
    expect(row.metadata).toBe(`{"a":"1","b":"2"}`);
  });

  test.each([
    ["the same key twice", `{"a":"1","a":"2"}`, "a"],
    ["the same key, once escaped", `{"order":"1","\\u006frder":"2"}`, "order"],
  ])("metadata with %s is 400 and creates nothing", async (_name, metadata, key) => {
    await rejected(`{"amount":"25.00","metadata":${metadata}}`, `metadata has the key "${key}" more than once`);
  });

  test("an empty metadata object is returned as {}", async () => {
    const res = await create(`{"amount":"25.00","metadata":{}}`);
    expect(res.status).toBe(201);
    expect(res.text).toContain(`"metadata":{}`);
  });

  test("50 keys, 40-character keys and 500-character values are accepted", async () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, "0")}${"k".repeat(38)}`, "v".repeat(500)]),
    );
    const res = await create({ amount: "1.00", metadata });
    expect(res.status).toBe(201);
    expect(res.json.metadata).toEqual(metadata);
  });

  test("51 keys is 400", async () => {
    await rejected(
      { amount: "1.00", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
      /metadata/,
    );
  });

  test("a 41-character key is 400", async () => {
    await rejected({ amount: "1.00", metadata: { ["k".repeat(41)]: "v" } }, /metadata/);
  });

  test("a 501-character value is 400", async () => {
    await rejected({ amount: "1.00", metadata: { k: "v".repeat(501) } }, /metadata/);
  });

  test.each([
    ["a number", { n: 1 }],
    ["a boolean", { b: true }],
    ["null", { z: null }],
    ["an object", { o: { nested: "x" } }],
    ["an array", { a: ["x"] }],
  ])("a value that is %s is 400", async (_name, metadata) => {
    await rejected({ amount: "1.00", metadata }, /metadata/);
  });

  test.each([
    ["an array", []],
    ["a string", "order=1"],
    ["a number", 7],
  ])("metadata that is %s is 400", async (_name, metadata) => {
    await rejected({ amount: "1.00", metadata }, /metadata/);
  });
});

describe("POST /api/v1/payments: line item rules", () => {
  test("amount differing from the line_items total is 400 naming both figures", async () => {
    await rejected(
      { amount: "25.00", line_items: [item("A", "10.00", 2), item("B", "10.00", 1)] },
      "amount 25.00 USDC does not match line_items total 30.00 USDC",
    );
  });

  test("51 line items is 400", async () => {
    await rejected({ line_items: Array.from({ length: 51 }, (_, i) => item(`Item ${i}`, "1.00", 1)) }, /line_items/);
  });

  test.each([
    ["1.5", 1.5],
    ['"2"', "2"],
    ["0", 0],
    ["-1", -1],
    ["null", null],
    ["1000001", 1_000_001],
  ])("quantity %s is 400", async (_name, quantity) => {
    await rejected({ line_items: [item("A", "1.00", quantity)] }, /quantity/);
  });

  test("a missing unit_amount is 400", async () => {
    await rejected({ line_items: [{ description: "A", quantity: 1 }] }, /unit_amount/);
  });

  test("a missing description is 400", async () => {
    await rejected({ line_items: [{ unit_amount: "1.00", quantity: 1 }] }, /description/);
  });

  test("a missing quantity is 400", async () => {
    await rejected({ line_items: [{ description: "A", unit_amount: "1.00" }] }, /quantity/);
  });

  test.each(["12.5", "12", "0.00", "-1.00", "1000000000.01"])("unit_amount %p is 400", async (unit) => {
    await rejected({ line_items: [item("A", unit, 1)] }, /unit_amount/);
  });

  test("an unknown field on a line item is 400", async () => {
    await rejected({ line_items: [{ ...item("A", "1.00", 1), sku: "X" }] });
  });

  test("a line_items total above 1000000000.00 is 400", async () => {
    await rejected({ line_items: [item("A", "600000000.00", 2)] });
  });
});

describe("POST /api/v1/payments: validation", () => {
  test.each([
    ['"25"', "25"],
    ['"25.0"', "25.0"],
    ['"25.000"', "25.000"],
    ['"-1.00"', "-1.00"],
    ['"abc"', "abc"],
    ["25 (a number)", 25],
    ['"0.00"', "0.00"],
    ['"1000000000.01"', "1000000000.01"],
    ['" 25.00"', " 25.00"],
    ['"1e3"', "1e3"],
    ['""', ""],
  ])("amount %s is 400", async (_name, amount) => {
    await rejected({ amount }, /amount/);
  });

  test("neither amount nor line_items is 400", async () => {
    await rejected({ description: "nothing to pay" }, /amount/);
  });

  test("a description of 501 characters is 400", async () => {
    await rejected({ amount: "1.00", description: "d".repeat(501) }, /description/);
  });

  test.each(["http://example.com/done", "ftp://example.com/done", "javascript:alert(1)", "not a url", "https://"])(
    "success_url %p is 400",
    async (success_url) => {
      await rejected({ amount: "1.00", success_url }, /success_url/);
    },
  );

  test.each(["not-an-email", "a@", "@b.com", "two words@example.com"])(
    "customer_email %p is 400",
    async (customer_email) => {
      await rejected({ amount: "1.00", customer_email }, /customer_email/);
    },
  );

  test("an unknown top-level field is 400", async () => {
    await rejected({ amount: "1.00", colour: "blue" }, /colour/);
  });

  test("malformed JSON is 400 with an error body", async () => {
    await rejected("{bad json", /JSON/);
    await rejected('{"amount": "1.00",}', /JSON/);
  });

  test("an empty body is 400", async () => {
    await rejected("");
  });

  test("no body at all is 400", async () => {
    const res = await rejecter("/api/v1/payments", { method: "POST" });
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
  });

  test.each([
    ["an array", "[]"],
    ["a string", '"25.00"'],
    ["null", "null"],
  ])("a body that is %s is 400", async (_name, body) => {
    await rejected(body);
  });
});

describe("POST /api/v1/payments: security", () => {
  test("without an API key it is 401 and stores nothing", async () => {
    const count = async () => (await server.running.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payments`))!.n;
    const before = await count();
    const res = await api(server.url, null)("/api/v1/payments", { body: { amount: "1.00" } });
    expect(res.status).toBe(401);
    expect(isErrorBody(res.json)).toBe(true);
    expect(await count()).toBe(before);
  });

  test("an unauthenticated request with an invalid body is 401, not 400", async () => {
    const res = await api(server.url, null)("/api/v1/payments", { body: "{bad" });
    expect(res.status).toBe(401);
  });

  test("an error never echoes a stack or SQL", async () => {
    const res = await rejecter("/api/v1/payments", { body: { amount: "abc" } });
    expect(res.text).not.toMatch(/sqlite|\bat .*\.ts|stack/i);
  });
});

describe("POST /api/v1/payments: nothing written on a 400", () => {
  // Runs last: every rejection above was sent by the rejecter account.
  test("the account that only sent rejected requests lists no payments", async () => {
    const list = await rejecter("/api/v1/payments?limit=100");
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([]);
    expect(list.json.has_more).toBe(false);
  });
});
