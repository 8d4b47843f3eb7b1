/**
 * Payment links as a merchant and a customer use them, in a real chromium against the shipped
 * binary on a real anvil: the merchant creates a link in the dashboard, a customer opens it,
 * chooses an amount, pays from a browser wallet on the local chain, and the payment is confirmed
 * with `payment_link` set. Screenshots of every page at desktop and phone width.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import {
  collectProblems,
  DESKTOP,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  screenshot,
  useBrowserRig,
} from "../support/browser.ts";
import { signedInContext } from "../support/dashboard.ts";
import { startDashboardParts } from "../support/dashboard-rig.ts";
import { api } from "../support/server.ts";
import { usdc } from "../support/test-chain.ts";

// A browser, a chain and the built binary take longer than bun's 5 s default.
setDefaultTimeout(90_000);

const rig = useBrowserRig({ start: startDashboardParts });

/** Screenshots `page` at desktop and phone width, checking nothing overflows the phone's width. */
async function bothWidths(page: Page, name: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize(PHONE);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(DESKTOP);
}

describe("payment links in a browser", () => {
  test("the merchant creates a link; a customer chooses an amount and pays it on chain; confirmed with payment_link", async () => {
    const merchant = await signedInContext(rig.browser, rig.stack.url, rig.user);
    const page = await merchant.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/links`);
    expect(await page.locator("main").innerText()).toContain("No payment links yet.");
    await bothWidths(page, "dashboard-links-empty");

    await page.getByRole("link", { name: "New payment link" }).click();
    await page.waitForURL(`${rig.stack.url}/dashboard/links/new`);
    await page.getByLabel("Description").fill("Support the roastery");
    await page.getByLabel("The payer chooses the amount").check();
    await expect(page.getByLabel("Amount (USDC)").isVisible()).resolves.toBe(false); // the other way's field hides
    await page.getByLabel("Minimum (USDC, optional)").fill("1");
    await page.getByLabel("Maximum (USDC, optional)").fill("100");
    await bothWidths(page, "dashboard-links-new");
    await page.getByRole("button", { name: "Create payment link" }).click();
    await page.waitForURL(/\/dashboard\/links\/plink_[0-9A-Za-z]{24}\?created=1$/);

    const url = await page.getByLabel("Link URL").inputValue();
    const linkId = /\/l\/(plink_[0-9A-Za-z]{24})$/.exec(url)?.[1];
    expect(url).toBe(`${rig.stack.url}/l/${linkId}`);
    expect(await page.locator(".notice.ok").innerText()).toContain("Payment link created.");
    expect(
      await page.locator("img.link-qr").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0),
    ).toBe(true);
    await merchant.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.stack.url });
    await page.getByRole("button", { name: "Copy link" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await bothWidths(page, "dashboard-links-created");

    await page.goto(`${rig.stack.url}/dashboard/links`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator("tbody").innerText()).toContain("Payer chooses, 1.00 to 100.00 USDC");
    await bothWidths(page, "dashboard-links-list");
    expect(problems).toEqual([]);

    // The customer, in a browser of their own with a wallet holding USDC on the local chain.
    const customer = await newContext(rig.browser, [rig.stack.url]);
    const key = await fundedPayerKey(rig.chain, usdc("50"));
    await installTestWallet(customer, { rpcUrl: rig.chain.rpcUrl, privateKey: key });
    const payer = await customer.newPage();
    const payerProblems = collectProblems(payer);
    await payer.goto(url);
    expect(await payer.locator("h1").innerText()).toContain("Stack Shop");
    expect(await payer.locator("#description").innerText()).toBe("Support the roastery");
    await bothWidths(payer, "dashboard-links-pay-page");

    expect(payerProblems).toEqual([]);
    await payer.getByLabel("Amount (USDC)").fill("150");
    await payer.getByRole("button", { name: "Pay" }).click();
    await payer.locator("#form-error").waitFor();
    expect(await payer.locator("#form-error").innerText()).toBe("Amount must be at most 100.00 USDC.");
    await bothWidths(payer, "dashboard-links-pay-page-refused");
    // The refusal is a 400 document, which the console reports; nothing else went wrong.
    expect(payerProblems.splice(0)).toEqual([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);

    await payer.getByLabel("Amount (USDC)").fill("12.5");
    await payer.getByLabel(/^Email/).fill("ada@example.org");
    await payer.getByRole("button", { name: "Pay" }).click();
    await payer.waitForURL(/\/pay\/0x[0-9a-f]{64}$/);
    const paymentId = new URL(payer.url()).pathname.slice("/pay/".length);
    expect(await payer.locator("#amount").innerText()).toBe("12.50");
    await payer.getByRole("button", { name: "Pay 12.50 USDC with Test Wallet" }).click();
    await payer.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 45_000 });
    expect(payerProblems).toEqual([]);

    const payment = await rig.stack.getPayment(paymentId);
    expect(payment).toMatchObject({
      status: "confirmed",
      payment_link: linkId,
      amount: "12.50",
      amount_received: "12.50",
      description: "Support the roastery",
      customer_email: "ada@example.org",
    });
    await customer.close();

    // The merchant sees it on the link's page, then deactivates the link from the list.
    await page.goto(`${rig.stack.url}/dashboard/links/${linkId}`);
    const paid = page.locator("table.link-payments tbody tr");
    expect(await paid.count()).toBe(1);
    expect(await paid.innerText()).toContain("12.50 USDC");
    expect(await paid.innerText()).toContain("confirmed");
    expect(await paid.innerText()).toContain("ada@example.org");
    await bothWidths(page, "dashboard-links-detail-paid");
    await page.goto(`${rig.stack.url}/dashboard/links`);
    await page.getByRole("button", { name: "Deactivate Support the roastery" }).click();
    await page.waitForURL(`${rig.stack.url}/dashboard/links`);
    expect(await page.locator("tbody").innerText()).toContain("Inactive");
    expect((await fetch(url)).status).toBe(404);
    await merchant.close();
  });
});

test("an itemised fixed-amount link's page, and a deactivated link's 404 page (for review in test/artifacts)", async () => {
  // A shop of its own: the other test starts from the stack's shop having no links.
  const shop = (await runAccountCommand(
    "account",
    ["create", "--name", "Tasting Shop", "--payout-address", "0x000000000000000000000000000000000000dEaD"],
    rig.stack.env,
  )) as { api_key: string };
  const merchantApi = api(rig.stack.url, shop.api_key);
  const created = await merchantApi("/api/v1/payment_links", {
    method: "POST",
    body: {
      description: "Spring tasting box",
      line_items: [
        { description: "Single-origin beans, 250 g", unit_amount: "11.50", quantity: 2 },
        { description: "Tasting notes card", unit_amount: "2.00", quantity: 1 },
      ],
    },
  });
  expect(created.status).toBe(201);
  const context = await newContext(rig.browser, [rig.stack.url]);
  const page = await context.newPage();
  const problems = collectProblems(page);
  await page.goto(created.json.url);
  expect(await page.locator("#amount").innerText()).toBe("25.00");
  expect(await page.locator("table.items").innerText()).toContain("2 × 11.50 USDC");
  expect(await page.locator("#amount").count()).toBe(1);
  expect(await page.getByLabel("Amount (USDC)").count()).toBe(0);
  await bothWidths(page, "dashboard-links-pay-page-fixed");
  expect(problems).toEqual([]);

  await merchantApi(`/api/v1/payment_links/${created.json.id}`, { method: "POST", body: { active: false } });
  const res = await page.goto(created.json.url);
  expect(res?.status()).toBe(404);
  expect(await page.locator("h1").innerText()).toBe("Payment link not found");
  await bothWidths(page, "dashboard-links-pay-page-404");
  await context.close();
});
