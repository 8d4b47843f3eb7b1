/**
 * The dashboard's new-payment form over real HTTP, signed in: it creates through the payments
 * service with the API's rules and messages, keeps what was typed when it refuses, and a form
 * submitted twice (in a row, or at once) creates one payment.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { formIdempotencyKey, readValues, toRequest } from "../../src/dashboard/new-payment-form.ts";
import { sql } from "../../src/db/engine.ts";
import { canonicalJson } from "../../src/idempotency/index.ts";
import { sha256Hex } from "../../src/lib/secrets.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let client: DashboardClient;
let merchant: Api;
let accountId: string;

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("Form Shop");
  merchant = api(server.url, account.apiKey);
  accountId = account.accountId;
  client = await signIn(server.url, await createDashboardUser(server.env, account.accountId));
});
afterAll(() => server.stop());

/** A fresh form's nonce, as a browser would get it by loading the page. */
async function freshNonce(): Promise<string> {
  const page = await (await client.get("/dashboard/payments/new")).text();
  return /name="nonce" value="([^"]+)"/.exec(page)![1]!;
}

async function paymentCount(): Promise<number> {
  return (await merchant("/api/v1/payments?limit=100")).json.data.length;
}

/** Posts the form as a browser does: its CSRF token, its nonce, five item rows with the blank ones. */
async function post(fields: Record<string, string>, items: string[][] = [], nonce?: string): Promise<Response> {
  const form = new URLSearchParams({ csrf: client.csrf, nonce: nonce ?? (await freshNonce()), ...fields });
  for (let i = 0; i < 5; i++) {
    const [description = "", unit = "", quantity = "1"] = items[i] ?? [];
    form.append("item_description", description);
    form.append("item_unit_amount", unit);
    form.append("item_quantity", quantity);
  }
  return fetch(`${server.url}/dashboard/payments/new`, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookie },
    redirect: "manual",
  });
}

function createdId(res: Response): string {
  expect(res.status).toBe(303);
  const location = res.headers.get("location")!;
  expect(location).toMatch(/^\/dashboard\/payments\/0x[0-9a-f]{64}\?created=1$/);
  return /0x[0-9a-f]{64}/.exec(location)![0];
}

describe("the form", () => {
  test("offers an amount, five item rows and the checkout fields, with a nonce and the CSRF token", async () => {
    const res = await client.get("/dashboard/payments/new");
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('action="/dashboard/payments/new"');
    expect(page).toContain(`name="csrf" value="${client.csrf}"`);
    expect(page).toMatch(/name="nonce" value="[0-9A-Za-z]{24}"/);
    expect(page.match(/name="item_description"/g)?.length).toBe(5);
    for (const field of ["amount", "description", "reference", "invoice_number", "customer_name", "customer_email"])
      expect(page).toContain(`name="${field}"`);
    expect(page).toMatch(/<input id="np-due_at" name="due_at" value="" type="date"/);
    // Two loads, two nonces: each rendered form is its own submission.
    expect(await freshNonce()).not.toBe(await freshNonce());
  });
});

describe("creating a payment", () => {
  test("a fixed amount with the checkout fields: 303 to its page, stored as the API would store it", async () => {
    const due = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    const res = await post({
      amount: "25",
      description: "Consulting, November",
      reference: "inv-77",
      invoice_number: "INV-77",
      customer_name: "Grace Hopper",
      customer_email: "grace@example.com",
      due_at: due,
    });
    const payment = (await merchant(`/api/v1/payments/${createdId(res)}`)).json;
    expect(payment).toMatchObject({
      status: "pending",
      amount: "25.00",
      description: "Consulting, November",
      reference: "inv-77",
      invoice_number: "INV-77",
      customer_name: "Grace Hopper",
      customer_email: "grace@example.com",
      due_at: `${due}T23:59:59.999Z`,
      line_items: null,
    });
    // The page it lands on says so and offers the pay link.
    const page = await (await client.get(res.headers.get("location")!)).text();
    expect(page).toContain("Payment created.");
    expect(page).toContain(`data-copy="${payment.pay_url}"`);
  });

  test("line items without an amount: the amount is their total, empty rows ignored", async () => {
    const res = await post({}, [["Mug", "12.50", "2"], [], ["Sticker", "0.5", ""]]);
    const payment = (await merchant(`/api/v1/payments/${createdId(res)}`)).json;
    expect(payment.amount).toBe("25.50");
    expect(payment.line_items).toEqual([
      { description: "Mug", unit_amount: "12.50", quantity: 2, amount: "25.00" },
      { description: "Sticker", unit_amount: "0.50", quantity: 1, amount: "0.50" },
    ]);
  });
});

