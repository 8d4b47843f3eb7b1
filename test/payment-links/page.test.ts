/**
 * A payment link's public page, /l/<id>, over real HTTP against the real server: what it shows,
 * its headers, the POST that creates exactly one payment (payment_link, metadata and the rest
 * copied), resubmits, refusals that re-render the form and create nothing, forms the server did
 * not render, deactivated and unknown links, the per-client limits and the most payments waiting
 * for money a link holds. Each payer connects from a loopback address of its own, as payers do;
 * behind a proxy: page-proxy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { FORM_TOKEN, FORM_TOKEN_TTL_MS } from "../../src/payment-links/form-token.ts";
import { LINK_OPEN_PAYMENTS_MAX } from "../../src/payment-links/service.ts";
import { LINK_PAY_LIMIT } from "../../src/rate-limits/index.ts";
import { fetchFrom } from "../support/forwarding-proxy.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

// Stopped: the rate limits' buckets refill, and forms age, only when a test moves it.
const clock = { at: Date.parse("2031-05-01T10:00:00.000Z"), now: () => clock.at };

let server: TestServer;
let merchant: Api;

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  merchant = api(server.url, (await server.createAccount("Bean & Leaf <Roasters>")).apiKey);
});
afterAll(() => server.stop());

async function newLink(body: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const res = await merchant("/api/v1/payment_links", { body });
  expect(res.status).toBe(201);
  return res.json;
}

let payers = 0;
/** A payer of its own: a loopback address no other request of this file comes from. */
const newPayer = () => `127.0.${Math.floor(++payers / 250) + 1}.${(payers % 250) + 1}`;

const openPage = (id: string, from = newPayer()) => fetchFrom(from, `${server.url}/l/${id}`);

/** The page's one-time token, as a browser would read it from the form. */
async function nonceOf(id: string): Promise<string> {
  const html = await (await openPage(id)).text();
  return tokenIn(html)!;
}
const tokenIn = (html: string) => /name="nonce" value="([^"]*)"/.exec(html)?.[1];

