/**
 * The embeddable widget (/checkout.js) on a merchant page served from another origin: it opens
 * the checkout in an overlay, the test wallet pays inside the iframe, and the merchant page hears
 * `confirmed` through its callback and the `stablegate:confirmed` DOM event, and nothing else.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import {
  collectProblems,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  screenshot,
  startCheckoutParts,
  useBrowserRig,
} from "../support/browser.ts";
import { usdc } from "../support/test-chain.ts";

setDefaultTimeout(60_000);

/** Merchant pages by path, one per test. */
const shopPages = new Map<string, string>();

function merchantPage(checkoutUrl: string, buttonPayment: string, apiPayment: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tea shop</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}button{font:inherit;padding:.6rem 1rem}</style>
<script src="${checkoutUrl}/checkout.js"></script></head>
<body><h1>Tea shop</h1><p>Sencha, 100 g</p>
<button id="buy" data-stablegate-payment="${buttonPayment}">Pay with USDC</button>
<button id="buy-js">Pay (JavaScript API)</button>
<script>
  window.events = []; window.callbacks = [];
  document.addEventListener("stablegate:confirmed", (e) => window.events.push(e.detail));
  document.getElementById("buy-js").addEventListener("click", () =>
    Stablegate.open({ paymentId: "${apiPayment}", onConfirmed: (d) => window.callbacks.push(d) }));
</script></body></html>`;
}

const rig = useBrowserRig({
  start: async (undo) => {
    const parts = await startCheckoutParts(undo);
    const merchant = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new Response(shopPages.get(new URL(req.url).pathname) ?? "not found", {
          headers: { "content-type": "text/html" },
        }),
    });
    undo(() => merchant.stop(true));
    // The merchant site: `localhost`, while the checkout is on 127.0.0.1, so another origin.
    return { ...parts, shopUrl: `http://localhost:${merchant.port}` };
  },
});

/**
 * In the merchant page, before checkout.js: counts the status checks the widget starts
 * (`statusChecks`, when it calls fetch) and the rounds of its timers that have finished, checks
 * included (`timerRounds`), so a test can wait for the widget to have looked before asserting
 * that it did nothing.
 */
function countWidgetWork() {
  const w = window as any;
  w.statusChecks = 0;
  w.timerRounds = 0;
  const fetch = window.fetch.bind(window);
  w.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    if (String(input instanceof Request ? input.url : input).includes("/api/public/payments/")) w.statusChecks++;
    return fetch(input, init);
  };
  const setInterval = window.setInterval.bind(window);
  w.setInterval = (fn: () => unknown, ms?: number) =>
    setInterval(() => void Promise.resolve(fn()).finally(() => w.timerRounds++), ms);
}

/** Serves a merchant page at a fresh path and opens it in a context with a test wallet holding 100 USDC and `eth` ETH (default 10). */
async function openShop(buttonPayment: string, apiPayment: string, opts: { eth?: bigint } = {}) {
  const path = `/shop-${crypto.randomUUID()}`;
  shopPages.set(path, merchantPage(rig.stack.url, buttonPayment, apiPayment));
  const context = await newContext(rig.browser, [rig.stack.url, rig.shopUrl]);
  const wallet = await installTestWallet(context, {
    rpcUrl: rig.chain.rpcUrl,
    privateKey: await fundedPayerKey(rig.chain, usdc("100"), opts.eth),
  });
  await context.addInitScript(countWidgetWork);
  const page = await context.newPage();
  const problems = collectProblems(page);
  await page.goto(rig.shopUrl + path);
  return { context, page, problems, wallet };
}

const events = (page: Page) =>
  page.evaluate(() => (window as any).events as Array<{ paymentId: string; status: string }>);

