/** GET /api/v1/payments.csv over real HTTP: columns, quoting, formula neutralisation, filters, auth, streaming. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { CSV_COLUMNS, paymentsCsvStream } from "../../src/payments/csv.ts";
import { createPaymentSearch } from "../../src/payments/search.ts";
import { createSearchStore, type ExportPayment } from "../../src/payments/search-store.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { parseCsv } from "../support/csv.ts";
import { payThroughLink } from "../support/link-form.ts";
import { insertPayment, paymentRow } from "../support/payment-rows.ts";
import {
  type Api,
  api,
  isErrorBody,
  rawApi,
  startTestServer,
  type TestAccount,
  type TestServer,
} from "../support/server.ts";

const T0 = Date.parse("2031-04-10T09:00:00.000Z");
let now = T0;
const clock = { now: () => now };

let server: TestServer;
let alice: Api;
let bob: Api;
let bulk: TestAccount | undefined;
const BULK_ROWS = 2_500;

/** An account with 2,500 payments written straight into the server's database, made on first use. */
async function bulkAccount(): Promise<TestAccount> {
  if (bulk) return bulk;
  const account = await server.createAccount("Bulk");
  const store = createPaymentStore(server.running.db);
  await server.running.db.transaction(async () => {
    for (let i = 0; i < BULK_ROWS; i++)
      await insertPayment(store, paymentRow(account.accountId, T0 + (i % 700) * 1000, { reference: `r${i}` }));
  });
  bulk = account;
  return account;
}
/** Alice's payments made through the API, oldest first. */
const made: Array<{ id: string; body: Record<string, unknown> }> = [];

/** The export's records as objects keyed by column. */
async function exported(client: Api, query = "") {
  const res = await client(`/api/v1/payments.csv${query}`);
  expect(res.status).toBe(200);
  const [header, ...rows] = parseCsv(res.text);
  expect(header).toEqual([...CSV_COLUMNS]);
  return rows.map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i]])) as Record<string, string>);
}

