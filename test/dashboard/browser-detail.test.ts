/**
 * The new-payment form and the payment page in a real chromium against the shipped binary on a
 * real anvil, as a merchant uses them: create a payment from the form, send the pay link to a
 * customer who pays it on the local chain, and see it confirmed with its transfer, settlement and
 * webhook deliveries (the page left open meanwhile updates itself). Screenshots at desktop and
 * phone width go to test/artifacts/.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { collectProblems, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { signedInContext } from "../support/dashboard.ts";
import { startDashboardPartsWithReceiver } from "../support/dashboard-rig.ts";
import { usdc } from "../support/test-chain.ts";

// A browser, a chain, the built binary and a payment flow take longer than bun's 5 s default.
setDefaultTimeout(90_000);

const rig = useBrowserRig({ start: startDashboardPartsWithReceiver });

describe("a payment from the dashboard, in a browser", () => {
  test("created from the form, paid by the customer, seen confirmed with its transfer, settlement and webhooks", async () => {
    const endpoint = await rig.stack.request("/api/v1/webhook_endpoints", { body: { url: rig.receiver.url } });
    expect(endpoint.status).toBe(201);

    const merchant = await signedInContext(rig.browser, rig.stack.url, rig.user);
    await merchant.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.stack.url });
    const page = await merchant.newPage();
    const problems = collectProblems(page);

    // The form, empty, at both widths.
    await page.goto(`${rig.stack.url}/dashboard/payments/new`);
    await screenshot(page, "dashboard-detail-new-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-detail-new-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize({ width: 1280, height: 800 });

    // A refusal keeps what was typed and says what is wrong beside the field.
    await page.getByLabel("Item 1 description").fill("Ceramic pour-over set");
    await page.getByLabel("Item 1 unit price (USDC)").fill("12.50");
    await page.getByLabel("Item 1 quantity").fill("2");
    await page.getByLabel("Amount (USDC)").fill("30");
    await page.getByRole("button", { name: "Create payment" }).click();
    await page.locator("#np-amount-error").waitFor();
    expect(await page.locator("#np-amount-error").innerText()).toBe(
      "amount 30.00 USDC does not match line_items total 25.00 USDC",
    );
    expect(await page.getByLabel("Item 1 description").inputValue()).toBe("Ceramic pour-over set");
    // The refused form is answered 400, which chromium logs as a failed load: that one is expected.
    expect(problems).toEqual(["Failed to load resource: the server responded with a status of 400 (Bad Request)"]);
    problems.length = 0;

    // A sixth row on demand (left empty, so ignored).
    await page.getByRole("button", { name: "Add a row" }).click();
    await expect(page.getByLabel("Item 6 description").inputValue()).resolves.toBe("");
    expect(await page.getByLabel("Item 6 quantity").inputValue()).toBe("1");

    // Corrected: line items only, and what the checkout shows.
    await page.getByLabel("Amount (USDC)").fill("");
    await page.getByLabel("Item 2 description").fill("Gift wrap");
    await page.getByLabel("Item 2 unit price (USDC)").fill("0.99");
    await page.getByLabel("Description", { exact: true }).fill("Order #1042 from the spring collection");
    await page.getByLabel("Reference", { exact: true }).fill("order-1042");
    await page.getByLabel("Customer email").fill("ada@example.com");
    const due = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("Due date").fill(due);
    await page.getByRole("button", { name: "Create payment" }).click();
    await page.waitForURL(/\/dashboard\/payments\/0x[0-9a-f]{64}\?created=1$/);
    const id = /0x[0-9a-f]{64}/.exec(page.url())![0];
    expect(await page.locator(".notice.ok").innerText()).toContain("Payment created");
    const payUrl = (await page.locator("#pd-pay-url").getAttribute("href"))!;
    expect(payUrl).toBe(`${rig.stack.url}/pay/${id}`);
    expect(await page.locator("img.pd-qr").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Copy link" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(payUrl);

    // The customer opens the link and pays from their own wallet on the local chain.
    const customer = await newContext(rig.browser, [rig.stack.url]);
    const checkout = await customer.newPage();
    await checkout.goto(payUrl);
    expect(await checkout.locator("h1").innerText()).toContain("25.99");
    const deposit = (await checkout.locator("#deposit-address").innerText()).trim();
    await rig.stack.pay(deposit, usdc("25.99"));
    await rig.stack.waitForStatus(id, "confirmed", { timeoutMs: 30_000 });
    await checkout.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 15_000 });
    await customer.close();
    // The merchant's page, open all along, brings itself up to date.
    await page.locator("#pd-status").filter({ hasText: "confirmed" }).waitFor({ timeout: 30_000 });

    // Every event of the payment delivered to the endpoint, and its attempt recorded.
    await rig.stack.waitFor(
      async () =>
        (
          await rig.stack.sql<{ n: number }>(
            `SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
           WHERE e.payment_id = ? AND d.state = 'succeeded'`,
            id,
          )
        )[0]!.n === (await rig.stack.allEvents(id)).length,
      20_000,
      "the payment's webhooks delivered",
    );

    await page.goto(`${rig.stack.url}/dashboard/payments/${id}`);
    expect(await page.locator("#pd-status").innerText()).toBe("confirmed");
    const facts = await page.locator("#pd-facts").innerText();
    for (const value of ["25.99 USDC", "order-1042", "ada@example.com", "Order #1042 from the spring collection"])
      expect(facts).toContain(value);
    const payment = await rig.stack.getPayment(id);
    const transfers = page.locator("#pd-transfers");
    expect(await transfers.locator(`[title="${payment.transfers[0].tx_hash}"]`).count()).toBe(1);
    expect(await transfers.innerText()).toContain("credited");
    expect(await page.locator("#pd-settlements").innerText()).toContain("mined");
    expect(await page.locator("#pd-history").innerText()).toContain("payment.confirmed");
    const deliveries = page.locator(".pd-delivery");
    expect(await deliveries.count()).toBe((await rig.stack.allEvents(id)).length);
    const confirmedDelivery = deliveries.filter({ hasText: "payment.confirmed" });
    expect(await confirmedDelivery.innerText()).toContain("succeeded");
    expect(await confirmedDelivery.locator("td.num").first().innerText()).toBe("200");
    expect(await page.locator("#pd-items").innerText()).toContain("Gift wrap");

    await screenshot(page, "dashboard-detail-paid-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-detail-paid-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
    await merchant.close();
  });

  test("works without JavaScript: the form creates the payment and the page shows it", async () => {
    const context = await newContext(rig.browser, [rig.stack.url], { javaScriptEnabled: false });
    const signedIn = await signedInContext(rig.browser, rig.stack.url, rig.user);
    await context.addCookies(await signedIn.cookies());
    await signedIn.close();
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/dashboard/payments/new`);
    await page.getByLabel("Amount (USDC)").fill("7.50");
    await page.getByRole("button", { name: "Create payment" }).click();
    await page.waitForURL(/\/dashboard\/payments\/0x[0-9a-f]{64}\?created=1$/);
    expect(await page.locator("#pd-amount").innerText()).toBe("7.50");
    expect(await page.locator("#pd-pay-url").isVisible()).toBe(true);
    // The copy button needs the script: without it, it is not offered, and the link is there to copy.
    expect(await page.getByRole("button", { name: "Copy link" }).count()).toBe(0);
    await context.close();
  });
});
