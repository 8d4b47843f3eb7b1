/**
 * A refund as people make it, end to end on a real anvil with the shipped binary and a real
 * chromium: a payment is paid and confirmed; the merchant refunds part of it by API; the payer
 * opens the claim link and names their address; the merchant pays the refund from the dashboard
 * with an injected wallet; the server sees the transfer on chain and the refund succeeds with its
 * tx hash, with every webhook delivered. The server is killed with SIGKILL between every step and
 * started again on the same data directory: nothing changes but time.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  collectProblems,
  fundedPayerKey,
  installTestWallet,
  newContext,
  PHONE,
  screenshot,
  useBrowserRig,
} from "../support/browser.ts";
import { signedInContext } from "../support/dashboard.ts";
import { startDashboardPartsWithReceiver } from "../support/dashboard-rig.ts";
import { usdc } from "../support/test-chain.ts";

// A browser, a chain, the built binary, four restarts and a refund flow take longer than bun's 5 s default.
setDefaultTimeout(180_000);

const rig = useBrowserRig({ start: startDashboardPartsWithReceiver });

/** kill -9, then the same binary again on the same data directory. */
async function crashAndRestart() {
  await rig.stack.crash();
  await rig.stack.restart();
}

describe("a refund, as the merchant and the payer make it", () => {
  test("refund part by API, claim in the browser, pay from the dashboard's wallet button; kill -9 between every step", async () => {
    const { stack, receiver } = rig;
    const endpoint = await stack.request("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
    expect(endpoint.status).toBe(201);

    // Paid and confirmed.
    const payment = await stack.createPayment({ amount: "12.00", description: "Ceramic pour-over set" });
    await stack.pay(payment.deposit_address, usdc("12"));
    await stack.waitForStatus(payment.id, "confirmed", { mine: true });

    // The merchant refunds part of it.
    const created = await stack.request(`/api/v1/payments/${payment.id}/refunds`, {
      body: { amount: "4.50", reason: "one cup arrived broken" },
    });
    expect(created.status).toBe(201);
    const refundId: string = created.json.id;
    const claimUrl = new URL(created.json.claim_url as string);
    await crashAndRestart();
    expect((await stack.request(`/api/v1/refunds/${refundId}`)).json.status).toBe("awaiting_address");

    // The payer claims it in a browser, with an address of their own.
    const payer = getAddress(privateKeyToAccount(generatePrivateKey()).address);
    const payerContext = await newContext(rig.browser, [stack.url]);
    const claimPage = await payerContext.newPage();
    const payerProblems = collectProblems(claimPage);
    await claimPage.goto(`${stack.url}${claimUrl.pathname}`);
    await claimPage.getByLabel("Refund address").fill(payer.toLowerCase());
    await claimPage.getByRole("checkbox").check();
    await screenshot(claimPage, "refund-e2e-claim-desktop");
    await claimPage.getByRole("button", { name: "Claim refund" }).click();
    await claimPage.getByText(payer).first().waitFor();
    expect(payerProblems).toEqual([]);
    await payerContext.close();
    const payable = (await stack.request(`/api/v1/refunds/${refundId}`)).json;
    expect(payable).toMatchObject({ status: "awaiting_payment", refund_address: payer });
    await crashAndRestart();

    // The merchant pays it from the dashboard with their wallet.
    const merchantKey = await fundedPayerKey(rig.chain, usdc("100"));
    const merchant = await signedInContext(rig.browser, stack.url, rig.user);
    const wallet = await installTestWallet(merchant, { rpcUrl: rig.chain.rpcUrl, privateKey: merchantKey });
    const paying = await merchant.newPage();
    const problems = collectProblems(paying);
    await paying.goto(`${stack.url}/dashboard/payments/${payment.id}`);
    await paying.getByRole("button", { name: /Pay with wallet/ }).click();
    const sent = await stack.waitFor(
      () => wallet.calls.find((c) => c.method === "eth_sendTransaction"),
      30_000,
      "the wallet asked to send the refund",
    );
    const tx = sent.params[0] as { to: string; data: string };
    expect(tx.to.toLowerCase()).toBe(payable.payment_instructions.token.toLowerCase());
    expect(tx.data).toBe(payable.payment_instructions.data);
    // Closed before the kill: a page left open would keep asking the server that is gone.
    expect(problems).toEqual([]);
    await merchant.close();
    await crashAndRestart();

    // The chain has it: the refund succeeds with the tx hash, once.
    const succeeded = await stack.mineUntil(
      async () => {
        const refund = (await stack.request(`/api/v1/refunds/${refundId}`)).json;
        return refund.status === "succeeded" && refund;
      },
      60_000,
      "the refund succeeded",
    );
    expect(succeeded.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await stack.usdcBalance(payer)).toBe(usdc("4.5"));
    const after = await stack.getPayment(payment.id);
    expect(after).toMatchObject({ status: "confirmed", amount_refunded: "4.50" });
    await crashAndRestart();
    expect((await stack.request(`/api/v1/refunds/${refundId}`)).json).toMatchObject({
      status: "succeeded",
      tx_hash: succeeded.tx_hash,
    });
    expect((await stack.getPayment(payment.id)).amount_refunded).toBe("4.50");

    // The dashboard shows it paid; every refund webhook arrived, each once.
    // The server listens on another port since its restarts, which the first context may not reach.
    const later = await signedInContext(rig.browser, stack.url, rig.user);
    const page = await later.newPage();
    const problemsLater = collectProblems(page);
    await page.goto(`${stack.url}/dashboard/payments/${payment.id}`);
    // Shown short (0x5c50…2060), the whole hash in its title.
    const item = page.locator(`#refund-${refundId}`);
    await item.locator(`[title="${succeeded.tx_hash}"]`).waitFor();
    expect((await item.locator("[data-refund-status]").innerText()).toLowerCase()).toContain("succeeded");
    await screenshot(page, "refund-e2e-dashboard-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "refund-e2e-dashboard-phone");
    expect(problemsLater).toEqual([]);
    await later.close();
    const refundHooks = await stack.waitFor(
      () => {
        const types = receiver.hits
          .map((hit) => JSON.parse(hit.body) as { type: string; data: { refund?: { id: string } } })
          .filter((event) => event.data.refund?.id === refundId)
          .map((event) => event.type);
        return types.includes("refund.succeeded") && types;
      },
      30_000,
      "the refund.succeeded webhook",
    );
    expect([...new Set(refundHooks)].sort()).toEqual(["refund.created", "refund.payable", "refund.succeeded"]);
    expect(
      await stack.sql("SELECT type FROM events WHERE type = 'refund.succeeded' AND payload LIKE ?", `%${refundId}%`),
    ).toHaveLength(1);
  });
});
