/**
 * Paying from a browser wallet, in chromium against the in-process server on a real anvil. The
 * wallet is the EIP-6963 test wallet of ../support/browser.ts: the page's requests are answered
 * in this process, which signs with its own funded key and sends to anvil.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  collectProblems,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  REJECTED,
  screenshot,
  useBrowserRig,
} from "../support/browser.ts";
import { usdc } from "../support/test-chain.ts";

setDefaultTimeout(60_000);

const SHOP = "https://shop.example.test";
const rig = useBrowserRig();

/**
 * In the page: sets `window.crossChainListed` once the page has read its list of source chains
 * and rendered from it. The flag is set in a task after the body is parsed, so every step the
 * page takes on that result (all in that parse's continuations) has run by then.
 */
function markCrossChainListed() {
  const fetch = window.fetch.bind(window);
  (window as any).fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(input, init);
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith("/cross-chain") || (init?.method ?? "GET") !== "GET") return res;
    const json = res.json.bind(res);
    res.json = () => json().finally(() => setTimeout(() => ((window as any).crossChainListed = true)));
    return res;
  };
}

/** The checkout of `paymentId` in a fresh context with a test wallet holding `funds` USDC. */
async function openWithWallet(
  paymentId: string,
  opts: { funds?: string; chainId?: number; markCrossChainListed?: boolean } = {},
) {
  const key = await fundedPayerKey(rig.chain, usdc(opts.funds ?? "1000"));
  const context = await newContext(rig.browser, [rig.stack.url]);
  await context.route(`${SHOP}/**`, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: "<!doctype html><title>Thanks</title><h1>Thanks for your order</h1>",
    }),
  );
  const wallet = await installTestWallet(context, { rpcUrl: rig.chain.rpcUrl, privateKey: key, chainId: opts.chainId });
  if (opts.markCrossChainListed) await context.addInitScript(markCrossChainListed);
  const page = await context.newPage();
  const problems = collectProblems(page);
  const syncs: string[] = [];
  page.on("request", (req) => req.url().endsWith("/sync") && syncs.push(req.postData() ?? ""));
  await page.goto(`${rig.stack.url}/pay/${paymentId}`);
  const payButton = page.getByRole("button", { name: /^Pay .* USDC with Test Wallet$/ });
  await payButton.waitFor();
  return { context, page, wallet, problems, syncs, payButton };
}

/** The (to, amount) of the ERC-20 transfer the page asked the wallet to send. */
function transferOf(wallet: { calls: Array<{ method: string; params: unknown[] }> }) {
  const sent = wallet.calls
    .filter((c) => c.method === "eth_sendTransaction")
    .map((c) => c.params[0] as { to: string; data: string });
  expect(sent.length).toBe(1);
  const data = sent[0]!.data;
  expect(data.slice(0, 10)).toBe("0xa9059cbb");
  expect(data.length).toBe(2 + 8 + 64 + 64);
  return { token: sent[0]!.to, to: `0x${data.slice(34, 74)}`, units: BigInt(`0x${data.slice(74)}`) };
}

