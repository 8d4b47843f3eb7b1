/**
 * The invoice and receipt of a payment paid for real on anvil, served by the shipped executable
 * (its embedded font included) and read in chromium: the PDFs say "Paid" with the date and the
 * transaction, the receipt lists the transfer; the pages at phone and desktop widths (screenshots
 * in test/artifacts/ and /tmp/shots/), free of console errors and CSP violations, and printed to
 * PDF by chromium with every field still there.
 */

import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { openStore, storeLocationFrom } from "../../src/db/open.ts";
import { checkLogo } from "../../src/documents/logo.ts";
import { createBusinessStore } from "../../src/documents/store.ts";
import { collectProblems, DESKTOP, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { runCli } from "../support/cli.ts";
import { createDashboardUser, signedInContext } from "../support/dashboard.ts";
import { pdfFonts, pdfText } from "../support/pdf-text.ts";
import { solidPng } from "../support/png.ts";

// A chain, the executable, a browser and a payment flow take longer than bun's 5 s default.
setDefaultTimeout(90_000);

const rig = useBrowserRig();
const SHOTS = "/tmp/shots";

async function shoot(page: Parameters<typeof screenshot>[0], name: string) {
  const path = await screenshot(page, name);
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(path, `${SHOTS}/${name}.png`);
}

/** The account's business details, through the CLI, and a logo written as the settings form's store writes it. */
async function setBusiness() {
  const set = await runCli(
    [
      "account",
      "set-business",
      rig.stack.accountId,
      "--legal-name",
      "Ceramics Atelier Lovelace Ltd",
      "--address-line",
      "12 Pottery Lane",
      "--address-line",
      "Bristol BS1 4DJ, United Kingdom",
      "--tax-id",
      "GB 123 4567 89",
      "--support-email",
      "orders@atelier.example",
    ],
    rig.stack.env,
  );
  expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
  const db = await openStore(storeLocationFrom(rig.stack.env));
  try {
    await createBusinessStore(db).setLogo(
      rig.stack.accountId,
      await checkLogo(solidPng(180, 60, [180, 83, 9])),
      Date.now(),
    );
  } finally {
    await db.close();
  }
}

const order = (invoice: string) => ({
  line_items: [
    { description: "Ceramic pour-over set", unit_amount: "12.50", quantity: 2 },
    { description: "Gift wrap", unit_amount: "0.99", quantity: 1 },
  ],
  description: "Order #1042 from the spring collection",
  invoice_number: invoice,
  due_at: "2026-12-31T00:00:00Z",
  customer_name: "Ada Lovelace",
  customer_email: "ada@example.com",
});

const fetchPdf = async (path: string) => new Uint8Array(await (await fetch(rig.stack.url + path)).arrayBuffer());

describe("documents of a payment paid on chain", () => {
  test("invoice and receipt PDFs say Paid, when, and the transaction; the executable embeds Inter", async () => {
    await setBusiness();
    const p = await rig.stack.createPayment(order("INV-2031-42"));
    const txHash = await rig.stack.pay(p.deposit_address, 25_990_000n);
    const paid = await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 60_000 });
    const events = await rig.stack.sql<{ created_at: number }>(
      "SELECT created_at FROM events WHERE payment_id = ? AND type = 'payment.confirmed'",
      p.id,
    );
    const paidOn = new Date(Number(events[0]!.created_at));
    const day = `${paidOn.getUTCDate()} ${paidOn.toLocaleString("en", { month: "long", timeZone: "UTC" })} ${paidOn.getUTCFullYear()}`;

    const invoice = await fetchPdf(`/pay/${p.id}/invoice.pdf`);
    const text = await pdfText(invoice);
    for (const expected of [
      "Ceramics Atelier Lovelace Ltd",
      "INV-2031-42",
      "Ceramic pour-over set 2 12.50 USDC 25.00 USDC",
      "Amount due 0.00 USDC",
      "Paid",
      `Paid on ${day}`,
      txHash,
    ])
      expect(text).toContain(expected);
    expect(text).not.toContain("PAY ONLINE");
    const fonts = await pdfFonts(invoice);
    expect(fonts.every((f) => f.embedded && f.name.includes("Inter"))).toBe(true);

    const receipt = await pdfText(await fetchPdf(`/pay/${p.id}/receipt.pdf`));
    for (const expected of [
      "Receipt",
      `Paid ${day}`,
      "Ada Lovelace",
      "Amount paid 25.99 USDC",
      `${paid.chain ?? "custom"} 25.99 USDC ${txHash}`,
    ])
      expect(receipt).toContain(expected);
    expect(receipt).not.toContain("REFUNDS");
  });

  test("the pages at phone and desktop widths, linked from the checkout, and printed to PDF by chromium", async () => {
    await setBusiness();
    const unpaid = await rig.stack.createPayment(order("INV-2031-43"));
    const p = await rig.stack.createPayment(order("INV-2031-44"));
    const txHash = await rig.stack.pay(p.deposit_address, 25_990_000n);
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 60_000 });

    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);

    await page.goto(`${rig.stack.url}/pay/${p.id}`);
    await page.locator("#receipt-link").waitFor();
    expect(await page.locator("#invoice-link").getAttribute("href")).toBe(`/pay/${p.id}/invoice`);

    for (const [name, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.goto(`${rig.stack.url}/pay/${unpaid.id}/invoice`);
      const invoiceText = await page.locator("main").innerText();
      for (const shown of ["Ceramics Atelier Lovelace Ltd", "INV-2031-43", "Ada Lovelace", "Gift wrap", "25.99 USDC"])
        expect(invoiceText).toContain(shown);
      expect(await page.locator("img.logo").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(
        180,
      );
      expect(
        await page.locator("img.qr").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
      ).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await shoot(page, `invoice-${name}`);

      await page.goto(`${rig.stack.url}/pay/${p.id}/invoice`);
      expect(await page.locator("#paid").innerText()).toContain(txHash);
      await shoot(page, `invoice-paid-${name}`);

      await page.goto(`${rig.stack.url}/pay/${p.id}/receipt`);
      expect(await page.locator("#transfers").innerText()).toContain(txHash);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await shoot(page, `receipt-${name}`);
    }

    // Printed from the browser, the page keeps every field (and drops its links bar).
    await page.goto(`${rig.stack.url}/pay/${unpaid.id}/invoice`);
    const printed = await pdfText(new Uint8Array(await page.pdf({ format: "A4", printBackground: true })));
    for (const shown of [
      "Ceramics Atelier Lovelace Ltd",
      "12 Pottery Lane",
      "GB 123 4567 89",
      "INV-2031-43",
      "31 December 2026",
      "Ada Lovelace",
      "ada@example.com",
      "Ceramic pour-over set",
      "25.99 USDC",
    ])
      expect(printed).toContain(shown);
    // The pay link wraps beside its QR code on paper: whole once the line breaks are taken out.
    expect(printed.replace(/\s/g, "")).toContain(`/pay/${unpaid.id}`);
    expect(printed).not.toContain("Download PDF");
    expect(problems).toEqual([]);

    // A real JPEG (chromium's own) is taken as a logo, and the documents print with it.
    const jpeg = new Uint8Array(await page.screenshot({ type: "jpeg", clip: { x: 0, y: 0, width: 200, height: 80 } }));
    const logo = await checkLogo(jpeg);
    expect({ type: logo.type, width: logo.width, height: logo.height }).toEqual({
      type: "image/jpeg",
      width: 200,
      height: 80,
    });
    const db = await openStore(storeLocationFrom(rig.stack.env));
    try {
      await createBusinessStore(db).setLogo(rig.stack.accountId, logo, Date.now());
    } finally {
      await db.close();
    }
    expect(await pdfText(await fetchPdf(`/pay/${p.id}/receipt.pdf`))).toContain("Ceramics Atelier Lovelace Ltd");
    await page.goto(`${rig.stack.url}/pay/${p.id}/receipt`);
    expect(await page.locator("img.logo").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(
      200,
    );
    await context.close();
  });

  test("the settings page's business forms in a browser: saved, the logo uploaded, at both widths", async () => {
    const user = await createDashboardUser(rig.stack.env, rig.stack.accountId);
    const context = await signedInContext(rig.browser, rig.stack.url, user);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/settings`);
    await page.getByLabel("Legal name").fill("Lovelace Ceramics Ltd");
    await page.getByLabel("Address").fill("12 Pottery Lane\nBristol BS1 4DJ");
    await page.getByLabel("Tax ID").fill("GB 987 6543 21");
    await page.getByLabel("Support email").fill("hello@lovelace.example");
    await Promise.all([
      page.waitForURL(/saved=business/),
      page.getByRole("button", { name: "Save business details" }).click(),
    ]);
    expect(await page.locator("main").innerText()).toContain("Business details saved");
    await page.locator("#logo").setInputFiles({
      name: "logo.png",
      mimeType: "image/png",
      buffer: Buffer.from(solidPng(240, 80, [22, 101, 52])),
    });
    await Promise.all([page.waitForURL(/saved=logo/), page.getByRole("button", { name: "Upload logo" }).click()]);
    expect(await page.locator("#business-logo").evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(240);
    for (const [name, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.locator("#business-title").scrollIntoViewIfNeeded();
      await shoot(page, `settings-business-${name}`);
    }
    const p = await rig.stack.createPayment(order("INV-2031-45"));
    await page.goto(`${rig.stack.url}/pay/${p.id}/invoice`);
    expect(await page.locator("#merchant-name").innerText()).toBe("Lovelace Ceramics Ltd");
    expect(problems).toEqual([]);
    await context.close();
  });
});
