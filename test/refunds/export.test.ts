/**
 * GET /api/v1/refunds.csv over real HTTP (and the payments export's amount_refunded column):
 * columns and values, quoting and formula neutralisation, filters, auth and scoping, and a stream
 * longer than one batch. Received funds and a refund's success are written to the store as the
 * watcher would leave them; the chain side of refunds is tested on anvil.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { REFUND_CSV_COLUMNS } from "../../src/refunds/csv.ts";
import { createRefundStore } from "../../src/refunds/store.ts";
import { parseCsv } from "../support/csv.ts";
import { markReceived } from "../support/refund-rows.ts";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";

const T0 = Date.parse("2031-04-10T09:00:00.000Z");
let now = T0;
const clock = { now: () => now };
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const TX = `0x${"ab".repeat(32)}`;

let server: TestServer;
let alice: Api;
let bob: Api;
let bobPayment: string;
/** Alice's payments: p1 received 25.00, p2 received 10.00. */
const p: string[] = [];
/** Alice's refunds, oldest first: r0 on p1 waiting for its address, r1 on p1 payable, r2 on p2 canceled, r3 on p1 succeeded. */
const r: string[] = [];

async function paid(client: Api, received: bigint): Promise<string> {
  const res = await client("/api/v1/payments", { body: { amount: "25.00" } });
  expect(res.status).toBe(201);
  await markReceived(server.env, res.json.id, received);
  return res.json.id;
}

async function refund(client: Api, payment: string, body: Record<string, unknown>): Promise<string> {
  const res = await client(`/api/v1/payments/${payment}/refunds`, { body });
  expect(res.status).toBe(201);
  return res.json.id;
}

beforeAll(async () => {
  server = await startTestServer({ paymentWindowMs: 24 * HOUR }, { clock });
  alice = api(server.url, (await server.createAccount("Alice")).apiKey);
  bob = api(server.url, (await server.createAccount("Bob")).apiKey);
  p.push(await paid(alice, 25_000_000n), await paid(alice, 10_000_000n));
  r.push(await refund(alice, p[0]!, { amount: "5.00", reason: '=HYPERLINK("http://evil","x")' }));
  now = T0 + HOUR;
  r.push(await refund(alice, p[0]!, { amount: "3.000001", reason: 'late, "sorry"', refund_address: PAYER }));
  now = T0 + 2 * HOUR;
  r.push(await refund(alice, p[1]!, { reason: "-1 item" }));
  expect((await alice(`/api/v1/refunds/${r[2]}/cancel`, { method: "POST" })).status).toBe(200);
  now = T0 + 3 * HOUR;
  r.push(await refund(alice, p[0]!, { amount: "2.00", refund_address: PAYER }));
  // Its transfer seen and counted, as the watcher's success leaves the refund and its payment.
  const store = createRefundStore(server.running.db);
  now = T0 + 4 * HOUR;
  await server.running.db.transaction(async () => {
    expect(await store.seeTransfer(r[3]!, { txHash: TX, logIndex: 3, blockNumber: 77, blockHash: TX }, now)).toBe(true);
    expect(await store.succeed(r[3]!, now)).toBe(true);
    await store.addRefunded(p[0]!, 2_000_000n, now);
  });
  bobPayment = await paid(bob, 1_000_000n);
  await refund(bob, bobPayment, { reason: "bob's" });
});
afterAll(() => server.stop());

/** The export's records as objects keyed by column; the header is checked on the way. */
async function exported(client: Api, query = "") {
  const res = await client(`/api/v1/refunds.csv${query}`);
  expect(res.status).toBe(200);
  const [header, ...rows] = parseCsv(res.text);
  expect(header).toEqual([...REFUND_CSV_COLUMNS]);
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]])) as Record<string, string>);
}

