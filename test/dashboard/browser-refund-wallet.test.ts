/**
 * Refunding from the payment page in a real chromium against the shipped binary on a real anvil:
 * the merchant makes a refund with the form, and "Pay with wallet" sends its exact USDC transfer
 * from the merchant's own wallet (the EIP-6963 test wallet of ../support/browser.ts, funded on the
 * chain) to the refund address; the balances on chain say it landed. Without a wallet the button
 * stays hidden and the QR code and figures remain. Screenshots at desktop and phone width go to
 * test/artifacts/. Matching the transfer to the refund is the watcher's, tested on its own.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  ARTIFACTS,
  collectProblems,
  DESKTOP,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  REJECTED,
  useBrowserRig,
} from "../support/browser.ts";
import { signedInContext } from "../support/dashboard.ts";
import { startDashboardParts } from "../support/dashboard-rig.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

// A browser, a chain, the built binary and a payment flow take longer than bun's 5 s default.
setDefaultTimeout(120_000);

const rig = useBrowserRig({ start: startDashboardParts });

/** A payment of `amount` paid on the chain and confirmed: funds a refund may give back. */
async function confirmedPayment(amount: string): Promise<string> {
  const payment = await rig.stack.createPayment({ amount, description: "Espresso grinder" });
  await rig.stack.pay(payment.deposit_address, usdc(amount));
  await rig.stack.waitForStatus(payment.id, "confirmed", { timeoutMs: 30_000 });
  return payment.id;
}