beforeAll(async () => {
  // Payments made over four hours of this clock: a day's window keeps the first one pending while
  // the expiry loop runs meanwhile.
  server = await startTestServer({ paymentWindowMs: 24 * 3_600_000 }, { clock });
  const a = await server.createAccount("Alice");
  alice = api(server.url, a.apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
  const bodies: Array<Record<string, unknown>> = [
    { amount: "10.00", reference: '=HYPERLINK("http://evil","x")', description: "plain" },
    { amount: "11.00", reference: "+1-2", description: 'says "hi", then\r\nleaves' },
    { amount: "12.00", reference: "-3", invoice_number: "@SUM(A1)", customer_email: "buyer@example.com" },
    { amount: "13.00", reference: "\tTAB", description: "\rCR first" },
    { amount: "14.50", reference: "ok, fine", invoice_number: "INV-9" },
  ];
  for (const [i, body] of bodies.entries()) {
    now = T0 + i * 3_600_000;
    const res = await alice("/api/v1/payments", { body });
    expect(res.status).toBe(201);
    made.push({ id: res.json.id, body });
  }
  now = T0;
  await bob("/api/v1/payments", { body: { amount: "99.00", reference: "bob's" } });
});
afterAll(async () => await server.stop());

describe("GET /api/v1/payments.csv", () => {
  test("a dated attachment, one record per payment newest first, every column in order", async () => {
    const res = await alice("/api/v1/payments.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="payments-2031-04-10.csv"');
    const rows = await exported(alice);
    expect(rows.map((r) => r.id)).toEqual(made.map((m) => m.id).reverse());
    expect(rows.at(-1)).toEqual({
      id: made[0]!.id,
      created_at: "2031-04-10T09:00:00.000Z",
      status: "pending",
      amount: "10.00",
      amount_received: "",
      fee: "0.00",
      net: "0.00",
      currency: "USDC",
      reference: `'=HYPERLINK("http://evil","x")`,
      invoice_number: "",
      description: "plain",
      customer_email: "",
      payment_link: "",
      transfer_tx_hashes: "",
      settlement_tx_hash: "",
      amount_refunded: "0.00",
    });
  });

  test("quotes commas, quotes and line breaks, and puts an apostrophe before = + - @ tab and CR", async () => {
    const byId = new Map((await exported(alice)).map((r) => [r.id, r]));
    const row = (i: number) => byId.get(made[i]!.id)!;
    expect(row(1).reference).toBe("'+1-2");
    expect(row(1).description).toBe('says "hi", then\r\nleaves');
    expect(row(2).reference).toBe("'-3");
    expect(row(2).invoice_number).toBe("'@SUM(A1)");
    expect(row(2).customer_email).toBe("buyer@example.com");
    expect(row(3).reference).toBe("'\tTAB");
    expect(row(3).description).toBe("'\rCR first");
    expect(row(4).reference).toBe("ok, fine");
    expect(row(4).amount).toBe("14.50");
    const res = await alice("/api/v1/payments.csv");
    expect(res.text).toContain(`,"says ""hi"", then\r\nleaves",`);
    expect(res.text).toContain(`,"'=HYPERLINK(""http://evil"",""x"")",`);
  });

  test("filters as the list takes them: status, created[gte], created[lt], and q", async () => {
    const ids = async (query: string) => (await exported(alice, query)).map((r) => r.id);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await ids(`?created[gte]=${iso(T0 + 3_600_000)}&created[lt]=${iso(T0 + 3 * 3_600_000)}`)).toEqual([
      made[2]!.id,
      made[1]!.id,
    ]);
    expect(await ids("?status=pending&q=INV-9")).toEqual([made[4]!.id]);
    expect(await ids("?q=BUYER@example.com")).toEqual([made[2]!.id]);
    expect(await ids(`?q=${made[3]!.id}`)).toEqual([made[3]!.id]);
    expect(await ids("?status=confirmed")).toEqual([]);
  });

  test.each([
    ["status=paid", "status=paid", /^status must be one of pending/],
    ["created[gte]=yesterday", "created[gte]=yesterday", /^created\[gte\] must be an ISO 8601 date/],
    ["created[lt]=2031-02-30", "created[lt]=2031-02-30", /^created\[lt\] must be an ISO 8601 date/],
    [
      "q of 501 characters",
      `q=${"x".repeat(501)}`,
      /^q must be a payment id, reference, invoice number or customer email of 1 to 500/,
    ],
    ["an empty q", "q=", /^q must be/],
  ])("%s is a 400 naming the parameter", async (_name, query, message) => {
    const res = await alice(`/api/v1/payments.csv?${query}`);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toMatch(message);
  });

  test("a payment made through a payment link names the link", async () => {
    // An account of its own: the other tests count Alice's payments.
    const shop = api(server.url, (await server.createAccount("Link shop")).apiKey);
    const link = await shop("/api/v1/payment_links", { body: { amount: "4.00", description: "Gift card" } });
    expect(link.status).toBe(201);
    const paymentId = await payThroughLink(server.url, link.json.id);
    const [row] = await exported(shop, `?q=${paymentId}`);
    expect(row).toMatchObject({ id: paymentId, amount: "4.00", payment_link: link.json.id });
  });

  test("an API key is required, and an account sees only its own payments", async () => {
    const none = await api(server.url, null)("/api/v1/payments.csv");
    expect(none.status).toBe(401);
    expect(isErrorBody(none.json)).toBe(true);
    const bobs = await exported(bob);
    expect(bobs.map((r) => r.reference)).toEqual(["bob's"]);
    expect(await exported(bob, `?q=${made[0]!.id}`)).toEqual([]);
  });

  test("settled payments carry fee, net and their transaction hashes", async () => {
    // An account of its own: the other tests count Alice's payments.
    const settled = await server.createAccount("Settled");
    const store = createPaymentStore(server.running.db);
    const row = await insertPayment(
      store,
      paymentRow(settled.accountId, T0 - 1, { status: "confirmed", amount_received: 10_000_001n, fee_bps: 100 }),
    );
    const db = server.running.db;
    const tx = (n: number) => `0x${String(n).repeat(64)}`;
    for (const [i, hash] of [tx(1), tx(2)].entries())
      await db.run(
        sql`INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at, created_at)
         VALUES (${hash}, 0, ${row.id}, '0x2222222222222222222222222222222222222222', 5000000, ${10 + i}, '0xbb', ${T0}, ${T0})`,
      );
    await db.run(
      sql`INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash, credited_at, created_at)
       VALUES (${tx(3)}, 0, ${row.id}, '0x2222222222222222222222222222222222222222', 1, 12, '0xbb', NULL, ${T0})`,
    );
    await db.run(
      sql`INSERT INTO settlements (payment_id, nonce, state, tx_hash, tx_hashes, raw_tx, max_fee, priority_fee, amount, submitted_at, updated_at)
       VALUES (${row.id}, 0, 'mined', ${tx(4)}, '[]', '0x', '1', '1', 10000001, ${T0}, ${T0})`,
    );
    await store.recordSettled(row.id, 10_000_001n, T0);

    const [exportedRow] = (await exported(api(server.url, settled.apiKey), `?q=${row.id}`)) as [Record<string, string>];
    expect(exportedRow.amount_received).toBe("10.000001");
    expect(exportedRow.fee).toBe("0.10"); // floor(10000001 * 100 / 10000) = 100000 micro
    expect(exportedRow.net).toBe("9.900001");
    expect(exportedRow.transfer_tx_hashes).toBe(`${tx(1)};${tx(2)}`); // credited only, in chain order
    expect(exportedRow.settlement_tx_hash).toBe(tx(4));
  });

  test("streams thousands of rows in chunks, each once, newest first", async () => {
    const bulk = await bulkAccount();
    const count = BULK_ROWS;
    const res = await rawApi(server.url, bulk.apiKey)("/api/v1/payments.csv");
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let chunks = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks++;
      text += decoder.decode(value, { stream: true });
    }
    expect(chunks).toBeGreaterThan(1);
    const rows = parseCsv(text).slice(1);
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((r) => r[0])).size).toBe(count);
    const created = rows.map((r) => Date.parse(r[1]!));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  test("the stream reads the next batch from the database only when the reader asks for more", async () => {
    const search = createPaymentSearch({ store: createSearchStore(server.running.db), clock });
    let pulled = 0;
    const batches = search.exportBatches((await bulkAccount()).accountId, {}, 100);
    const counting: AsyncIterator<ExportPayment[]> = {
      next: async () => {
        const next = await batches.next();
        if (!next.done) pulled++;
        return next;
      },
    };
    const reader = paymentsCsvStream(counting).getReader();
    await reader.read();
    expect(pulled).toBeLessThanOrEqual(2); // the chunk read, and at most one queued ahead of it
    let text = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(pulled).toBe(25); // 2,500 rows, 100 a batch
    expect(text.endsWith("\r\n")).toBe(true);
  });
});