describe("a refused form", () => {
  const refusals: Array<[string, Record<string, string>, string[][], string, string]> = [
    ["nothing to charge", {}, [], "amount", "amount is required unless line_items is given"],
    [
      "an amount that disagrees with the items",
      { amount: "30.00" },
      [["Mug", "12.50", "2"]],
      "amount",
      "amount 30.00 USDC does not match line_items total 25.00 USDC",
    ],
    [
      "a malformed amount",
      { amount: "12.345" },
      [],
      "amount",
      'amount must be a decimal string with two decimals, such as "12.50"',
    ],
    [
      "a bad email",
      { amount: "5.00", customer_email: "not an email" },
      [],
      "customer_email",
      "customer_email must be an email address of at most 320 characters",
    ],
    ["a due date in the past", { amount: "5.00", due_at: "2020-01-01" }, [], "due_at", "due_at must be in the future"],
    [
      "a bad item price",
      { amount: "" },
      [
        ["Mug", "12.50", "1"],
        ["Box", "abc", "1"],
      ],
      "item-1",
      'line_items[1].unit_amount must be a decimal string with two decimals, such as "12.50"',
    ],
    [
      "a fractional quantity",
      {},
      [["Mug", "12.50", "1.5"]],
      "item-0",
      "line_items[0].quantity must be a whole number from 1 to 1000000",
    ],
  ];

  for (const [what, fields, items, place, message] of refusals) {
    test(`${what}: 400, the message beside its field, the values kept, nothing created`, async () => {
      const before = await paymentCount();
      const res = await post({ description: "kept <as typed>", ...fields }, items);
      expect(res.status).toBe(400);
      const page = await res.text();
      expect(page).toContain(`<p class="field-error" id="np-${place}-error">${escapedLike(message)}</p>`);
      expect(page).toContain('aria-invalid="true"');
      expect(page).toContain(`value="kept &#60;as typed&#62;"`);
      for (const [field, value] of Object.entries(fields))
        if (value) expect(page).toContain(`name="${field}" value="${escapedLike(value)}"`);
      for (const [description] of items) if (description) expect(page).toContain(`value="${description}"`);
      expect(await paymentCount()).toBe(before);
    });
  }

  test("the corrected form, with the same nonce, then creates the payment", async () => {
    const nonce = await freshNonce();
    const refused = await post({ amount: "12.345" }, [], nonce);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(`name="nonce" value="${nonce}"`);
    const res = await post({ amount: "12.34" }, [], nonce);
    expect((await merchant(`/api/v1/payments/${createdId(res)}`)).json.amount).toBe("12.34");
  });

  test("without its nonce: 400 with a fresh one, nothing created", async () => {
    const before = await paymentCount();
    const res = await post({ amount: "5.00" }, [], "");
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain("this form is incomplete");
    expect(page).toMatch(/name="nonce" value="[0-9A-Za-z]{24}"/);
    expect(await paymentCount()).toBe(before);
  });
});

describe("a form submitted twice", () => {
  test("again after it went through: the same payment, not a second one", async () => {
    const nonce = await freshNonce();
    const before = await paymentCount();
    const first = createdId(await post({ amount: "9.99", reference: "double" }, [], nonce));
    const second = createdId(await post({ amount: "9.99", reference: "double" }, [], nonce));
    expect(second).toBe(first);
    expect(await paymentCount()).toBe(before + 1);
  });

  test("a burst of submits at once (a double click and more): every answer is the one payment", async () => {
    const nonce = await freshNonce();
    const before = await paymentCount();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post({ amount: "4.20", reference: "double-click" }, [], nonce)),
    );
    const ids = answers.map(createdId);
    expect(new Set(ids).size).toBe(1);
    expect(await paymentCount()).toBe(before + 1);
  });

  test("while the first is still being created: the second waits for it and answers with its payment", async () => {
    const nonce = await freshNonce();
    const fields = { amount: "3.00", reference: "in-flight" };
    const key = formIdempotencyKey(nonce);
    // The first submit, mid-creation: it holds the nonce's key and has stored no answer yet.
    const request = toRequest(readValues(new URLSearchParams(fields)));
    await server.running.db.run(
      sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (${accountId}, ${key}, ${sha256Hex(canonicalJson(request))}, ${Date.now()})`,
    );
    const second = post(fields, [], nonce);
    // A request sent after the second is answered after the server took the second up.
    await client.get("/dashboard/payments/new");
    // The first finishes: its payment and its answer, stored under the key.
    const first = (await merchant("/api/v1/payments", { body: request })).json;
    await server.running.db.run(
      sql`UPDATE idempotency_keys SET status_code = 201, response_body = ${JSON.stringify(first)} WHERE account_id = ${accountId} AND key = ${key}`,
    );
    expect(createdId(await second)).toBe(first.id);
  });

  test("again with other values (back, edit, submit): 422, a fresh nonce, nothing more created", async () => {
    const nonce = await freshNonce();
    createdId(await post({ amount: "1.00" }, [], nonce));
    const before = await paymentCount();
    const res = await post({ amount: "2.00" }, [], nonce);
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain("this form already created a payment with other values");
    expect(page).toContain('name="amount" value="2.00"');
    const renewed = /name="nonce" value="([^"]+)"/.exec(page)![1];
    expect(renewed).not.toBe(nonce);
    expect(await paymentCount()).toBe(before);
  });
});

/** The page's escaping of a message or value (src/html/template.ts: numeric entities). */
function escapedLike(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
