/**
 * Invoices and receipts over real HTTP from a real server and SQLite file: every field in the PDF's
 * text (pdftotext) and on the page, the same bytes for the same payment, A4 and Letter, fonts
 * embedded, nothing private (planted metadata, payout address, account id) on any of them, 404s,
 * and the merchant API's copies scoped to the account. The transfers of a payment paid on chain are
 * in paid.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentDate } from "../../src/documents/format.ts";
import { createRefundStore } from "../../src/refunds/store.ts";
import { runCli } from "../support/cli.ts";
import { pdfFonts, pdfInfo, pdfText } from "../support/pdf-text.ts";
import { markReceived } from "../support/refund-rows.ts";
import {
  api,
  isErrorBody,
  startTestServer,
  TEST_BASE_URL,
  TEST_PAYOUT,
  type TestAccount,
  type TestServer,
} from "../support/server.ts";

let server: TestServer;
let shop: TestAccount;
let invoiced: { id: string; created_at: string };

const CANARY = "METADATA-CANARY-7781";
const DETAILS = {
  legalName: "Kastanie Kaffee GmbH",
  lines: ["Kastanienallee 12", "10435 Berlin, Germany"],
  taxId: "DE811907980",
  supportEmail: "hilfe@kastanie.example",
};
const ORDER = {
  line_items: [
    { description: "Espresso beans 1kg", unit_amount: "12.50", quantity: 2 },
    { description: "Filter papers", unit_amount: "3.25", quantity: 3 },
  ],
  description: "Order 1042",
  reference: "ORDER-1042",
  invoice_number: "INV-2026-0042",
  due_at: "2026-12-15T00:00:00Z",
  customer_name: "Ana Lima",
  customer_email: "ana@customer.example",
  metadata: { note: CANARY },
};

const get = (path: string, key: string | null = null) =>
  fetch(server.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

beforeAll(async () => {
  server = await startTestServer();
  shop = await server.createAccount("Plain Shop Account");
  const set = await runCli(
    [
      "account",
      "set-business",
      shop.accountId,
      "--legal-name",
      DETAILS.legalName,
      ...DETAILS.lines.flatMap((line) => ["--address-line", line]),
      "--tax-id",
      DETAILS.taxId,
      "--support-email",
      DETAILS.supportEmail,
    ],
    server.env,
  );
  expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
  const created = await api(server.url, shop.apiKey)("/api/v1/payments", { body: ORDER });
  expect(created.status).toBe(201);
  invoiced = created.json;
});
afterAll(() => server?.stop());

/** Values that must never reach a payer's document: the account's internals and the merchant's own notes. */
const privateValues = () => [CANARY, TEST_PAYOUT, TEST_PAYOUT.toLowerCase(), shop.accountId, "Plain Shop Account"];

