/** The dashboard's home, payments list and CSV download over real HTTP, signed in as a real user. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPaymentStore } from "../../src/payments/store.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { insertPayment, paymentRow } from "../support/payment-rows.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

const DAY = 86_400_000;
const TODAY = Date.parse("2031-08-20T00:00:00.000Z");
const clock = { now: () => TODAY + 15 * 3_600_000 };

let server: TestServer;
let alice: DashboardClient;
let bob: DashboardClient;
/** Alice's payments, oldest first: 30 of them, one a day back from today. */
const rows: Array<ReturnType<typeof paymentRow>> = [];
let bobRef: string;

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  const a = await server.createAccount("Alice");
  const b = await server.createAccount("Bob");
  alice = await signIn(server.url, await createDashboardUser(server.env, a.accountId));
  bob = await signIn(server.url, await createDashboardUser(server.env, b.accountId));
  const store = createPaymentStore(server.running.db);
  for (let i = 29; i >= 0; i--) {
    const status = i === 3 ? "underpaid" : i % 2 ? "confirmed" : "pending";
    const row = await insertPayment(
      store,
      paymentRow(a.accountId, TODAY - i * DAY + 3_600_000, {
        status,
        reference: `order-${100 + i}`,
        customer_email: i === 5 ? "Carol@Example.com" : null,
        amount_received: status === "confirmed" ? 25_000_000n : null,
        fee_bps: 100,
      }),
    );
    if (status === "confirmed") await store.recordSettled(row.id, 25_000_000n, row.created_at + 60_000);
    rows.push(row);
  }
  bobRef = "bob-<script>secret</script>";
  await insertPayment(store, paymentRow(b.accountId, TODAY, { reference: bobRef, status: "failed" }));
});
afterAll(() => server.stop());

const ids = (html: string) => [...html.matchAll(/href="\/dashboard\/payments\/(0x[0-9a-f]{64})"/g)].map((m) => m[1]);
const newestFirst = () => rows.map((r) => r.id).reverse();