describe("GET /api/v1/refunds.csv", () => {
  test("a dated attachment, one record per refund newest first, every column in order", async () => {
    const res = await alice("/api/v1/refunds.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="refunds-2031-04-10.csv"');
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.text.split("\r\n")[0]).toBe(
      "id,payment,created_at,status,amount,currency,refund_address,tx_hash,block_number,reason,payable_at," +
        "succeeded_at,canceled_at",
    );
    const rows = await exported(alice);
    expect(rows.map((row) => row.id)).toEqual([...r].reverse());
    const [succeeded, canceled, payable, waiting] = rows;
    expect(succeeded).toEqual({
      id: r[3]!,
      payment: p[0]!,
      created_at: iso(T0 + 3 * HOUR),
      status: "succeeded",
      amount: "2.00",
      currency: "USDC",
      refund_address: PAYER,
      tx_hash: TX,
      block_number: "77",
      reason: "",
      payable_at: iso(T0 + 3 * HOUR),
      succeeded_at: iso(T0 + 4 * HOUR),
      canceled_at: "",
    });
    expect(canceled).toMatchObject({ status: "canceled", amount: "10.00", canceled_at: iso(T0 + 2 * HOUR) });
    expect(payable).toMatchObject({ status: "awaiting_payment", amount: "3.000001", refund_address: PAYER });
    expect(payable!.tx_hash).toBe("");
    expect(waiting).toMatchObject({ status: "awaiting_address", refund_address: "", payable_at: "" });
    // The claim link is the payer's capability: no column carries it.
    expect(res.text).not.toContain("/refund/");
  });

  test("quotes commas and quotes, and puts an apostrophe before a formula's first character", async () => {
    const byId = new Map((await exported(alice)).map((row) => [row.id, row]));
    expect(byId.get(r[0]!)!.reason).toBe(`'=HYPERLINK("http://evil","x")`);
    expect(byId.get(r[1]!)!.reason).toBe('late, "sorry"');
    expect(byId.get(r[2]!)!.reason).toBe("'-1 item");
    const text = (await alice("/api/v1/refunds.csv")).text;
    expect(text).toContain(`,"late, ""sorry""",`);
    expect(text).toContain(`,"'=HYPERLINK(""http://evil"",""x"")",`);
  });

  test("filters as the list takes them: status, payment, created[gte], created[lt]", async () => {
    const ids = async (query: string) => (await exported(alice, query)).map((row) => row.id);
    expect(await ids("?status=awaiting_payment")).toEqual([r[1]]);
    expect(await ids(`?payment=${p[0]}`)).toEqual([r[3], r[1], r[0]]);
    expect(await ids(`?payment=${p[1]}&status=canceled`)).toEqual([r[2]]);
    expect(await ids(`?created[gte]=${iso(T0 + HOUR)}&created[lt]=${iso(T0 + 3 * HOUR)}`)).toEqual([r[2], r[1]]);
    expect(await ids("?status=succeeded&created[lt]=2031-04-10")).toEqual([]);
  });

  test.each([
    ["status=paid", /^status must be one of awaiting_address/],
    ["created[gte]=yesterday", /^created\[gte\] must be an ISO 8601 date/],
    ["payment=re_123", /^payment must be the id of a payment$/],
  ])("%s is a 400 naming the parameter", async (query, message) => {
    const res = await alice(`/api/v1/refunds.csv?${query}`);
    expect(res.status).toBe(400);
    expect(isErrorBody(res.json)).toBe(true);
    expect(res.json.error).toMatch(message);
  });

  test("an API key is required; an account sees only its own refunds, and another's payment is a 404", async () => {
    const none = await api(server.url, null)("/api/v1/refunds.csv");
    expect(none.status).toBe(401);
    expect(isErrorBody(none.json)).toBe(true);
    expect((await exported(bob)).map((row) => row.reason)).toEqual(["bob's"]);
    const foreign = await alice(`/api/v1/refunds.csv?payment=${bobPayment}`);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ error: `no payment ${bobPayment}` });
  });

  test("streams more refunds than one batch holds, each once, newest first", async () => {
    const many = await server.createAccount("Many");
    const client = api(server.url, many.apiKey);
    const store = createRefundStore(server.running.db);
    const count = 1_234;
    const payments: string[] = [];
    for (let i = 0; i < Math.ceil(count / 100); i++) payments.push(await paid(client, 1_000_000_000n));
    await server.running.db.transaction(async () => {
      for (let i = 0; i < count; i++)
        await store.insert({
          id: `re_bulk${String(i).padStart(17, "0")}`,
          account_id: many.accountId,
          payment_id: payments[Math.floor(i / 100)]!,
          amount: 1_000n + BigInt(i),
          status: "awaiting_address",
          reason: null,
          metadata: null,
          claim_token_hash: `bulk-${i}`,
          chain_id: 31337,
          refund_address: null,
          payable_after_block: null,
          created_at: T0 + i,
          updated_at: T0 + i,
          payable_at: null,
        });
    });
    const rows = await exported(client);
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((row) => row.id)).size).toBe(count);
    expect(rows[0]!.amount).toBe(`0.00${1000 + count - 1}`);
    const created = rows.map((row) => Date.parse(row.created_at!));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });
});

describe("GET /api/v1/payments.csv", () => {
  test("amount_refunded, last, is what succeeded refunds paid back", async () => {
    const res = await alice("/api/v1/payments.csv");
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(res.text);
    expect(header!.at(-1)).toBe("amount_refunded");
    const refunded = Object.fromEntries(rows.map((row) => [row[0], row.at(-1)]));
    expect(refunded).toEqual({ [p[0]!]: "2.00", [p[1]!]: "0.00" });
  });
});
