import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: Api;

beforeAll(async () => {
  server = await startTestServer();
  merchant = api(server.url, (await server.createAccount("Page Shop")).apiKey);
});
afterAll(() => server.stop());

async function page(id: string) {
  const res = await api(server.url, null)(`/pay/${id}`);
  return { res, html: res.text };
}

async function createPayment(body: Record<string, unknown>) {
  const res = await merchant("/api/v1/payments", { body });
  expect(res.status).toBe(201);
  return res.json;
}

describe("GET /pay/{id}", () => {
  test("an HTML page with a CSP that shows everything needed to pay", async () => {
    const dueDate = new Date(Date.now() + 20 * 24 * 3_600_000).toISOString().slice(0, 10);
    const p = await createPayment({
      line_items: [
        { description: "Blue widget", unit_amount: "12.50", quantity: 2 },
        { description: "Gift wrap", unit_amount: "0.99", quantity: 1 },
      ],
      description: "Spring order",
      invoice_number: "INV-2031-42",
      due_at: dueDate,
    });
    const { res, html } = await page(p.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const csp = res.headers.get("content-security-policy");
    expect(csp).not.toBeNull();
    expect(csp).toContain("default-src");
    expect(csp).not.toContain("unsafe-inline");

    expect(html).toStartWith("<!doctype html>");
    expect(html).toContain("25.99");
    expect(html).toContain("Spring order");
    expect(html).toContain("Blue widget");
    expect(html).toContain("Gift wrap");
    expect(html).toContain("25.00"); // the widget line's amount
    expect(html).toContain("INV-2031-42");
    expect(html).toContain(dueDate); // the due date
    expect(html).toContain(p.deposit_address);
    expect(html).toMatch(/<img[^>]+src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(html).toContain(p.expires_at); // the expiry, machine-readable for the countdown
    expect(html).toContain(p.expires_at.slice(11, 16)); // and human-readable (HH:MM)
  });

  test("the embedded QR image is the deposit address QR served by /qr", async () => {
    const p = await createPayment({ amount: "3.00" });
    const { html } = await page(p.id);
    const b64 = /<img[^>]+src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)"/.exec(html)![1]!;
    const svg = Buffer.from(b64, "base64").toString("utf8");
    expect(svg.trimStart()).toStartWith("<svg");
    const served = (await api(server.url, null)(`/api/public/payments/${p.id}/qr`)).text;
    expect(svg).toBe(served);
  });

  test("merchant-supplied text is escaped, never raw HTML", async () => {
    const attack = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const p = await createPayment({
      line_items: [{ description: attack, unit_amount: "1.00", quantity: 1 }],
      description: attack,
      invoice_number: `"><script>alert(2)</script>`,
      reference: "</dd><script>alert(3)</script>",
      customer_name: attack,
    });
    const { res, html } = await page(p.id);
    expect(res.status).toBe(200);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain('"><script');
    expect(html).not.toContain("onerror=alert(1)>");
    // The text is still shown, escaped.
    expect(html).toContain("&#60;script&#62;");
  });

  test("it never shows metadata or the customer email", async () => {
    const p = await createPayment({
      amount: "4.00",
      metadata: { secret: "meta-hidden-123" },
      customer_email: "hidden@example.com",
    });
    const { html } = await page(p.id);
    expect(html).not.toContain("meta-hidden-123");
    expect(html).not.toContain("hidden@example.com");
  });

  test("an unknown id is a 404 HTML page", async () => {
    const { res, html } = await page(`0x${"1".repeat(64)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(res.headers.get("content-security-policy")).not.toBeNull();
    expect(html).toContain("<html");
    expect(html.toLowerCase()).toContain("not found");
  });

  test.each(["abc", "0x12", `0x${"Z".repeat(64)}`])("a malformed id %p is a 404 HTML page", async (id) => {
    const { res, html } = await page(id);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    expect(html).toContain("<html");
  });

  test("the stylesheet it links is served from the binary", async () => {
    const res = await api(server.url, null)("/checkout.css");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/css");
    expect(res.text.length).toBeGreaterThan(0);
  });
});