/** Nothing private in a document's text (a page's embedded images aside, whose base64 could spell anything). */
function expectNothingPrivate(text: string) {
  const shown = text.replace(/data:image\/[^"]+/g, "");
  for (const secret of privateValues()) expect(shown).not.toContain(secret);
  expect(shown).not.toMatch(/\bfees?\b/i);
}

describe("the invoice", () => {
  test("its PDF holds every field: merchant, customer, number, dates, items, totals, amount due and the pay link", async () => {
    const res = await get(`/pay/${invoiced.id}/invoice.pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const text = await pdfText(await bytesOf(res));
    for (const expected of [
      "Invoice",
      DETAILS.legalName,
      ...DETAILS.lines,
      `Tax ID: ${DETAILS.taxId}`,
      DETAILS.supportEmail,
      "BILL TO",
      "Ana Lima",
      "ana@customer.example",
      "Invoice number INV-2026-0042",
      `Issued ${documentDate(Date.parse(invoiced.created_at))}`,
      "Due 15 December 2026",
      "Reference ORDER-1042",
      "Order 1042",
      "Espresso beans 1kg 2 12.50 USDC 25.00 USDC",
      "Filter papers 3 3.25 USDC 9.75 USDC",
      "Total 34.75 USDC",
      "Amount due 34.75 USDC",
      "Pay 34.75 USDC online",
      `${TEST_BASE_URL}/pay/${invoiced.id}`,
    ])
      expect(text).toContain(expected);
    expect(text).not.toContain("Paid on");
    expectNothingPrivate(text);
  });

  test("the same payment gives the same bytes; A4 by default, Letter on request, Inter embedded", async () => {
    const [a, b, letter] = await Promise.all(
      [
        `/pay/${invoiced.id}/invoice.pdf`,
        `/pay/${invoiced.id}/invoice.pdf?paper=a4`,
        `/pay/${invoiced.id}/invoice.pdf?paper=letter`,
      ].map(async (path) => bytesOf(await get(path))),
    );
    expect(Buffer.from(a!).equals(Buffer.from(b!))).toBe(true);
    // The merchant's copy through the API is the very same file.
    const own = await bytesOf(await get(`/api/v1/payments/${invoiced.id}/invoice.pdf`, shop.apiKey));
    expect(Buffer.from(own).equals(Buffer.from(a!))).toBe(true);
    const [infoA4, infoLetter] = await Promise.all([pdfInfo(a!), pdfInfo(letter!)]);
    expect(infoA4["Page size"]).toBe("595.28 x 841.89 pts (A4)");
    expect(infoLetter["Page size"]).toBe("612 x 792 pts (letter)");
    expect(infoA4.Title).toBe("Invoice INV-2026-0042");
    // Dated by the payment, not by the clock of the request.
    expect(new Date(infoA4.CreationDate!).getTime()).toBe(Math.floor(Date.parse(invoiced.created_at) / 1000) * 1000);
    const fonts = await pdfFonts(a!);
    expect(fonts.length).toBeGreaterThan(0);
    expect(fonts.every((f) => f.embedded && f.name.includes("Inter"))).toBe(true);
  });

  test("its page shows the same, with the pay link and its QR code, and nothing private", async () => {
    const res = await get(`/pay/${invoiced.id}/invoice`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const page = await res.text();
    for (const expected of [
      DETAILS.legalName,
      ...DETAILS.lines,
      DETAILS.taxId,
      "Ana Lima",
      "ana@customer.example",
      "INV-2026-0042",
      "15 December 2026",
      "Espresso beans 1kg",
      "9.75 USDC",
      "34.75 USDC",
      `href="${TEST_BASE_URL}/pay/${invoiced.id}"`,
      'alt="QR code of the payment link"',
      `/pay/${invoiced.id}/invoice.pdf?paper=letter`,
    ])
      expect(page).toContain(expected);
    expectNothingPrivate(page);
  });

  test("the checkout links to it, and names the merchant by its legal name", async () => {
    const page = await (await get(`/pay/${invoiced.id}`)).text();
    expect(page).toContain(`href="/pay/${invoiced.id}/invoice"`);
    expect(page).toContain(`<span id="merchant-name">${DETAILS.legalName}</span>`);
    expect(page).not.toContain("Plain Shop Account");
    // Not confirmed: no receipt yet.
    expect(page).not.toContain(`/pay/${invoiced.id}/receipt`);
  });

  test("a payment without an invoice number, an unknown or malformed id: 404, page and PDF alike", async () => {
    const plain = await api(server.url, shop.apiKey)("/api/v1/payments", { body: { amount: "5.00" } });
    const unknown = `0x${"ab".repeat(32)}`;
    for (const id of [plain.json.id, unknown, "0x1234", "nonsense"]) {
      const page = await get(`/pay/${id}/invoice`);
      expect({ id, status: page.status }).toEqual({ id, status: 404 });
      expect(await page.text()).toContain("Invoice not found");
      const pdf = await get(`/pay/${id}/invoice.pdf`);
      expect({ id, status: pdf.status }).toEqual({ id, status: 404 });
      expect(isErrorBody(await pdf.json())).toBe(true);
    }
    const checkout = await (await get(`/pay/${plain.json.id}`)).text();
    expect(checkout).not.toContain("/invoice");
  });

  test("a paper size other than a4 or letter is refused with the rule", async () => {
    const res = await get(`/pay/${invoiced.id}/invoice.pdf?paper=legal`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "paper must be a4 or letter" });
    const own = await api(server.url, shop.apiKey)(`/api/v1/payments/${invoiced.id}/invoice.pdf?paper=legal`);
    expect(own.status).toBe(400);
    expect(own.json.error).toContain("paper must be one of a4, letter");
  });
});

describe("the receipt", () => {
  test("none before the payment is confirmed: 404 with a page saying so", async () => {
    const page = await get(`/pay/${invoiced.id}/receipt`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("No receipt yet");
    expect((await get(`/pay/${invoiced.id}/receipt.pdf`)).status).toBe(404);
    const own = await api(server.url, shop.apiKey)(`/api/v1/payments/${invoiced.id}/receipt.pdf`);
    expect({ status: own.status, error: isErrorBody(own.json) }).toEqual({ status: 404, error: true });
  });

  test("once confirmed: what was bought and paid, and each succeeded refund with its transaction", async () => {
    const created = await api(server.url, shop.apiKey)("/api/v1/payments", { body: ORDER });
    const id = created.json.id as string;
    await markReceived(server.env, id, 34_750_000n, "confirmed");
    const refund = await api(server.url, shop.apiKey)(`/api/v1/payments/${id}/refunds`, { body: { amount: "4.75" } });
    expect(refund.status).toBe(201);
    const canceled = await api(server.url, shop.apiKey)(`/api/v1/payments/${id}/refunds`, { body: { amount: "1.00" } });
    expect(canceled.status).toBe(201);
    // The refund paid as the watcher's path leaves it: an address, a transfer seen, succeeded, the payment's total moved.
    const txHash = `0x${"7e".repeat(32)}`;
    const refunds = createRefundStore(server.running.db);
    const now = Date.parse("2026-11-20T10:00:00Z");
    expect(await refunds.setAddress(refund.json.id, "0x2222222222222222222222222222222222222222", 1, now)).toBe(true);
    expect(
      await refunds.seeTransfer(
        refund.json.id,
        { txHash, logIndex: 0, blockNumber: 5, blockHash: `0x${"11".repeat(32)}` },
        now,
      ),
    ).toBe(true);
    expect(await refunds.succeed(refund.json.id, now)).toBe(true);
    await refunds.addRefunded(id, 4_750_000n, now);

    const checkout = await (await get(`/pay/${id}`)).text();
    expect(checkout).toContain(`href="/pay/${id}/receipt"`);

    const pdf = await bytesOf(await get(`/pay/${id}/receipt.pdf`));
    const text = await pdfText(pdf);
    for (const expected of [
      "Receipt",
      DETAILS.legalName,
      ...DETAILS.lines,
      `Tax ID: ${DETAILS.taxId}`,
      "RECEIVED FROM",
      "Ana Lima",
      "ana@customer.example",
      "Invoice number INV-2026-0042",
      "Espresso beans 1kg 2 12.50 USDC 25.00 USDC",
      "Filter papers 3 3.25 USDC 9.75 USDC",
      "Total 34.75 USDC",
      "Refunded -4.75 USDC",
      "Amount paid 34.75 USDC",
      "Net paid 30.00 USDC",
      "REFUNDS",
      `20 November 2026 4.75 USDC ${txHash}`,
    ])
      expect(text).toContain(expected);
    // The canceled refund paid nothing back.
    expect(text).not.toContain("1.00 USDC");
    expectNothingPrivate(text);
    expect(Buffer.from(await bytesOf(await get(`/pay/${id}/receipt.pdf`))).equals(Buffer.from(pdf))).toBe(true);
    expect((await pdfInfo(await bytesOf(await get(`/pay/${id}/receipt.pdf?paper=letter`))))["Page size"]).toBe(
      "612 x 792 pts (letter)",
    );

    const page = await (await get(`/pay/${id}/receipt`)).text();
    for (const expected of ["Receipt", DETAILS.legalName, "Ana Lima", "-4.75 USDC", txHash, "34.75 USDC"])
      expect(page).toContain(expected);
    expectNothingPrivate(page);
  });
});

describe("the merchant API's copies", () => {
  test("need the key, and another account's payment is 404 like an unknown one", async () => {
    const stranger = await server.createAccount("Stranger Shop");
    for (const doc of ["invoice.pdf", "receipt.pdf"]) {
      const none = await api(server.url, null)(`/api/v1/payments/${invoiced.id}/${doc}`);
      expect(none.status).toBe(401);
      const other = await api(server.url, stranger.apiKey)(`/api/v1/payments/${invoiced.id}/${doc}`);
      expect({ doc, status: other.status, error: isErrorBody(other.json) }).toEqual({ doc, status: 404, error: true });
    }
    const own = await get(`/api/v1/payments/${invoiced.id}/invoice.pdf?paper=letter`, shop.apiKey);
    expect(own.status).toBe(200);
    expect((await pdfInfo(await bytesOf(own)))["Page size"]).toBe("612 x 792 pts (letter)");
  });
});