/** Screenshots of one part of the page at desktop and phone width; the phone page must not scroll sideways. */
async function shoot(section: Locator, name: string) {
  const page = section.page();
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [size, width] of [
    [DESKTOP, "desktop"],
    [PHONE, "phone"],
  ] as const) {
    await page.setViewportSize(size);
    // The part itself, not the whole page: the payment page is long.
    await section.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`) });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
  }
  await page.setViewportSize(DESKTOP);
}

describe("paying a refund from the payment page", () => {
  test("the form makes the refund, and Pay with wallet sends its exact transfer to the refund address", async () => {
    const paymentId = await confirmedPayment("12.00");
    // One refund still waiting for the payer's address, so the list shows both kinds.
    const waiting = await rig.stack.request(`/api/v1/payments/${paymentId}/refunds`, {
      body: { amount: "1.00", reason: "Missing filter" },
    });
    expect(waiting.status).toBe(201);

    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const merchantKey = await fundedPayerKey(rig.chain, usdc("50"));
    const merchantAddress = privateKeyToAccount(merchantKey).address;
    const context = await signedInContext(rig.browser, rig.stack.url, rig.user);
    // The merchant's wallet starts on Ethereum mainnet: the page must move it to the refund's chain.
    const wallet = await installTestWallet(context, { rpcUrl: rig.chain.rpcUrl, privateKey: merchantKey, chainId: 1 });
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/payments/${paymentId}`);
    expect(await page.getByLabel("Amount (USDC)").inputValue()).toBe("11.00");

    await page.getByLabel("Amount (USDC)").fill("4.56");
    await page.getByLabel("Reason (optional)").fill("Returned within 14 days");
    await page.getByLabel("Refund address (optional)").fill(payer.toLowerCase());
    await page.getByRole("button", { name: "Create refund" }).click();
    await page.waitForURL(/\?refund=re_[0-9A-Za-z]{24}#refund-re_/);
    const refundId = /refund=(re_[0-9A-Za-z]{24})/.exec(page.url())![1]!;
    const refund = (await rig.stack.request(`/api/v1/refunds/${refundId}`)).json;
    expect(refund).toMatchObject({ status: "awaiting_payment", amount: "4.56", refund_address: getAddress(payer) });

    const card = page.locator(`[data-refund-pay="${refundId}"]`);
    const button = card.getByRole("button", { name: "Pay with wallet" });
    await button.waitFor();
    expect(await card.locator("img.rf-qr").isVisible()).toBe(true);
    expect(await card.innerText()).toContain(getAddress(payer));
    expect(await card.innerText()).toContain(refund.payment_instructions.data);
    const section = page.locator("#pd-refunds");
    const waitingItem = section.locator(`#refund-${waiting.json.id}`);
    expect(await waitingItem.locator("[data-claim-url]").innerText()).toBe(waiting.json.claim_url);
    expect(await waitingItem.getByRole("button", { name: "Copy link" }).isVisible()).toBe(true);
    await shoot(section, "dashboard-refunds");
    await shoot(card, "dashboard-refund-card");

    // Declined in the wallet: said so, nothing sent, and the button works again.
    wallet.failNext("eth_sendTransaction", REJECTED);
    await button.click();
    const message = card.locator("[data-refund-msg]");
    await message.filter({ hasText: "You declined the request in your wallet" }).waitFor();
    expect(await button.isEnabled()).toBe(true);

    const before = await rig.stack.usdcBalance(merchantAddress);
    await button.click();
    await message.filter({ hasText: /^Sent, waiting for the chain: transaction 0x[0-9a-f]{64}\./ }).waitFor();
    // Sent once: neither paying again nor canceling is offered on this page.
    expect(await button.isVisible()).toBe(false);
    expect(await card.locator("img.rf-qr").isVisible()).toBe(false);
    expect(await page.locator(`#refund-${refundId}`).getByRole("button", { name: "Cancel refund" }).isVisible()).toBe(
      false,
    );
    const hash = /0x[0-9a-f]{64}/.exec(await message.innerText())![0];
    await waitFor(
      async () => (await rig.stack.usdcBalance(payer)) === usdc("4.56"),
      20_000,
      "the refund's transfer to land on chain",
    );
    expect(await rig.stack.usdcBalance(merchantAddress)).toBe(before - usdc("4.56"));
    const receipt = await rig.chain.publicClient.getTransactionReceipt({ hash: hash as `0x${string}` });
    expect(receipt.status).toBe("success");
    expect(getAddress(receipt.from)).toBe(merchantAddress);

    // What the page asked of the wallet: move to the settlement chain, then the exact calldata to USDC.
    expect(wallet.calls.map((c) => c.method)).toContain("wallet_switchEthereumChain");
    const sent = wallet.calls.filter((c) => c.method === "eth_sendTransaction").at(-1)!.params[0] as {
      to: string;
      data: string;
    };
    expect(getAddress(sent.to)).toBe(getAddress(rig.chain.usdc));
    expect(sent.data).toBe(
      encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(payer), usdc("4.56")] }),
    );
    await shoot(card, "dashboard-refund-card-sent");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("without a wallet, or without JavaScript, there is no button; the QR code and the transfer are there", async () => {
    const paymentId = await confirmedPayment("3.00");
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const created = await rig.stack.request(`/api/v1/payments/${paymentId}/refunds`, {
      body: { refund_address: payer },
    });
    expect(created.status).toBe(201);
    const signedIn = await signedInContext(rig.browser, rig.stack.url, rig.user);
    const context = await newContext(rig.browser, [rig.stack.url]);
    const cookies = await signedIn.cookies();
    await context.addCookies(cookies);
    await signedIn.close();
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/payments/${paymentId}`);
    const card = page.locator(`[data-refund-pay="${created.json.id}"]`);
    // Once the script has looked for a wallet (announced, or window.ethereum) and found none.
    await page.locator('[data-refund-pay][data-wallet-search="done"]').waitFor({ state: "attached" });
    expect(await card.getByRole("button", { name: "Pay with wallet" }).isVisible()).toBe(false);
    expect(await card.locator("img.rf-qr").isVisible()).toBe(true);
    expect(await card.innerText()).toContain("3.00 USDC");
    // The copy buttons are the script's, and it runs: the page's CSP let it.
    expect(await card.getByRole("button", { name: "Copy address" }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await context.close();

    // Without JavaScript: no button at all, and everything to pay it by hand.
    const plain = await newContext(rig.browser, [rig.stack.url], { javaScriptEnabled: false });
    await plain.addCookies(cookies);
    const noScript = await plain.newPage();
    await noScript.goto(`${rig.stack.url}/dashboard/payments/${paymentId}`);
    const plainCard = noScript.locator(`[data-refund-pay="${created.json.id}"]`);
    expect(await plainCard.getByRole("button").count()).toBe(0);
    expect(await plainCard.locator("img.rf-qr").isVisible()).toBe(true);
    for (const value of ["3.00 USDC", getAddress(payer), created.json.payment_instructions.data])
      expect(await plainCard.innerText()).toContain(value);
    await plain.close();
  });
});