describe("paying with a browser wallet", () => {
  test("the wallet pays: switch chain, balance check, transfer, sync; confirmed, then back to success_url", async () => {
    const p = await rig.stack.createPayment({
      amount: "12.34",
      description: "Two coffees",
      success_url: `${SHOP}/thanks?order=7`,
    });
    // The wallet starts on Ethereum mainnet: the page must switch it to the settlement chain.
    const { context, page, wallet, problems, syncs, payButton } = await openWithWallet(p.id, { chainId: 1 });
    expect(await payButton.innerText()).toBe("Pay 12.34 USDC with Test Wallet");
    await screenshot(page, "wallet-ready-desktop");
    await payButton.click();

    await page.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-state="confirmed"]').innerText()).toContain("Payment complete");
    expect(await page.locator("#redirect-note").innerText()).toMatch(/Taking you back/);
    await screenshot(page, "wallet-confirmed-desktop");
    await page.waitForURL(`${SHOP}/thanks?order=7`, { timeout: 15_000 });
    expect(await page.locator("h1").innerText()).toBe("Thanks for your order");

    const methods = wallet.calls.map((c) => c.method);
    expect(methods).toContain("wallet_switchEthereumChain");
    expect(methods.indexOf("eth_call")).toBeLessThan(methods.indexOf("eth_sendTransaction")); // balance first
    const transfer = transferOf(wallet);
    expect(transfer.token.toLowerCase()).toBe(rig.chain.usdc.toLowerCase());
    expect(transfer.to).toBe(p.deposit_address.toLowerCase());
    expect(transfer.units).toBe(usdc("12.34"));
    expect(syncs.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(syncs[0]!).tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await rig.stack.getPayment(p.id)).status).toBe("confirmed");
    expect(await rig.stack.usdcBalance(rig.stack.payout)).toBeGreaterThanOrEqual(usdc("12.34"));
    expect(problems).toEqual([]);
    await context.close();
  });

  test("after a partial payment the page shows the remainder, and the wallet pays just that", async () => {
    const p = await rig.stack.createPayment({ amount: "25.99", description: "Partly paid order" });
    await rig.stack.pay(p.deposit_address, usdc("10.00"));
    await rig.stack.waitForStatus(p.id, "underpaid");
    const { context, page, wallet, payButton } = await openWithWallet(p.id);

    expect(await page.locator("#status-label").innerText()).toBe("Partly paid");
    const notice = page.locator('.notice[data-state="underpaid"]');
    expect(await notice.innerText()).toContain("10.00 of 25.99 USDC received");
    expect(await notice.innerText()).toContain("remaining 15.99 USDC");
    expect(await page.locator("#amount-due").innerText()).toBe("15.99");
    expect(await payButton.innerText()).toBe("Pay the remaining 15.99 USDC with Test Wallet");
    await page.setViewportSize(PHONE);
    await screenshot(page, "wallet-underpaid-phone");

    await payButton.click();
    await page
      .locator("#status-label")
      .filter({ hasText: /^(Payment received|Paid)$/ })
      .waitFor({ timeout: 30_000 });
    expect(transferOf(wallet).units).toBe(usdc("15.99"));
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    await page.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 15_000 });
    await context.close();
  });

  test("a rejected request (4001) says so and the page stays usable: the next try pays", async () => {
    const p = await rig.stack.createPayment({ amount: "4.00" });
    const { context, page, wallet, payButton } = await openWithWallet(p.id);
    wallet.failNext("eth_sendTransaction", REJECTED);
    await payButton.click();
    const message = page.locator("#wallet-msg");
    await message.filter({ hasText: "You declined the request in your wallet" }).waitFor();
    expect(await message.innerText()).toContain("Nothing was sent");
    expect(await payButton.isEnabled()).toBe(true);
    expect(await page.locator("#deposit-address").isVisible()).toBe(true);
    await screenshot(page, "wallet-rejected-desktop");

    await payButton.click();
    await page
      .locator("#status-label")
      .filter({ hasText: /^(Payment seen, confirming|Payment received|Paid)$/ })
      .waitFor({ timeout: 30_000 });
    await context.close();
  });

  test("too little USDC: a plain message, and nothing is sent", async () => {
    const p = await rig.stack.createPayment({ amount: "5.00" });
    const { context, page, wallet, payButton } = await openWithWallet(p.id, { funds: "1.5" });
    await payButton.click();
    const message = page.locator("#wallet-msg");
    await message.filter({ hasText: "holds 1.50 USDC" }).waitFor();
    expect(await message.innerText()).toContain("less than the 5.00 USDC due");
    expect(wallet.calls.some((c) => c.method === "eth_sendTransaction")).toBe(false);
    expect(await payButton.isEnabled()).toBe(true);
    await context.close();
  });

  test("a payer who declines the network switch is told which network to use", async () => {
    const p = await rig.stack.createPayment({ amount: "6.00" });
    const { context, page, wallet, payButton } = await openWithWallet(p.id, { chainId: 10 });
    wallet.refuseSwitch = true;
    await payButton.click();
    const message = page.locator("#wallet-msg");
    await message.filter({ hasText: "Your wallet is on another network" }).waitFor();
    expect(await message.innerText()).toContain("needs Chain 31337");
    expect(wallet.calls.some((c) => c.method === "eth_sendTransaction")).toBe(false);
    await context.close();
  });

  test("a wallet that stops answering can be cancelled, and a disconnect is explained", async () => {
    const p = await rig.stack.createPayment({ amount: "2.00" });
    const { context, page, wallet, payButton } = await openWithWallet(p.id);
    wallet.hang.add("eth_sendTransaction");
    await payButton.click();
    await page.locator("#wallet-msg").filter({ hasText: "Confirm the payment" }).waitFor();
    expect(await payButton.isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.locator("#wallet-msg").filter({ hasText: "Cancelled" }).waitFor();
    expect(await payButton.isEnabled()).toBe(true);

    await payButton.click();
    await page.locator("#wallet-msg").filter({ hasText: "Confirm the payment" }).waitFor();
    await wallet.emit(page, "disconnect", { code: 4900, message: "disconnected" });
    await page.locator("#wallet-msg").filter({ hasText: "Your wallet disconnected" }).waitFor();
    expect(await payButton.isEnabled()).toBe(true);
    await context.close();
  });

  // The cross-chain panel with real source chains: browser-crosschain.test.ts.
  test("cross-chain: hidden while the server lists no source chains", async () => {
    const p = await rig.stack.createPayment({ amount: "1.00" });
    const { context, page } = await openWithWallet(p.id, { markCrossChainListed: true });
    await page.waitForFunction(() => (window as any).crossChainListed === true);
    expect(await page.locator("#crosschain").isVisible()).toBe(false);
    await context.close();
  });
});