describe("checkout.js widget on a merchant page", () => {
  test("a data-stablegate-payment button opens the checkout; the wallet pays; the page gets stablegate:confirmed", async () => {
    const p = await rig.stack.createPayment({
      amount: "8.50",
      description: "Sencha, 100 g",
      success_url: "https://shop.example.test/done",
    });
    const other = await rig.stack.createPayment({ amount: "1.00" });
    const { context, page, problems } = await openShop(p.id, other.id);

    await page.click("#buy");
    const dialog = page.getByRole("dialog", { name: "Checkout" });
    await dialog.waitFor();
    const frame = page.frameLocator('iframe[title="Stablegate checkout"]');
    const pay = frame.getByRole("button", { name: "Pay 8.50 USDC with Test Wallet" });
    await pay.waitFor();
    expect(await frame.locator("#deposit-address").innerText()).toBe(p.deposit_address);
    await screenshot(page, "widget-open-desktop");

    // A message forged by the merchant page itself (wrong source and origin) is ignored: once a
    // message posted after it has arrived, the widget has handled it, and started no check.
    const checksBefore = await page.evaluate(() => (window as any).statusChecks);
    await page.evaluate(
      (id) =>
        new Promise<void>((resolve) => {
          window.addEventListener("message", (e) => e.data === "after the forged one" && resolve());
          window.postMessage({ source: "stablegate", type: "status", paymentId: id, status: "confirmed" }, "*");
          window.postMessage("after the forged one", "*");
        }),
      p.id,
    );
    expect(await page.evaluate(() => (window as any).statusChecks)).toBe(checksBefore);
    expect(await events(page)).toEqual([]);

    await pay.click();
    await frame.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => (window as any).events.length > 0, undefined, { timeout: 15_000 });
    expect(await events(page)).toEqual([{ paymentId: p.id, status: "confirmed" }]);
    // Inside the widget the checkout does not navigate away to success_url.
    expect(page.frames().some((f) => f.url().startsWith(`${rig.stack.url}/pay/${p.id}?embed=1`))).toBe(true);
    await screenshot(page, "widget-confirmed-desktop");

    await page.getByRole("button", { name: "Close checkout" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("buy"); // focus goes back
    expect(problems).toEqual([]);
    await context.close();
  });

  test("inside the widget a wallet with no ETH pays without gas: one signature, and the page gets stablegate:confirmed", async () => {
    const p = await rig.stack.createPayment({ amount: "6.40", description: "Gyokuro, 50 g" });
    const { context, page, problems, wallet } = await openShop(p.id, p.id, { eth: 0n });
    await page.click("#buy");
    const frame = page.frameLocator('iframe[title="Stablegate checkout"]');
    const gasless = frame.getByRole("button", { name: "Pay without gas with Test Wallet" });
    await gasless.waitFor();
    await frame.locator("#gas-notice").filter({ hasText: "has no ETH" }).waitFor();
    await screenshot(page, "widget-gasless-desktop");

    await gasless.click();
    await frame.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => (window as any).events.length > 0, undefined, { timeout: 15_000 });
    expect(await events(page)).toEqual([{ paymentId: p.id, status: "confirmed" }]);
    expect(wallet.signed.length).toBe(1);
    expect(wallet.calls.some((c) => c.method === "eth_sendTransaction")).toBe(false);
    expect(await rig.chain.publicClient.getBalance({ address: wallet.address })).toBe(0n);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("Stablegate.open calls onConfirmed and fires the event once; Escape closes the overlay", async () => {
    const p = await rig.stack.createPayment({ amount: "3.00" });
    await rig.stack.pay(p.deposit_address, usdc("3.00"));
    const { context, page } = await openShop(p.id, p.id);
    await page.setViewportSize(PHONE);

    await page.click("#buy-js");
    await page.frameLocator('iframe[title="Stablegate checkout"]').locator("#status-label").waitFor();
    await screenshot(page, "widget-open-phone");
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    await page.waitForFunction(() => (window as any).callbacks.length > 0, undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as any).callbacks)).toEqual([{ paymentId: p.id, status: "confirmed" }]);
    // A later status check (the widget checks every 4 s) must not report it twice.
    const rounds = await page.evaluate(() => (window as any).timerRounds);
    await page.waitForFunction((seen) => (window as any).timerRounds > seen, rounds, { timeout: 15_000 });
    expect(await events(page)).toEqual([{ paymentId: p.id, status: "confirmed" }]);

    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await context.close();
  });

  test("Stablegate.open rejects a malformed payment id", async () => {
    const p = await rig.stack.createPayment({ amount: "1.00" });
    const { context, page } = await openShop(p.id, p.id);
    const error = await page.evaluate(() => {
      try {
        (window as any).Stablegate.open({ paymentId: "not-an-id" });
        return "";
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(error).toContain("paymentId must be a payment id");
    expect(await page.getByRole("dialog").count()).toBe(0);
    await context.close();
  });
});