describe("GET /dashboard", () => {
  test("settled figures (UTC days), counts by status and what needs attention", async () => {
    const res = await alice.get("/dashboard");
    expect(res.status).toBe(200);
    const html = await res.text();
    // Confirmed payments are the odd days back but the 3rd (underpaid): none today, days 1 and 5 in the 7.
    expect(html).toContain("Today is 2031-08-20 (UTC)");
    expect(html).toMatch(/Last 7 days<\/h3>\s*<p class="net">49\.50 USDC/); // 2 x 25.00 less 1% each
    expect(html).toMatch(/Last 30 days<\/h3>\s*<p class="net">346\.50 USDC/); // 14 x 24.75
    expect(html).toContain("<dt>Fees</dt><dd>3.50 USDC</dd>");
    expect(html).toMatch(/badge confirmed">confirmed<\/span>\s*<span class="count">14</);
    expect(html).toMatch(/badge underpaid">underpaid<\/span>\s*<span class="count">1</);
    expect(html).toContain('role="img" aria-labelledby="chart-title chart-summary"');
    expect(html).toContain("<title>2031-08-19: 25.00 USDC</title>");
    expect(ids(html.slice(html.indexOf("Needs attention")))).toEqual([rows[26]!.id]);
    expect(html).not.toContain("bob-");
  });

  test("another account's home shows only its own", async () => {
    const html = await (await bob.get("/dashboard")).text();
    expect(html).toMatch(/badge failed">failed<\/span>\s*<span class="count">1</);
    expect(html).toContain("bob-&#60;script&#62;secret&#60;/script&#62;"); // escaped, never markup
    expect(ids(html)).not.toContain(rows[0]!.id);
  });

  test("without a session it is the sign-in page first", async () => {
    const res = await fetch(`${server.url}/dashboard/payments?status=failed`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/login?next=%2Fdashboard%2Fpayments%3Fstatus%3Dfailed");
  });
});

describe("GET /dashboard/payments", () => {
  test("25 newest first, Older keeps the filters, Newer leads back", async () => {
    const first = await (await alice.get("/dashboard/payments")).text();
    expect(ids(first)).toEqual(newestFirst().slice(0, 25));
    const older = /href="(\/dashboard\/payments\?before=[^"]+)"/.exec(first)![1]!;
    const second = await (await alice.get(older.replaceAll("&#38;", "&"))).text();
    expect(ids(second)).toEqual(newestFirst().slice(25));
    const newer = /href="(\/dashboard\/payments\?after=[^"]+)"/.exec(second)![1]!;
    expect(ids(await (await alice.get(newer)).text())).toEqual(newestFirst().slice(0, 25));

    const filtered = await (await alice.get("/dashboard/payments?status=confirmed&from=2031-07-25")).text();
    expect(filtered).toContain('<option value="confirmed" selected>');
    expect(filtered).toContain('value="2031-07-25"');
    expect(ids(filtered)).toEqual(
      newestFirst().filter((id) => {
        const r = rows.find((x) => x.id === id)!;
        return r.status === "confirmed" && r.created_at >= Date.parse("2031-07-25");
      }),
    );
    expect(filtered).toContain('href="/dashboard/payments.csv?status=confirmed&#38;from=2031-07-25"');
  });

  test("search by reference, email (any case) and id; an empty result says so", async () => {
    expect(ids(await (await alice.get("/dashboard/payments?q=order-107")).text())).toEqual([rows[22]!.id]);
    expect(ids(await (await alice.get("/dashboard/payments?q=carol%40example.COM")).text())).toEqual([rows[24]!.id]);
    expect(ids(await (await alice.get(`/dashboard/payments?q=${rows[3]!.id}`)).text())).toEqual([rows[3]!.id]);
    const none = await (await alice.get("/dashboard/payments?q=nothing-like-it")).text();
    expect(none).toContain("No payments match these filters.");
    expect(ids(await (await bob.get("/dashboard/payments?q=order-107")).text())).toEqual([]);
  });

  test.each([
    ["status=paid", "status must be one of pending"],
    ["from=20-08-2031", "from must be a date such as 2026-11-01"],
    ["to=2031-02-30", "to must be a date such as 2026-11-01"],
    ["from=2031-08-02&to=2031-08-01", "to must be on or after from"],
    ["before=nope", "before must be a payment id"],
    [`before=0x${"0".repeat(64)}`, `before: no payment 0x${"0".repeat(64)}`],
  ])("%s is a 400 page naming the field, with the form kept", async (query, message) => {
    const res = await alice.get(`/dashboard/payments?${query}`);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain(`<p class="notice bad" role="alert">${message}`);
    expect(html).toContain('<form class="card filters"');
    expect(ids(html)).toEqual([]);
  });

  test("another account's payment as a cursor is refused like an unknown one", async () => {
    const res = await bob.get(`/dashboard/payments?before=${rows[0]!.id}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`before: no payment ${rows[0]!.id}`);
  });
});

describe("GET /dashboard/payments.csv", () => {
  test("the signed-in account's payments under the page's filters, as a dated attachment", async () => {
    const res = await alice.get("/dashboard/payments.csv?status=underpaid");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="payments-2031-08-20.csv"');
    const lines = (await res.text()).trimEnd().split("\r\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]!.startsWith(`${rows[26]!.id},`)).toBe(true);
    const bobs = await (await bob.get("/dashboard/payments.csv")).text();
    expect(bobs).not.toContain("order-");
  });

  test("a bad filter is a 400 page; no session is the sign-in page; an API key is no session", async () => {
    const bad = await alice.get("/dashboard/payments.csv?to=tomorrow");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("to must be a date such as 2026-11-01");
    const anonymous = await fetch(`${server.url}/dashboard/payments.csv`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    const key = (await server.createAccount("Keyed")).apiKey;
    const keyed = await api(server.url, key)("/dashboard/payments.csv", { redirect: "manual" });
    expect(keyed.status).toBe(303);
    expect((await api(server.url, key)("/api/v1/payments.csv")).status).toBe(200);
  });
});