/** Submits the link's form as a browser does (urlencoded, redirects not followed), from a new payer unless `from`. */
const submit = (id: string, fields: Record<string, string>, from = newPayer()) =>
  fetchFrom(from, `${server.url}/l/${id}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });

const paymentsOf = async (linkId: string) =>
  (
    await server.running.db.all<{ id: string }>(
      sql`SELECT id FROM payments WHERE payment_link = ${linkId} ORDER BY seq`,
    )
  ).map((r) => r.id);

const paymentIdFrom = (res: Response) => /^\/pay\/(0x[0-9a-f]{64})$/.exec(res.headers.get("location") ?? "")?.[1];

describe("GET /l/{id}", () => {
  test("a fixed-amount link shows the merchant, description, amount, an email field and a Pay button", async () => {
    const link = await newLink({ amount: "25.00", description: "Pour-over <class> & tasting" });
    const res = await openPage(link.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain("Bean &#38; Leaf &#60;Roasters&#62;");
    expect(html).toContain("Pour-over &#60;class&#62; &#38; tasting");
    expect(html).not.toContain("<class>");
    expect(html).toContain('<span id="amount">25.00</span>');
    expect(html).toContain('name="email" type="email"');
    expect(html).not.toContain('name="amount"');
    expect(html).toContain(`<form class="pay link-form" method="post" action="/l/${link.id}"`);
    expect(html).toMatch(/<button class="btn primary" type="submit">Pay<\/button>/);
    expect(html).not.toContain("<script");
  });

  test("the checkout's CSP, except that the form may post to this origin", async () => {
    const link = await newLink({ amount: "3.00" });
    const csp = (await openPage(link.id)).headers.get("content-security-policy")!;
    const checkoutCsp = (await fetch(`${server.url}/pay/0x${"0".repeat(64)}`)).headers.get("content-security-policy")!;
    expect(csp).toContain("form-action 'self'");
    expect(checkoutCsp).toContain("form-action 'none'");
    expect(csp.replace("form-action 'self'", "form-action 'none'")).toBe(checkoutCsp);
  });

  test("a link where the payer chooses has an amount field with its bounds", async () => {
    const link = await newLink({ description: "Donation", min_amount: "5.00", max_amount: "500.00" });
    const html = await (await openPage(link.id)).text();
    expect(html).toContain('name="amount"');
    expect(html).toContain("From 5.00 to 500.00 USDC.");
  });

  test("itemised links list their items and total", async () => {
    const link = await newLink({
      line_items: [
        { description: "Beans 250 g", unit_amount: "9.50", quantity: 2 },
        { description: "Shipping", unit_amount: "4.00", quantity: 1 },
      ],
    });
    const html = await (await openPage(link.id)).text();
    expect(html).toContain("Beans 250 g");
    expect(html).toContain("2 × 9.50 USDC");
    expect(html).toContain('<span id="amount">23.00</span>');
  });

  test("every rendering carries a fresh token, signed by the server", async () => {
    const link = await newLink({ amount: "1.00" });
    const [one, two] = [await nonceOf(link.id), await nonceOf(link.id)];
    expect(one).not.toBe(two);
    expect(one).toMatch(FORM_TOKEN);
  });

  test("unknown and malformed ids are the same 404 page", async () => {
    for (const id of ["plink_000000000000000000000000", "nope", "%00", `0x${"1".repeat(64)}`]) {
      const res = await openPage(id);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await res.text()).toContain("Payment link not found");
    }
  });
});

describe("POST /l/{id}", () => {
  test("creates exactly one payment with payment_link, the link's metadata byte for byte, and the rest copied", async () => {
    const link = await merchant("/api/v1/payment_links", {
      body: '{"amount":"12.00","description":"Workshop seat","success_url":"https://shop.example/thanks","metadata":{"campaign":"sp\\u00e9cial","sku":"W-1"}}',
    });
    expect(link.status).toBe(201);
    const res = await submit(link.json.id, { nonce: await nonceOf(link.json.id), email: "payer@example.org" });
    expect(res.status).toBe(303);
    const paymentId = paymentIdFrom(res)!;
    expect(paymentId).toBeDefined();
    expect(await paymentsOf(link.json.id)).toEqual([paymentId]);

    const payment = await merchant(`/api/v1/payments/${paymentId}`);
    expect(payment.json).toMatchObject({
      payment_link: link.json.id,
      amount: "12.00",
      description: "Workshop seat",
      success_url: "https://shop.example/thanks",
      customer_email: "payer@example.org",
      status: "pending",
    });
    expect(payment.text).toContain('"metadata":{"campaign":"sp\\u00e9cial","sku":"W-1"}}');
    // The checkout it is sent to is that payment's.
    expect((await fetch(server.url + res.headers.get("location"))).status).toBe(200);
    // The listing shows it too.
    const listed = await merchant("/api/v1/payments?limit=1");
    expect(listed.json.data[0]).toMatchObject({ id: paymentId, payment_link: link.json.id });
  });

  test("payments made through the API have payment_link null", async () => {
    const res = await merchant("/api/v1/payments", { body: { amount: "2.00" } });
    expect(res.json.payment_link).toBeNull();
  });

  test("the public view of a link's payment adds nothing private: no payment_link, metadata or email", async () => {
    const link = await newLink({ amount: "4.00", metadata: { secret: "internal-note" } });
    const res = await submit(link.id, { nonce: await nonceOf(link.id), email: "hidden@example.org" });
    const view = (await api(server.url, null)(`/api/public/payments/${paymentIdFrom(res)}`)).text;
    for (const leaked of ["payment_link", link.id, "internal-note", "hidden@example.org", "metadata"])
      expect(view).not.toContain(leaked);
  });

  test("itemised: the payment carries the link's line items", async () => {
    const link = await newLink({ line_items: [{ description: "Mug", unit_amount: "7.00", quantity: 3 }] });
    const res = await submit(link.id, { nonce: await nonceOf(link.id) });
    const payment = (await merchant(`/api/v1/payments/${paymentIdFrom(res)}`)).json;
    expect(payment.amount).toBe("21.00");
    expect(payment.line_items).toEqual([{ description: "Mug", unit_amount: "7.00", quantity: 3, amount: "21.00" }]);
    expect(payment.customer_email).toBeNull();
  });

  test("the same form sent again answers the same payment; sent twice at once, still one", async () => {
    const link = await newLink({ amount: "9.00" });
    const nonce = await nonceOf(link.id);
    const first = await submit(link.id, { nonce, email: "a@example.org" });
    const again = await submit(link.id, { nonce, email: "a@example.org" });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));

    const racing = await nonceOf(link.id);
    const both = await Promise.all([submit(link.id, { nonce: racing }), submit(link.id, { nonce: racing })]);
    expect(both.map((r) => r.status)).toEqual([303, 303]);
    expect(both[1]!.headers.get("location")).toBe(both[0]!.headers.get("location"));
    expect(await paymentsOf(link.id)).toEqual([paymentIdFrom(first)!, paymentIdFrom(both[0]!)!]);
  });

  test("the same nonce with other details is refused with the form again, and creates nothing", async () => {
    const link = await newLink({ description: "Tips" });
    const nonce = await nonceOf(link.id);
    expect((await submit(link.id, { nonce, amount: "5.00" })).status).toBe(303);
    const changed = await submit(link.id, { nonce, amount: "50.00" });
    expect(changed.status).toBe(422);
    expect(await changed.text()).toContain("This form was already sent with other details");
    expect(await paymentsOf(link.id)).toHaveLength(1);
  });

  test("the payer's amount: typed as 10 or 10.5 it means 10.00 and 10.50", async () => {
    const link = await newLink({ description: "Tips" });
    for (const [typed, amount] of [
      ["10", "10.00"],
      [" 10.5 ", "10.50"],
      ["0.75", "0.75"],
    ]) {
      const res = await submit(link.id, { nonce: await nonceOf(link.id), amount: typed! });
      expect(res.status).toBe(303);
      expect((await merchant(`/api/v1/payments/${paymentIdFrom(res)}`)).json.amount).toBe(amount!);
    }
  });

  const refusals: Array<[string, Record<string, string>, string]> = [
    ["below min_amount", { amount: "4.99" }, "Amount must be at least 5.00 USDC."],
    ["above max_amount", { amount: "500.01" }, "Amount must be at most 500.00 USDC."],
    ["zero", { amount: "0" }, "Amount must be greater than 0.00 USDC."],
    ["missing", { amount: "" }, "Amount is required: enter how much to pay."],
    ["not a number", { amount: "ten" }, "Amount must be a decimal string with two decimals"],
    ["three decimals", { amount: "5.001" }, "Amount must be a decimal string with two decimals"],
    ["a malformed email", { amount: "6.00", email: "not-an-email" }, "Email must be an email address"],
    ["an email with a space", { amount: "6.00", email: "a b@example.org" }, "Email must be an email address"],
  ];

  test.each(refusals)(
    "%s: 400 with the form again, the message, what was typed; nothing created",
    async (_n, fields, message) => {
      const link = await newLink({ description: "Donation", min_amount: "5.00", max_amount: "500.00" });
      const res = await submit(link.id, { nonce: await nonceOf(link.id), ...fields });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toContain("form-action 'self'");
      const html = await res.text();
      expect(html).toContain('role="alert"');
      expect(html).toContain(message);
      if (fields.email) expect(html).toContain(`value="${fields.email}"`);
      expect(tokenIn(html)).toMatch(FORM_TOKEN);
      expect(await paymentsOf(link.id)).toEqual([]);
    },
  );

  test("a fixed link refuses an amount, and a form without its nonce; nothing created", async () => {
    const link = await newLink({ amount: "8.00" });
    const withAmount = await submit(link.id, { nonce: await nonceOf(link.id), amount: "1.00" });
    expect(withAmount.status).toBe(400);
    expect(await withAmount.text()).toContain("Amount is fixed by this link");
    const noNonce = await submit(link.id, {});
    expect(noNonce.status).toBe(400);
    expect(await noNonce.text()).toContain("Nonce is missing or damaged; reload the page.");
    expect(await paymentsOf(link.id)).toEqual([]);
  });

  test("a deactivated link is a 404 page to open and to post to, and creates nothing; on again, it works", async () => {
    const link = await newLink({ amount: "5.00" });
    const nonce = await nonceOf(link.id);
    expect((await merchant(`/api/v1/payment_links/${link.id}`, { body: { active: false } })).status).toBe(200);
    expect((await openPage(link.id)).status).toBe(404);
    const posted = await submit(link.id, { nonce });
    expect(posted.status).toBe(404);
    expect(await posted.text()).toContain("Payment link not found");
    expect(await paymentsOf(link.id)).toEqual([]);
    await merchant(`/api/v1/payment_links/${link.id}`, { body: { active: true } });
    expect((await submit(link.id, { nonce })).status).toBe(303);
  });

  test("a form this server did not render, or rendered over a day ago: the form again, with a fresh token; nothing created", async () => {
    const link = await newLink({ description: "Tips" });
    const real = await nonceOf(link.id);
    const other = await newLink({ description: "Other tips" });
    for (const nonce of [`${real.slice(0, 24)}${"f".repeat(32)}`, await nonceOf(other.id)]) {
      const res = await submit(link.id, { nonce, amount: "3.00", email: "late@example.org" });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain("This form has expired; check the details and press Pay again.");
      expect(html).toContain('value="late@example.org"');
      // The fresh token in the page goes through.
      const again = await submit(link.id, { nonce: tokenIn(html)!, amount: "3.00" });
      expect(again.status).toBe(303);
    }
    clock.at += FORM_TOKEN_TTL_MS;
    expect((await submit(link.id, { nonce: real, amount: "3.00" })).status).toBe(400);
    expect(await paymentsOf(link.id)).toHaveLength(2);
  });

  test("an unknown link's form is a 404 page", async () => {
    const res = await submit("plink_000000000000000000000000", { nonce: "a".repeat(56) });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("Payment link not found");
  });
});

describe("limits: per client, and per link only on payments waiting for money", () => {
  test("one client starting payment after payment gets the 429 page; other payers are unaffected, and resending costs nothing", async () => {
    const link = await newLink({ amount: "1.00" });
    const flooder = newPayer();
    const firstForm = await nonceOf(link.id);
    const first = await submit(link.id, { nonce: firstForm }, flooder);
    expect(first.status).toBe(303);
    for (let i = 1; i < LINK_PAY_LIMIT.burst; i++)
      expect((await submit(link.id, { nonce: await nonceOf(link.id) }, flooder)).status).toBe(303);
    const refused = await submit(link.id, { nonce: await nonceOf(link.id) }, flooder);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(120);
    expect(refused.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await refused.text();
    expect(page).toContain("Please try again shortly");
    expect(page).toContain(
      "You have started several payments just now; wait a minute or two. Then go back and press Pay again.",
    );
    expect(await paymentsOf(link.id)).toHaveLength(LINK_PAY_LIMIT.burst);

    // The next real payer, on the same link.
    expect((await submit(link.id, { nonce: await nonceOf(link.id) })).status).toBe(303);
    // The flooder's first form sent again still leads to its payment: a resend creates nothing, so costs nothing.
    const resent = await submit(link.id, { nonce: firstForm }, flooder);
    expect(resent.status).toBe(303);
    expect(resent.headers.get("location")).toBe(first.headers.get("location"));
  });

  test(`a link holding ${LINK_OPEN_PAYMENTS_MAX} payments waiting for money refuses the next payer with a page saying when one frees up`, async () => {
    const link = await newLink({ amount: "2.00" });
    for (let i = 0; i < LINK_OPEN_PAYMENTS_MAX; i++)
      expect((await submit(link.id, { nonce: await nonceOf(link.id) })).status).toBe(303);
    const full = await submit(link.id, { nonce: await nonceOf(link.id) });
    expect(full.status).toBe(429);
    expect(full.headers.get("retry-after")).toBe("3600");
    expect(await full.text()).toContain(
      "Too many payments started from this link are still waiting to be paid; one frees up within 60 minutes. Then go back and press Pay again.",
    );
    expect(await paymentsOf(link.id)).toHaveLength(LINK_OPEN_PAYMENTS_MAX);
    // Other links are open as ever.
    const other = await newLink({ amount: "2.00" });
    expect((await submit(other.id, { nonce: await nonceOf(other.id) })).status).toBe(303);
    // The window of the first ones closes: the link takes payments again.
    clock.at += 60 * 60_000;
    expect((await submit(link.id, { nonce: await nonceOf(link.id) })).status).toBe(303);
  });

  test("a client flooding a link's page gets the 429 page; other payers still see it; unknown links are 404 and cost nothing", async () => {
    const viewed = await newLink({ amount: "1.00" });
    const flooder = newPayer();
    let status = 200;
    for (let i = 0; i < 1_000 && status === 200; i++) status = (await openPage(viewed.id, flooder)).status;
    expect(status).toBe(429);
    expect((await openPage(viewed.id)).status).toBe(200);
    const prober = newPayer();
    for (let i = 0; i < 200; i++) expect((await openPage("plink_000000000000000000000001", prober)).status).toBe(404);
  });
});
