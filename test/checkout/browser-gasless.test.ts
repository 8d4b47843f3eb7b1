/**
 * Paying without gas at checkout, in chromium against the shipped executable on a real anvil:
 * the EIP-6963 test wallet (../support/browser.ts) holds USDC and no ETH at all, signs the
 * page's EIP-3009 TransferWithAuthorization (eth_signTypedData_v4), and the server's relayer
 * submits it. The payment then follows its usual path to `confirmed`.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { type Address, type Hex, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  collectProblems,
  DESKTOP,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  REJECTED,
  screenshot,
  type TestWallet,
  useBrowserRig,
} from "../support/browser.ts";
import { startStack } from "../support/stack.ts";
import { randomAddress, startChain, usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(90_000);

const SHOP = "https://shop.example.test";
const GASLESS = /^Pay without gas with Test Wallet$/;
const TRANSFER = /^Pay .* USDC with Test Wallet$/;

// Five confirmations of 0.5 s blocks: long enough for the page to show "seen, confirming". A sweep
// floor of 1.00 USDC is the floor of paying without gas on a custom chain.
const rig = useBrowserRig({
  start: async (undo) => {
    const chain = await startChain({ blockTime: 0.5 });
    undo(() => chain.stop());
    const stack = await startStack({
      chain,
      confirmations: 5,
      pollIntervalMs: 100,
      subprocess: true,
      binary: true,
      env: { STABLEGATE_SWEEP_FLOOR: "1.00" },
    });
    undo(() => stack.stop());
    return { chain, stack };
  },
});

const cancelAbi = parseAbi(["function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)"]);

/** The checkout of `paymentId` with a test wallet holding `funds` USDC and `eth` ETH (default none). */
async function openWithWallet(
  paymentId: string,
  opts: { funds?: string; eth?: bigint; offered?: boolean; dark?: boolean; chainId?: number } = {},
) {
  const key = await fundedPayerKey(rig.chain, usdc(opts.funds ?? "100"), opts.eth ?? 0n);
  const context = await newContext(rig.browser, [rig.stack.url], opts.dark ? { colorScheme: "dark" } : {});
  await context.route(`${SHOP}/**`, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: "<!doctype html><title>Thanks</title><h1>Thanks for your order</h1>",
    }),
  );
  const wallet = await installTestWallet(context, { rpcUrl: rig.chain.rpcUrl, privateKey: key, chainId: opts.chainId });
  const page = await context.newPage();
  const problems = collectProblems(page);
  const posts: Array<{ status: number; body: any; nonce: string }> = [];
  page.on("response", async (res) => {
    if (res.url().endsWith("/authorization") && res.request().method() === "POST")
      posts.push({
        status: res.status(),
        body: await res.json().catch(() => null),
        nonce: res.request().postDataJSON().authorization.nonce,
      });
  });
  await page.goto(`${rig.stack.url}/pay/${paymentId}`);
  const gasless = page.getByRole("button", { name: GASLESS });
  const transfer = page.getByRole("button", { name: TRANSFER });
  await (opts.offered === false ? transfer : gasless).waitFor();
  return { context, page, wallet, key, problems, posts, gasless, transfer };
}

/** The class of the wallet's first button, and its text. */
const firstButton = (page: Page) =>
  page
    .locator("#wallet-options .btn")
    .first()
    .evaluate((b) => ({ text: b.textContent, primary: b.classList.contains("primary") }));

const ethBalance = (address: Address) => rig.chain.publicClient.getBalance({ address });

/** anvil's interval mining off (0) or back on: the test holds the chain still for a screenshot. */
const intervalMining = (seconds: number) => rig.chain.anvil.rpc("evm_setIntervalMining", [seconds]);

