/**
 * The dashboard's home and payments list in a real chromium against the shipped binary on a real
 * anvil: a payment paid on the chain shows as confirmed on both, the list filters and searches,
 * and Export CSV downloads a file holding it. Screenshots at desktop and phone width.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { BrowserContext } from "playwright-core";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { collectProblems, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { createDashboardUser, signedInContext } from "../support/dashboard.ts";
import { startDashboardParts } from "../support/dashboard-rig.ts";
import { usdc } from "../support/test-chain.ts";

// A browser, a chain, the built binary and a settlement take longer than bun's 5 s default.
setDefaultTimeout(90_000);

const rig = useBrowserRig({ start: startDashboardParts });
// Closed with the browser when the rig stops.
let context: BrowserContext;
let paid: { id: string; reference: string };
let open: { id: string };

beforeAll(async () => {
  const { stack } = rig;
  context = await signedInContext(rig.browser, stack.url, rig.user);
  open = await stack.createPayment({ amount: "4.00", reference: "order-open", customer_email: "sam@example.com" });
  const payment = await stack.createPayment({
    amount: "12.34",
    reference: "order-paid-1",
    description: "Two mugs",
    customer_email: "Ada@Example.com",
  });
  await stack.pay(payment.deposit_address, usdc("12.34"));
  await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 60_000 });
  paid = { id: payment.id, reference: "order-paid-1" };
});

describe("dashboard lists in a browser", () => {
  test("home shows the settled payment in today's figures, the chart and the counts", async () => {
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard`);
    const today = page.locator(".figure").filter({ hasText: "Today" });
    expect(await today.locator("dd").first().innerText()).toBe("12.34 USDC"); // gross, no fee configured
    expect(await page.getByText("Confirmed money only").count()).toBe(1);
    expect(await page.getByRole("img", { name: /Settled per day over the last 30 days, UTC/ }).count()).toBe(1);
    const confirmed = page.locator(".status-counts a").filter({ hasText: "confirmed" });
    expect(await confirmed.locator(".count").innerText()).toBe("1");
    await screenshot(page, "dashboard-home-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-home-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
    await page.getByText("Show as a table").click();
    expect(await page.locator(".chart-table tbody tr").last().innerText()).toContain("12.34 USDC");
    expect(problems).toEqual([]);
    await page.close();
  });

  test("the list shows it confirmed; filters and search narrow it; a row leads to its page", async () => {
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/payments`);
    const row = page.locator("table.payments tbody tr").filter({ hasText: paid.reference });
    expect(await row.locator(".badge").innerText()).toBe("confirmed");
    expect(await row.locator("td").first().innerText()).toBe("12.34 USDC");
    expect(await page.locator("table.payments tbody tr").count()).toBe(2);
    await screenshot(page, "dashboard-payments-desktop");

    await page.getByLabel("Status").selectOption("pending");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/status=pending/);
    expect(await page.locator("table.payments tbody tr").allInnerTexts()).toEqual([
      expect.stringContaining("order-open"),
    ]);

    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Search").fill("ada@example.com");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/q=ada%40example.com/);
    expect(await page.locator("table.payments tbody tr").allInnerTexts()).toEqual([
      expect.stringContaining(paid.reference),
    ]);

    await page.getByLabel("Search").fill("nobody-ordered-this");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No payments match these filters.").waitFor();

    await page.goto(`${rig.stack.url}/dashboard/payments?q=${paid.id}`);
    expect(await page.locator("table.payments a").getAttribute("href")).toBe(`/dashboard/payments/${paid.id}`);
    await page.goto(`${rig.stack.url}/dashboard/payments`);
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-payments-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  });

  test("Export CSV downloads the filtered payments, the paid one with its transfer", async () => {
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/dashboard/payments?status=confirmed`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^payments-\d{4}-\d{2}-\d{2}\.csv$/);
    const text = readFileSync((await download.path())!, "utf8");
    const [header, ...rows] = text.trimEnd().split("\r\n");
    expect(header!.split(",")).toContain("transfer_tx_hashes");
    expect(rows).toHaveLength(1);
    const [transfer] = await rig.stack.sql<{ tx_hash: string }>(
      "SELECT tx_hash FROM transfers WHERE payment_id = ?",
      paid.id,
    );
    const [settlement] = await rig.stack.sql<{ tx_hash: string }>(
      "SELECT tx_hash FROM settlements WHERE payment_id = ? AND state = 'mined'",
      paid.id,
    );
    expect(rows[0]).toContain(`${paid.id},`);
    expect(rows[0]).toContain(",confirmed,12.34,12.34,0.00,12.34,USDC,order-paid-1,,Two mugs,Ada@Example.com,");
    // Then what refunds paid back (amount_refunded, the last column): nothing here.
    expect(rows[0]!.endsWith(`,${transfer!.tx_hash},${settlement!.tx_hash},0.00`)).toBe(true);
    expect(text).not.toContain(open.id);
    await page.close();
  });
});

test("a second account's user sees none of the first account's payments, and its payment page is a 404", async () => {
  const other = (await runAccountCommand(
    "account",
    ["create", "--name", "Other Shop", "--payout-address", "0x000000000000000000000000000000000000dEaD"],
    rig.stack.env,
  )) as { account: { id: string } };
  const stranger = await signedInContext(
    rig.browser,
    rig.stack.url,
    await createDashboardUser(rig.stack.env, other.account.id),
  );
  try {
    const page = await stranger.newPage();
    for (const path of ["/dashboard", "/dashboard/payments", `/dashboard/payments?q=${paid.id}`]) {
      await page.goto(`${rig.stack.url}${path}`);
      const text = await page.locator("main").innerText();
      for (const secret of [paid.id, paid.reference, open.id, "order-open", "12.34", "sam@example.com"])
        expect({ path, shows: text.includes(secret) ? secret : null }).toEqual({ path, shows: null });
    }
    const direct = await page.goto(`${rig.stack.url}/dashboard/payments/${paid.id}`);
    expect(direct?.status()).toBe(404);
    expect(await page.locator("main").innerText()).not.toContain(paid.reference);
    const csv = await page.request.get(`${rig.stack.url}/dashboard/payments.csv`);
    expect(csv.status()).toBe(200);
    expect((await csv.text()).trim().split("\r\n")).toHaveLength(1); // the header row only
  } finally {
    await stranger.close();
  }
});
