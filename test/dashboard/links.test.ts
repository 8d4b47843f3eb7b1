/**
 * The dashboard's payment links pages over real HTTP against the running server, signed in as
 * real dashboard users: list (and its empty state and pages), create from the form (fixed and
 * payer-chosen), refusals that keep what was typed, the link's page with its URL and QR,
 * deactivating and activating, and another account's links answering 404 and staying unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { payThroughLink } from "../support/link-form.ts";
import { type Api, api, startTestServer, TEST_BASE_URL, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: DashboardClient;
let merchantApi: Api;
let stranger: DashboardClient;

beforeAll(async () => {
  server = await startTestServer();
  const shop = await server.createAccount("Links Shop");
  merchantApi = api(server.url, shop.apiKey);
  merchant = await signIn(server.url, await createDashboardUser(server.env, shop.accountId));
  const other = await server.createAccount("Other Shop");
  stranger = await signIn(server.url, await createDashboardUser(server.env, other.accountId));
});
afterAll(() => server.stop());

const linkCount = async () =>
  (await server.running.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payment_links`))!.n;

/** Creates a link through the form; returns its id from the redirect. */
async function createThroughForm(form: Record<string, string>): Promise<string> {
  const res = await merchant.post("/dashboard/links/new", form);
  expect(res.status).toBe(303);
  const id = /^\/dashboard\/links\/(plink_[0-9A-Za-z]{24})\?created=1$/.exec(res.headers.get("location") ?? "")?.[1];
  expect(id).toBeDefined();
  return id!;
}

