/**
 * The dashboard's webhooks, API keys and settings pages in a real chromium against the shipped
 * binary on a real anvil, as a merchant uses them: add an endpoint pointing at a local receiver
 * and watch a paid payment's deliveries arrive in its log, create and revoke a key, read the
 * settings with the relayer's live gas balance, and change the account's speed policy and see
 * the next payment take it. Screenshots at desktop and phone width.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { collectProblems, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { signedInContext } from "../support/dashboard.ts";
import { startDashboardPartsWithReceiver } from "../support/dashboard-rig.ts";
import { api } from "../support/server.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

// A browser, a chain and the built binary take longer than bun's 5 s default.
setDefaultTimeout(90_000);

const rig = useBrowserRig({ start: startDashboardPartsWithReceiver });

async function signedInPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await signedInContext(rig.browser, rig.stack.url, rig.user);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.stack.url });
  const page = await context.newPage();
  return { context, page, problems: collectProblems(page) };
}

/** Screenshots at desktop and phone width; on the phone nothing may stick out sideways. */
async function bothWidths(page: Page, name: string): Promise<void> {
  await screenshot(page, `dashboard-admin-${name}-desktop`);
  await page.setViewportSize(PHONE);
  await screenshot(page, `dashboard-admin-${name}-phone`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
}

const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

describe("webhooks in a browser", () => {
  test("add an endpoint, copy its secret, and see a paid payment's deliveries in its log", async () => {
    const { context, page, problems } = await signedInPage();
    await page.goto(`${rig.stack.url}/dashboard/webhooks`);
    await screenshot(page, "dashboard-admin-webhooks-empty-desktop");
    await page.getByLabel("Endpoint URL").fill(rig.receiver.url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = await page.locator("#endpoint-secret").innerText();
    expect(secret).toMatch(/^whsec_/);
    await page.locator(".secret-once").getByRole("button", { name: "Copy" }).click();
    await page.locator(".secret-once").getByRole("button", { name: "Copied" }).waitFor();
    expect(await clipboard(page)).toBe(secret);
    await bothWidths(page, "webhooks");
    await page.setViewportSize({ width: 1280, height: 800 });

    const payment = await rig.stack.createPayment({ amount: "3.00", reference: "order-77" });
    await rig.stack.pay(payment.deposit_address, usdc("3.00"));
    await rig.stack.waitForStatus(payment.id, "confirmed", { timeoutMs: 30_000 });
    await waitFor(
      () => rig.receiver.hits.some((h) => h.body.includes('"type":"payment.confirmed"')),
      30_000,
      "payment.confirmed at the receiver",
    );

    await page.getByRole("link", { name: "View" }).click();
    await page.waitForURL(/\/dashboard\/webhooks\/we_/);
    const confirmed = page.locator(".delivery", { hasText: "payment.confirmed" });
    // Delivered already (the receiver has it); the attempt is recorded just after the answer.
    await waitFor(
      async () => {
        await page.reload();
        return (await confirmed.locator(".badge.succeeded").count()) > 0;
      },
      15_000,
      "the delivery's attempt in the log",
    );
    const text = await confirmed.innerText();
    expect(text).toContain(`${payment.id.slice(0, 10)}…${payment.id.slice(-4)}`);
    expect(text).toContain("200");
    expect(text).toMatch(/\d+ ms/);
    // Newest first: every event of the payment (payment.funds_seen too when the watcher saw the
    // transfer before it counted) was sent to the endpoint.
    expect(await page.locator(".delivery .event-type").allInnerTexts()).toEqual(
      [...(await rig.stack.allEvents(payment.id))].reverse(),
    );
    expect(await rig.stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    await confirmed
      .getByRole("link")
      .first()
      .getAttribute("href")
      .then((href) => {
        expect(href).toBe(`/dashboard/payments/${payment.id}`);
      });

    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByText("Test event queued").waitFor();
    await confirmed.getByRole("button", { name: "Retry" }).click();
    await page.getByText("queued to be sent again now").waitFor();
    await waitFor(
      async () => {
        await page.reload();
        return (await page.locator(".delivery", { hasText: "payment.confirmed" }).innerText()).includes("2 attempts");
      },
      15_000,
      "the retried delivery's second attempt",
    );
    await bothWidths(page, "webhook-deliveries");
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("API keys in a browser", () => {
  test("create a key, copy it, use it, and revoke it", async () => {
    const { context, page, problems } = await signedInPage();
    await page.goto(`${rig.stack.url}/dashboard/keys`);
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-api-key").innerText();
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    await page.locator(".secret-once").getByRole("button", { name: "Copy" }).click();
    await page.locator(".secret-once").getByRole("button", { name: "Copied" }).waitFor();
    expect(await clipboard(page)).toBe(key);
    const call = () => api(rig.stack.url, key)("/api/v1/payments");
    expect((await call()).status).toBe(200);
    await bothWidths(page, "keys");
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.goto(`${rig.stack.url}/dashboard/keys`);
    const row = page.locator("tr", { hasText: key.slice(-4) });
    await row.getByLabel("Sure").check();
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.waitForURL(/\/dashboard\/keys\?revoked=key_/);
    expect(await page.locator("tr", { hasText: key.slice(-4) }).innerText()).toContain("Revoked");
    expect((await call()).status).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe("settings in a browser", () => {
  test("shows the account, the read-only payout address and the relayer's live gas balance", async () => {
    const { context, page, problems } = await signedInPage();
    await page.goto(`${rig.stack.url}/dashboard/settings`);
    expect(await page.locator("#payout-address").innerText()).toBe(rig.stack.payout);
    expect(await page.locator("#relayer-balance").innerText()).toMatch(/^\d+(\.\d{1,6})? ETH$/);
    await bothWidths(page, "settings");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("change the speed policy: the choices and their risks, saved with a notice, and the next payment takes it", async () => {
    const { context, page, problems } = await signedInPage();
    await page.goto(`${rig.stack.url}/dashboard/settings`);
    const form = page.locator(".speed-form");
    // The stack's server has no STABLEGATE_SPEED: the account follows standard, the server's default.
    expect(await page.locator("#speed").innerText()).toBe("standard");
    expect(await form.getByLabel("Follow the server's default (standard)").isChecked()).toBe(true);
    expect(await form.locator(".speed-choice").allInnerTexts()).toEqual([
      expect.stringContaining("could still take it back"),
      expect.stringContaining("block deep, the margin careful processors wait for"),
      expect.stringContaining("finalized"),
      expect.stringContaining("Whatever the server's operator sets"),
    ]);
    await bothWidths(page, "settings-speed");
    await page.setViewportSize({ width: 1280, height: 800 });

    // The label is the whole bordered choice: clicking its risk line picks it.
    await form.locator(".speed-choice", { hasText: "Fast" }).locator(".hint").click();
    expect(await form.getByRole("radio", { name: /^Fast/ }).isChecked()).toBe(true);
    await form.getByRole("button", { name: "Save speed" }).click();
    await page.waitForURL(`${rig.stack.url}/dashboard/settings?saved=speed`);
    expect(await page.getByRole("status").innerText()).toContain("run under fast");
    expect(await page.locator("#speed").innerText()).toBe("fast");
    expect(await form.getByRole("radio", { name: /^Fast/ }).isChecked()).toBe(true);
    await bothWidths(page, "settings-speed-saved");

    const payment = await rig.stack.createPayment({ amount: "1.00" });
    expect(payment.speed).toBe("fast");
    // Back to the server's default, as the other tests of the file found it.
    await form.getByRole("radio", { name: /^Follow the server's default/ }).check();
    await form.getByRole("button", { name: "Save speed" }).click();
    await page.getByText("run under the server's default, standard").waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});