function expectOneAuthorization(wallet: TestWallet, to: string, units: bigint) {
  expect(wallet.signed.length).toBe(1);
  const signed = wallet.signed[0]!;
  expect(signed.primaryType).toBe("TransferWithAuthorization");
  expect(signed.types.EIP712Domain?.map((f) => f.name)).toEqual(["name", "version", "chainId", "verifyingContract"]);
  expect(Number(signed.domain.chainId)).toBe(rig.chain.anvil.chainId);
  expect(String(signed.domain.verifyingContract).toLowerCase()).toBe(rig.chain.usdc.toLowerCase());
  const m = signed.message as Record<string, string>;
  expect(m.from!.toLowerCase()).toBe(wallet.address.toLowerCase());
  expect(m.to!.toLowerCase()).toBe(to.toLowerCase());
  expect(BigInt(m.value!)).toBe(units);
  expect(m.nonce).toMatch(/^0x[0-9a-f]{64}$/);
  expect(BigInt(m.validBefore!)).toBeGreaterThan(BigInt(Math.floor(Date.now() / 1000)));
}

describe("paying without gas at checkout", () => {
  test("a wallet with USDC and no ETH: told so, Pay without gas leads; one signature pays; confirmed, then back to success_url", async () => {
    const p = await rig.stack.createPayment({
      amount: "12.34",
      description: "Two coffees",
      success_url: `${SHOP}/thanks?order=9`,
    });
    const { context, page, wallet, problems, posts, gasless } = await openWithWallet(p.id);
    expect(await ethBalance(wallet.address)).toBe(0n);

    // Before any click the page has seen the account cannot pay a fee: the signature leads.
    const notice = page.locator("#gas-notice");
    await notice.waitFor();
    expect(await notice.innerText()).toContain("has no ETH on Chain 31337");
    expect(await firstButton(page)).toEqual({ text: "Pay without gas with Test Wallet", primary: true });
    expect(await page.getByRole("button", { name: TRANSFER }).isVisible()).toBe(true); // the transfer stays
    expect(await page.locator("#gasless-hint").isVisible()).toBe(false); // the notice says it instead
    await screenshot(page, "gasless-offer-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "gasless-offer-phone");
    await page.setViewportSize(DESKTOP);

    await gasless.click();
    await page.locator("#status-label").filter({ hasText: "Payment seen, confirming" }).waitFor({ timeout: 30_000 });
    await intervalMining(0);
    try {
      expect(await page.locator("#incoming").isVisible()).toBe(true);
      await screenshot(page, "gasless-waiting-desktop");
      await page.setViewportSize(PHONE);
      await screenshot(page, "gasless-waiting-phone");
      await page.setViewportSize(DESKTOP);
    } finally {
      await intervalMining(1);
    }

    await page.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 30_000 });
    expect(await page.locator("#redirect-note").innerText()).toMatch(/Taking you back/);
    await screenshot(page, "gasless-confirmed-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "gasless-confirmed-phone");
    await page.waitForURL(`${SHOP}/thanks?order=9`, { timeout: 15_000 });

    expectOneAuthorization(wallet, p.deposit_address, usdc("12.34"));
    expect(posts.map((r) => r.status)).toEqual([202]);
    const methods = wallet.calls.map((c) => c.method);
    expect(methods).not.toContain("eth_sendTransaction"); // the wallet never sent anything itself
    expect(await ethBalance(wallet.address)).toBe(0n);
    expect((await rig.stack.getPayment(p.id)).status).toBe("confirmed");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("with ETH the transfer leads and Pay without gas is offered beside it; the wallet is switched before it signs", async () => {
    const p = await rig.stack.createPayment({ amount: "3.00" });
    // The wallet starts on Ethereum mainnet: the page must switch it before asking for a signature.
    const { context, page, wallet, gasless } = await openWithWallet(p.id, { eth: 10n, chainId: 1 });
    expect(await firstButton(page)).toEqual({ text: "Pay 3.00 USDC with Test Wallet", primary: true });
    expect(await page.locator("#gas-notice").isVisible()).toBe(false);
    expect(await page.locator("#gasless-hint").isVisible()).toBe(true);

    // Declined in the wallet: as the transfer's flow says it, nothing posted, and the page stays usable.
    wallet.failNext("eth_signTypedData_v4", REJECTED);
    await gasless.click();
    const message = page.locator("#wallet-msg");
    await message.filter({ hasText: "You declined the request in your wallet" }).waitFor();
    expect(await gasless.isEnabled()).toBe(true);
    await screenshot(page, "gasless-declined-desktop");
    // A wallet that does not sign typed data at all (EIP-1193's 4200) is told to pay with a transfer.
    wallet.failNext("eth_signTypedData_v4", { code: 4200, message: "The requested method is not supported." });
    await gasless.click();
    await message.filter({ hasText: "Test Wallet cannot sign a payment without gas" }).waitFor();

    await gasless.click();
    await page
      .locator("#status-label")
      .filter({ hasText: /^(Payment seen, confirming|Payment received|Paid)$/ })
      .waitFor({ timeout: 30_000 });
    expect(wallet.signed.length).toBe(1); // the declined request was never signed
    const methods = wallet.calls.map((c) => c.method);
    expect(methods.indexOf("wallet_switchEthereumChain")).toBeGreaterThanOrEqual(0);
    expect(methods.indexOf("wallet_switchEthereumChain")).toBeLessThan(methods.indexOf("eth_signTypedData_v4"));
    expect(methods).not.toContain("eth_sendTransaction");
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    await context.close();
  });

  test("no ETH and the transfer pressed anyway: the page says why and sends nothing (dark colour scheme)", async () => {
    const p = await rig.stack.createPayment({ amount: "2.00" });
    const { context, page, wallet, transfer } = await openWithWallet(p.id, { dark: true });
    await page.locator("#gas-notice").waitFor();
    await transfer.click();
    const message = page.locator("#wallet-msg");
    await message.filter({ hasText: "no ETH on Chain 31337 for the network fee" }).waitFor();
    expect(await message.innerText()).toContain("Pay without gas instead");
    expect(await page.locator("#gasless-hint").isVisible()).toBe(false); // the message says it
    expect(wallet.calls.some((c) => c.method === "eth_sendTransaction")).toBe(false);
    await screenshot(page, "gasless-no-eth-transfer-dark");
    await context.close();
  });

  test("below the floor it is not offered, and a payer without ETH reads why in the endpoint's words", async () => {
    const p = await rig.stack.createPayment({ amount: "0.50" });
    const offer = (await rig.stack.request(`/api/public/payments/${p.id}/authorization`, { auth: false })).json;
    expect(offer.available).toBe(false);
    const { context, page, gasless } = await openWithWallet(p.id, { offered: false });
    const notice = page.locator("#gas-notice");
    await notice.waitFor();
    expect(await notice.innerText()).toContain("has no ETH on Chain 31337");
    expect(await notice.innerText()).toContain(offer.reason); // the endpoint's words
    expect(await notice.innerText()).toContain("For a transfer, add a little ETH");
    expect(await gasless.count()).toBe(0);
    expect(await page.locator("#gasless-hint").isVisible()).toBe(false);
    await page.setViewportSize(PHONE);
    await screenshot(page, "gasless-below-floor-phone");
    await context.close();
  });

  test("while a signed payment is in flight, a reload does not offer to sign for it again", async () => {
    const p = await rig.stack.createPayment({ amount: "4.00" });
    const { context, page, wallet, gasless, transfer } = await openWithWallet(p.id);
    await intervalMining(0); // the relayer's transaction waits in the mempool
    try {
      await gasless.click();
      await waitFor(
        async () =>
          ((await rig.stack.publicPayment(p.id)).authorizations ?? []).some((a: { status: string }) =>
            ["pending", "submitted"].includes(a.status),
          ),
        15_000,
        "the authorization in flight",
      );
      await page.reload();
      await transfer.waitFor();
      await page
        .locator("#wallet-msg")
        .filter({ hasText: /being submitted|on its way/ })
        .waitFor();
      expect(await gasless.count()).toBe(0);
    } finally {
      await intervalMining(1);
    }
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    expect(wallet.signed.length).toBe(1);
    await context.close();
  });

  test("typed data naming another address than the deposit address is never signed", async () => {
    const p = await rig.stack.createPayment({ amount: "3.50" });
    const { context, page, wallet, posts, gasless } = await openWithWallet(p.id);
    await page.route("**/api/public/payments/*/authorization", async (route) => {
      if (route.request().method() !== "GET") return route.fallback();
      const response = await route.fetch();
      const offer = await response.json();
      offer.typed_data.message.to = randomAddress();
      return route.fulfill({ response, json: offer });
    });
    await gasless.click();
    await page.locator("#wallet-msg.error").filter({ hasText: "This payment changed" }).waitFor();
    expect(wallet.signed).toEqual([]);
    expect(wallet.calls.some((c) => c.method === "eth_signTypedData_v4")).toBe(false);
    expect(posts).toEqual([]);
    await context.close();
  });

  test("a signature that arrives after Cancel is never posted; the next one pays", async () => {
    const p = await rig.stack.createPayment({ amount: "2.50" });
    const { context, page, wallet, posts, gasless } = await openWithWallet(p.id);
    const held = wallet.gate("eth_signTypedData_v4");
    await gasless.click();
    await held.reached;
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.locator("#wallet-msg").filter({ hasText: "Cancelled" }).waitFor();
    held.release(); // the payer signs in the wallet anyway

    await gasless.click();
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    expect(wallet.signed.length).toBe(2);
    expect(posts.map((r) => r.nonce)).toEqual([String(wallet.signed[1]!.message.nonce)]);
    await context.close();
  });

  test("an authorization canceled before the server sees it is refused in the endpoint's words; the next signature pays", async () => {
    const p = await rig.stack.createPayment({ amount: "5.00" });
    const { context, page, wallet, key, posts, gasless } = await openWithWallet(p.id);
    // The first signed authorization is canceled by the payer (another tab, another app) on chain
    // before it reaches the server; the second is let through.
    let canceled = false;
    await page.route("**/api/public/payments/*/authorization", async (route) => {
      if (route.request().method() !== "POST" || canceled) return route.fallback();
      canceled = true;
      const nonce = (route.request().postDataJSON() as { authorization: { nonce: Hex } }).authorization.nonce;
      await cancelOnChain(key, wallet.signed[0]!.domain, nonce);
      return route.fallback();
    });

    await gasless.click();
    const message = page.locator("#wallet-msg.error");
    await message.waitFor({ timeout: 30_000 });
    expect(posts.length).toBe(1);
    expect(posts[0]!.status).toBe(400);
    const words = String(posts[0]!.body.error);
    expect(words.length).toBeGreaterThan(10);
    expect(await message.innerText()).toContain(words.replace(/\.$/, ""));
    expect(await message.innerText()).toContain("Nothing was paid");
    await screenshot(page, "gasless-refused-desktop");
    expect(await gasless.isEnabled()).toBe(true);

    await gasless.click();
    await rig.stack.waitForStatus(p.id, "confirmed", { timeoutMs: 30_000 });
    await page.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 15_000 });
    expect(wallet.signed.length).toBe(2);
    expect(wallet.signed[0]!.message.nonce).not.toBe(wallet.signed[1]!.message.nonce);
    await context.close();
  });
});

/** The payer's own CancelAuthorization of `nonce`, signed with its key and sent by the deployer. */
async function cancelOnChain(payerKey: Hex, domain: Record<string, unknown>, nonce: Hex) {
  const payer = privateKeyToAccount(payerKey);
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) } as never,
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: payer.address, nonce },
  });
  const hash = await rig.chain.deployer.writeContract({
    address: rig.chain.usdc,
    abi: cancelAbi,
    functionName: "cancelAuthorization",
    args: [payer.address, nonce, signature],
  });
  await rig.chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
}