describe("/dashboard/links", () => {
  test("a new account sees the empty state and a way to create its first link", async () => {
    const res = await stranger.get("/dashboard/links");
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain("No payment links yet.");
    expect(page).toContain('href="/dashboard/links/new"');
    expect(page).toContain('aria-current="page">Payment links</a>');
  });

  test("without a session it sends to sign-in", async () => {
    const res = await fetch(`${server.url}/dashboard/links`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/dashboard/login?next=");
  });
});

describe("creating a link from the form", () => {
  test("a fixed amount: created, shown with its URL, a copy button and its QR", async () => {
    const id = await createThroughForm({
      description: "Pour-over class",
      mode: "fixed",
      amount: "25",
      success_url: "https://shop.example/thanks",
    });
    const link = (await merchantApi(`/api/v1/payment_links/${id}`)).json;
    expect(link).toMatchObject({
      amount: "25.00",
      description: "Pour-over class",
      success_url: "https://shop.example/thanks",
      active: true,
    });

    const page = await (await merchant.get(`/dashboard/links/${id}?created=1`)).text();
    const url = `${TEST_BASE_URL}/l/${id}`;
    expect(page).toContain("Payment link created.");
    expect(page).toContain(`data-copy="${url}"`);
    expect(page).toContain(`value="${url}"`);
    expect(page).toMatch(/<img class="link-qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(page).toContain("25.00 USDC");

    const list = await (await merchant.get("/dashboard/links")).text();
    expect(list).toContain(`href="/dashboard/links/${id}">Pour-over class</a>`);
    expect(list).toContain(`data-copy="${url}"`);
    expect(list).toContain('<span class="badge active">Active</span>');
  });

  test("the payer chooses, with bounds; the fixed amount field is then ignored", async () => {
    const id = await createThroughForm({ description: "Tips", mode: "choose", amount: "9.00", min_amount: "1" });
    const link = (await merchantApi(`/api/v1/payment_links/${id}`)).json;
    expect(link).toMatchObject({ amount: null, min_amount: "1.00", max_amount: null });
    expect(await (await merchant.get(`/dashboard/links/${id}`)).text()).toContain("Payer chooses, at least 1.00 USDC");
  });

  const refusals: Array<[string, Record<string, string>, string]> = [
    [
      "a fixed link without its amount",
      { mode: "fixed", description: "Nope" },
      "Amount is required for a fixed amount",
    ],
    ["an amount of zero", { mode: "fixed", amount: "0" }, "Amount must be greater than 0.00"],
    ["an amount that is not one", { mode: "fixed", amount: "lots" }, "Amount must be a decimal string"],
    ["min above max", { mode: "choose", min_amount: "9", max_amount: "2" }, "Min_amount 9.00 USDC is more than"],
    [
      "a return URL that is not https",
      { mode: "fixed", amount: "2", success_url: "http://x.example" },
      "Success_url must be an https URL",
    ],
    [
      "a description too long",
      { mode: "fixed", amount: "2", description: "d".repeat(501) },
      "Description must be a string of at most 500",
    ],
  ];

  test.each(refusals)("%s: 400 with the form again, what was typed, and nothing created", async (_n, form, message) => {
    const before = await linkCount();
    const res = await merchant.post("/dashboard/links/new", form);
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('role="alert"');
    expect(page).toContain(message);
    for (const [name, value] of Object.entries(form))
      if (name !== "mode" && value.length < 100) expect(page).toContain(`value="${value}"`);
    if (form.mode === "choose") expect(page).toMatch(/id="mode-choose" checked/);
    expect(await linkCount()).toBe(before);
  });

  test("a POST without the CSRF token is 403 and creates nothing", async () => {
    const before = await linkCount();
    const res = await merchant.post("/dashboard/links/new", { csrf: "", mode: "fixed", amount: "5.00" });
    expect(res.status).toBe(403);
    expect(await linkCount()).toBe(before);
  });
});

describe("a link's page lists the payments made through it", () => {
  test("newest first, each with its amount, status, payer's email and a link to it; nothing else", async () => {
    const id = await createThroughForm({ mode: "choose", description: "Tips jar" });
    expect(await (await merchant.get(`/dashboard/links/${id}`)).text()).toContain("None yet.");
    const first = await payThroughLink(server.url, id, { amount: "3.00", email: "first@example.org" });
    const second = await payThroughLink(server.url, id, { amount: "4.50" });
    const other = await createThroughForm({ mode: "fixed", amount: "9.99" });
    const elsewhere = await payThroughLink(server.url, other, {});
    const apiPayment = (await merchantApi("/api/v1/payments", { body: { amount: "1.00" } })).json.id;

    const page = await (await merchant.get(`/dashboard/links/${id}`)).text();
    const section = page.slice(page.indexOf("Payments through this link"));
    expect(section.indexOf(`/dashboard/payments/${second}"`)).toBeGreaterThan(-1);
    expect(section.indexOf(`/dashboard/payments/${second}"`)).toBeLessThan(
      section.indexOf(`/dashboard/payments/${first}"`),
    );
    expect(section).toContain(`<a href="/dashboard/payments/${first}">3.00 USDC</a>`);
    expect(section).toContain(`<a href="/dashboard/payments/${second}">4.50 USDC</a>`);
    expect(section).toContain("first@example.org");
    expect(section).toContain('<span class="badge pending">pending</span>');
    for (const absent of [elsewhere, apiPayment]) expect(page).not.toContain(absent);
  });
});

describe("deactivating and activating", () => {
  test("from the list: the page stops taking payments; activated again from its own page, it takes them", async () => {
    const id = await createThroughForm({ mode: "fixed", amount: "5.00", description: "Seasonal" });
    const off = await merchant.post(`/dashboard/links/${id}`, { active: "false", back: "/dashboard/links" });
    expect(off.status).toBe(303);
    expect(off.headers.get("location")).toBe("/dashboard/links");
    expect((await merchantApi(`/api/v1/payment_links/${id}`)).json.active).toBe(false);
    expect((await fetch(`${server.url}/l/${id}`)).status).toBe(404);
    const detail = await (await merchant.get(`/dashboard/links/${id}`)).text();
    expect(detail).toContain('<span class="badge">Inactive</span>');
    expect(detail).toContain(">Activate</button>");

    const on = await merchant.post(`/dashboard/links/${id}`, { active: "true", back: `/dashboard/links/${id}` });
    expect(on.headers.get("location")).toBe(`/dashboard/links/${id}`);
    expect((await merchantApi(`/api/v1/payment_links/${id}`)).json.active).toBe(true);
    expect((await fetch(`${server.url}/l/${id}`)).status).toBe(200);
  });

  test("somewhere else to go back to is not followed", async () => {
    const id = await createThroughForm({ mode: "fixed", amount: "5.00" });
    const res = await merchant.post(`/dashboard/links/${id}`, { active: "false", back: "https://evil.example/" });
    expect(res.headers.get("location")).toBe("/dashboard/links");
  });
});

describe("another account's links", () => {
  test("are 404 to view and to change, and stay as they were; they are never listed", async () => {
    const id = await createThroughForm({ mode: "fixed", amount: "7.00", description: "Mine only" });
    const view = await stranger.get(`/dashboard/links/${id}`);
    expect(view.status).toBe(404);
    expect(await view.text()).toContain("Payment link not found");
    const change = await stranger.post(`/dashboard/links/${id}`, { active: "false" });
    expect(change.status).toBe(404);
    expect((await merchantApi(`/api/v1/payment_links/${id}`)).json.active).toBe(true);
    expect(await (await stranger.get("/dashboard/links")).text()).not.toContain(id);
    // Its id as a cursor says nothing either: the list starts over.
    const paged = await stranger.get(`/dashboard/links?starting_after=${id}`);
    expect(paged.status).toBe(303);
    expect(paged.headers.get("location")).toBe("/dashboard/links");
  });

  test("unknown and malformed ids are the same 404 page", async () => {
    for (const id of ["plink_000000000000000000000000", "nope"]) {
      expect((await merchant.get(`/dashboard/links/${id}`)).status).toBe(404);
    }
  });
});

test("the list pages 20 at a time, newest first, with a link to older ones", async () => {
  const shop = await server.createAccount("Many Links");
  const client = await signIn(server.url, await createDashboardUser(server.env, shop.accountId));
  const ids: string[] = [];
  const call = api(server.url, shop.apiKey);
  for (let i = 0; i < 21; i++) ids.unshift((await call("/api/v1/payment_links", { body: { amount: "1.00" } })).json.id);
  const first = await (await client.get("/dashboard/links")).text();
  for (const id of ids.slice(0, 20)) expect(first).toContain(`/dashboard/links/${id}"`);
  expect(first).not.toContain(`/dashboard/links/${ids[20]}"`);
  expect(first).toContain(`href="/dashboard/links?starting_after=${ids[19]}">Older links</a>`);
  const second = await (await client.get(`/dashboard/links?starting_after=${ids[19]}`)).text();
  expect(second).toContain(`/dashboard/links/${ids[20]}"`);
  expect(second).not.toContain("Older links");
  expect(second).toContain('href="/dashboard/links">Newest</a>');
});
