/**
 * The checkout page in a real chromium against the in-process server on a real anvil: rendering
 * at desktop and phone sizes (screenshots in test/artifacts/), no JavaScript, copy buttons, the
 * 404 page, a failing status poll, live status changes, and the page weight.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ANVIL_KEYS } from "../support/anvil.ts";
import { collectProblems, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { testTokenAbi } from "../support/chain.ts";
import { startStack } from "../support/stack.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

// A browser, a chain and a payment flow take longer than bun's 5 s default.
setDefaultTimeout(60_000);

const rig = useBrowserRig();

const dueDate = () => new Date(Date.now() + 14 * 86_400_000).toISOString();

function fullPayment() {
  return rig.stack.createPayment({
    line_items: [
      { description: "Ceramic pour-over set", unit_amount: "12.50", quantity: 2 },
      { description: "Gift wrap", unit_amount: "0.99", quantity: 1 },
    ],
    description: "Order #1042 from the spring collection",
    reference: "order-1042",
    invoice_number: "INV-2031-42",
    due_at: dueDate(),
    customer_name: "Ada Lovelace",
    success_url: "https://shop.example.test/thanks",
  });
}

describe("checkout page in a browser", () => {
  test("renders everything needed to pay at desktop and phone sizes", async () => {
    const p = await fullPayment();
    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/pay/${p.id}`);

    await expect(page.locator("h1").innerText()).resolves.toContain("25.99");
    const text = await page.locator("main").innerText();
    for (const shown of [
      "Stack Shop",
      "Ceramic pour-over set",
      "2 × 12.50 USDC",
      "Gift wrap",
      "INV-2031-42",
      "order-1042",
      "Ada Lovelace",
      "Order #1042",
    ]) {
      expect(text).toContain(shown);
    }
    expect(await page.locator("#deposit-address").innerText()).toBe(p.deposit_address);
    expect(await page.locator("#amount-due").innerText()).toBe("25.99");
    expect(await page.locator("#network").innerText()).toContain("31337");
    expect(await page.locator("#status-label").innerText()).toBe("Awaiting payment");
    await page
      .locator("#countdown-value")
      .filter({ hasText: /Expires in 1[34] days/ })
      .waitFor();
    expect(await page.locator("img.qr").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(
      true,
    );
    expect(await page.locator("button[data-copy]").count()).toBe(2);
    await page.locator("button[data-copy]").first().waitFor({ state: "visible" });
    // No wallet in this browser: the page says so and the manual route stays first class.
    await page.locator("#wallet-none").waitFor({ state: "visible" });
    await screenshot(page, "checkout-desktop");

    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, "checkout-phone");
    await page.setViewportSize({ width: 320, height: 700 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    await screenshot(page, "checkout-320");
    expect(problems).toEqual([]); // no CSP violations, no script errors
    await context.close();
  });

  test("dark colour scheme renders (for review in test/artifacts)", async () => {
    const p = await fullPayment();
    const context = await newContext(rig.browser, [rig.stack.url], { colorScheme: "dark" });
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/pay/${p.id}`);
    const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(background).not.toBe("rgb(255, 255, 255)");
    await screenshot(page, "checkout-desktop-dark");
    await page.setViewportSize(PHONE);
    await screenshot(page, "checkout-phone-dark");
    await context.close();
  });

  test("copy buttons put the address and the amount on the clipboard", async () => {
    const p = await rig.stack.createPayment({ amount: "7.25" });
    const context = await newContext(rig.browser, [rig.stack.url]);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.stack.url });
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/pay/${p.id}`);
    // The page writes the clipboard asynchronously after the click: wait for what it holds.
    const holds = (text: string) =>
      waitFor(
        async () => (await page.evaluate(() => navigator.clipboard.readText())) === text,
        5_000,
        `"${text}" copied`,
      );
    await page.getByRole("button", { name: "Copy address" }).click();
    await holds(p.deposit_address);
    await page.getByRole("button", { name: "Copy amount" }).click();
    await holds("7.25");
    await page.locator("#copy-live").filter({ hasText: "Copied 7.25" }).waitFor();
    // Keyboard: the copy buttons are reachable and work with Enter.
    await page.getByRole("button", { name: "Copy address" }).focus();
    await page.keyboard.press("Enter");
    await holds(p.deposit_address);
    await context.close();
  });

  test("without JavaScript the amount, address, network and QR are all there", async () => {
    const p = await fullPayment();
    const context = await newContext(rig.browser, [rig.stack.url], { javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/pay/${p.id}`);
    expect(await page.locator("#amount").innerText()).toBe("25.99");
    expect(await page.locator("#amount-due").innerText()).toBe("25.99");
    expect(await page.locator("#deposit-address").innerText()).toBe(p.deposit_address);
    expect(await page.locator("#network").innerText()).toContain("31337");
    expect(await page.locator("img.qr").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(
      true,
    );
    expect(await page.locator("#status-label").innerText()).toBe("Awaiting payment");
    expect(await page.locator("#expires-at").isVisible()).toBe(true);
    // Controls that need JavaScript stay out of the way.
    expect(await page.locator("button[data-copy]").first().isVisible()).toBe(false);
    expect(await page.locator("#wallet").isVisible()).toBe(false);
    expect(await page.getByRole("link", { name: "Reload this page" }).isVisible()).toBe(true);
    await screenshot(page, "checkout-nojs");
    await context.close();
  });

  test("an unknown payment id shows the 404 page", async () => {
    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    const res = await page.goto(`${rig.stack.url}/pay/0x${"ab".repeat(32)}`);
    expect(res?.status()).toBe(404);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Payment not found");
    expect(await page.locator("main").innerText()).toContain("ask the merchant for a new one");
    await screenshot(page, "checkout-404");
    await context.close();
  });

  test("a failing status poll shows a notice, keeps retrying and recovers", async () => {
    const p = await rig.stack.createPayment({ amount: "3.00" });
    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/pay/${p.id}`);
    let failed = 0;
    const viewUrl = `${rig.stack.url}/api/public/payments/${p.id}`;
    await page.route(viewUrl, (route) => {
      failed++;
      return route.abort("internetdisconnected");
    });
    const notice = page.locator("#net-notice");
    await notice.waitFor({ state: "visible", timeout: 10_000 });
    expect(await notice.innerText()).toContain("Retrying");
    await waitFor(() => failed >= 2, 15_000, "the page to retry the status check"); // it keeps trying
    // Everything needed to pay is still on the page meanwhile.
    expect(await page.locator("#deposit-address").isVisible()).toBe(true);
    await screenshot(page, "checkout-offline");
    await page.unroute(viewUrl);
    await notice.waitFor({ state: "hidden", timeout: 15_000 });
    await context.close();
  });

  test("the page follows the payment live: it shows expired and that a late payment still settles", async () => {
    const short = await startStack({
      chain: rig.chain,
      confirmations: 1,
      pollIntervalMs: 100,
      paymentWindow: "2s",
      relayerKey: ANVIL_KEYS[3],
    });
    try {
      const p = await short.createPayment({ amount: "5.00", description: "Quick order" });
      const context = await newContext(rig.browser, [short.url]);
      const page = await context.newPage();
      await page.goto(`${short.url}/pay/${p.id}`);
      await page.locator("#status-label").filter({ hasText: "Expired" }).waitFor({ timeout: 15_000 });
      const notice = page.locator('[data-state="expired"].notice');
      expect(await notice.isVisible()).toBe(true);
      expect(await notice.innerText()).toContain("still credited and forwarded to the merchant");
      expect(await page.locator("#deposit-address").isVisible()).toBe(true);
      await page.setViewportSize(PHONE);
      await screenshot(page, "checkout-expired-phone");
      await context.close();
    } finally {
      await short.stop();
    }
  });

  test("a failed settlement says the funds are safe and nothing more is needed", async () => {
    const blocked = await startStack({
      chain: rig.chain,
      confirmations: 1,
      pollIntervalMs: 100,
      relayerKey: ANVIL_KEYS[4],
    });
    try {
      // A blocklisted payout address makes every settlement revert (as USDC's blocklist would).
      const hash = await rig.chain.deployer.writeContract({
        address: rig.chain.usdc,
        abi: testTokenAbi,
        functionName: "setBlocked",
        args: [blocked.payout, true],
      });
      await rig.chain.publicClient.waitForTransactionReceipt({ hash });
      const p = await blocked.createPayment({ amount: "2.50", description: "Blocked payout" });
      await blocked.pay(p.deposit_address, usdc("2.50"));
      await blocked.waitForStatus(p.id, "failed", { timeoutMs: 30_000 });
      const context = await newContext(rig.browser, [blocked.url]);
      const page = await context.newPage();
      await page.goto(`${blocked.url}/pay/${p.id}`);
      expect(await page.locator("#status-label").innerText()).toBe("Received, funds safe");
      const notice = page.locator('.notice[data-state="failed"]');
      expect(await notice.innerText()).toContain("safe at the deposit address");
      expect(await notice.innerText()).toContain("You do not need to pay again");
      expect(await page.locator(".methods").isVisible()).toBe(false); // no invitation to pay twice
      await screenshot(page, "checkout-failed-desktop");
      await context.close();
    } finally {
      await blocked.stop();
    }
  });

  test("page weight: HTML, CSS and JavaScript under 100 KB, the QR excluded", async () => {
    const p = await fullPayment();
    const html = await (await fetch(`${rig.stack.url}/pay/${p.id}`)).text();
    const htmlWithoutQr = html.replace(/data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+/, "");
    const linked = [...html.matchAll(/<(?:link[^>]+href|script[^>]+src)="(\/[^"]+)"/g)].map((m) => m[1]!);
    expect(linked.length).toBe(5); // one stylesheet, four scripts
    let total = Buffer.byteLength(htmlWithoutQr);
    for (const path of linked) {
      const res = await fetch(rig.stack.url + path);
      expect(res.status).toBe(200);
      total += (await res.arrayBuffer()).byteLength;
    }
    console.log(
      `checkout page weight: ${(total / 1024).toFixed(1)} KB (HTML ${(Buffer.byteLength(htmlWithoutQr) / 1024).toFixed(1)} KB + ${linked.length} assets), QR excluded`,
    );
    expect(total).toBeLessThan(100 * 1024);
  });
});
