/**
 * The settings page's email card in a real chromium, as a merchant uses it: it says email works
 * (and nothing about the SMTP login), sends a test email that arrives at a real SMTP server,
 * saves the user's payment emails and the account's customer emails; and when email is off it
 * says how to turn it on. Screenshots at phone and desktop width.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import type { Page } from "playwright-core";
import { sql } from "../../src/db/engine.ts";
import { createEmailStore } from "../../src/email/store.ts";
import { parseSmtpUrl } from "../../src/lib/smtp-url.ts";
import { collectProblems, DESKTOP, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { createDashboardUser, type DashboardUser, signedInContext } from "../support/dashboard.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { SMTP_PASSWORD, SMTP_USER, startTestSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(60_000);

const rig = useBrowserRig<{
  smtp: TestSmtp;
  server: TestServer;
  off: TestServer;
  user: DashboardUser;
  offUser: DashboardUser;
}>({
  start: async (undo) => {
    const smtp = await startTestSmtp();
    undo(() => smtp.close());
    const server = await startTestServer(
      { email: { smtp: parseSmtpUrl("STABLEGATE_SMTP_URL", smtp.url), from: "billing@shop.example" } },
      { smtpTls: { ca: smtp.ca } },
    );
    undo(() => server.stop());
    const off = await startTestServer();
    undo(() => off.stop());
    const user = await createDashboardUser(server.env, (await server.createAccount("Mail Shop")).accountId);
    const offUser = await createDashboardUser(off.env, (await off.createAccount("Quiet Shop")).accountId);
    return { smtp, server, off, user, offUser };
  },
});

/** Both widths, kept under /tmp/shots too; on the phone nothing may stick out sideways. */
async function bothWidths(page: Page, name: string): Promise<void> {
  mkdirSync("/tmp/shots", { recursive: true });
  await page.setViewportSize(DESKTOP);
  copyFileSync(await screenshot(page, `email-${name}-1280`), `/tmp/shots/email-${name}-1280.png`);
  await page.setViewportSize(PHONE);
  copyFileSync(await screenshot(page, `email-${name}-390`), `/tmp/shots/email-${name}-390.png`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize(DESKTOP);
}

describe("the email card", () => {
  test("says email works, sends a test email, and saves both preferences", async () => {
    const context = await signedInContext(rig.browser, rig.server.url, rig.user);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.server.url}/dashboard/settings#email`);
    const card = page.locator("#email");
    expect(await card.locator("#email-status").innerText()).toContain("Working");
    const text = await card.innerText();
    expect(text).toContain("smtp://127.0.0.1:");
    expect(text).not.toContain(SMTP_USER);
    expect(text).not.toContain(SMTP_PASSWORD);
    expect(await page.content()).not.toContain(encodeURIComponent(SMTP_PASSWORD));

    await card.getByRole("button", { name: "Send test email" }).click();
    await page.getByText(`Test email sent to ${rig.user.email}`).waitFor();
    const mail = await waitFor(
      () => rig.smtp.messages.find((m) => m.to.includes(rig.user.email)),
      10_000,
      "the test email",
    );
    expect(mail.subject).toBe("Stablegate test email");

    await page.getByLabel("A daily summary").check();
    await page.getByRole("button", { name: "Save my emails" }).click();
    await page.getByText("Email settings saved.").waitFor();
    expect(await page.getByLabel("A daily summary").isChecked()).toBe(true);
    await page.locator("#email").getByText("Off", { exact: true }).click();
    await page.getByRole("button", { name: "Save customer emails" }).click();
    await page.getByText("Email settings saved.").waitFor();
    // Through the server's own store: a second SQLite connection in this process could wait
    // (blocking the thread) for a transaction of the server's that cannot go on meanwhile.
    const store = createEmailStore(rig.server.running.db);
    expect(await store.paymentNotices(rig.user.id)).toBe("daily");
    expect(await store.customerEmails(rig.user.accountId)).toBe(false);
    await page.locator("#email").scrollIntoViewIfNeeded();
    await bothWidths(page, "settings");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("a test email to a bad address is refused on the page and sends nothing", async () => {
    const context = await signedInContext(rig.browser, rig.server.url, rig.user);
    const page = await context.newPage();
    await page.goto(`${rig.server.url}/dashboard/settings`);
    const before = rig.smtp.messages.length;
    // The browser's own check is bypassed: the server must refuse on its own.
    await page.locator('input[name="address"]').evaluate((input: HTMLInputElement) => {
      input.type = "text";
      input.value = "not an address";
    });
    const answer = page.waitForResponse((r) => r.url().endsWith("/dashboard/settings/email/test"));
    await page.getByRole("button", { name: "Send test email" }).click();
    expect((await answer).status()).toBe(400);
    await page.getByText('address: "not an address" is not an email address').waitFor();
    expect(rig.smtp.messages.length).toBe(before);
    await context.close();
  });

  test("with email off, the card says how to turn it on and offers no forms", async () => {
    const context = await signedInContext(rig.browser, rig.off.url, rig.offUser);
    const page = await context.newPage();
    await page.goto(`${rig.off.url}/dashboard/settings`);
    const card = page.locator("#email");
    expect(await card.locator("#email-status").innerText()).toBe("Off");
    expect(await card.innerText()).toContain("STABLEGATE_SMTP_URL");
    expect(await card.locator("form").count()).toBe(0);
    // Off means nothing is queued either: turning email on later sends no old news.
    const key = (await rig.off.createAccount("Off Shop")).apiKey;
    const created = await fetch(`${rig.off.url}/api/v1/payments`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "5.00", invoice_number: "OFF-1", customer_email: "c@customer.example" }),
    });
    expect(created.status).toBe(201);
    expect(await rig.off.running.db.get(sql`SELECT count(*) AS n FROM email_outbox`)).toEqual({ n: 0 });
    await card.scrollIntoViewIfNeeded();
    await bothWidths(page, "settings-off");
    await context.close();
  });
});

describe("an email as a customer's mail program shows it", () => {
  test("the invoice's HTML body renders with nothing fetched", async () => {
    const key = (await rig.server.createAccount("Corner Café")).apiKey;
    await fetch(`${rig.server.url}/api/v1/payments`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        amount: "42.50",
        invoice_number: "INV-2026-0042",
        customer_email: "ada@customer.example",
        customer_name: "Ada Lovelace",
        description: "Two mugs and a teapot",
        due_at: "2026-12-15",
      }),
    });
    const mail = await waitFor(
      () => rig.smtp.messages.find((m) => m.subject.startsWith("Invoice INV-2026-0042")),
      10_000,
      "invoice",
    );
    const context = await newContext(rig.browser, []);
    const page = await context.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.setContent(mail.html);
    expect(requests).toEqual([]);
    await bothWidths(page, "invoice-html");
    await context.close();
  });
});
