/**
 * One deposit address on every network, in the browser: the settlement anvil and the source
 * anvil with the CCTP rig (../support/crosschain.ts), the server with the source chain enabled, and
 * the test wallet, which knows both chains. The page lists both networks with the same address
 * and a QR each; the payer picks the source chain, the wallet switches to it and sends a plain
 * USDC transfer there.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { erc20Abi, getAddress, toHex } from "viem";
import { qrSvg } from "../../src/html/qr.ts";
import { ANVIL_KEY_1 } from "../support/anvil.ts";
import {
  collectProblems,
  installTestWallet,
  newContext,
  PHONE,
  screenshot,
  useBrowserRig,
} from "../support/browser.ts";
import { LOCAL_SOURCE, startCrossChainStack } from "../support/crosschain.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(90_000);

const rig = useBrowserRig({
  start: async (undo) => {
    const x = await startCrossChainStack();
    undo(() => x.stop());
    // A merchant page with the widget, on `localhost` while the checkout is on 127.0.0.1: another origin.
    const shop = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new Response(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script src="${x.stack.url}/checkout.js"></script></head>
<body><button data-stablegate-payment="${new URL(req.url).searchParams.get("payment")}">Pay with USDC</button></body></html>`,
          { headers: { "content-type": "text/html" } },
        ),
    });
    undo(() => shop.stop(true));
    return { x, shop };
  },
});

/** USDC sent to `address` on the source chain so far (the deposit address burns what it holds). */
async function sentOnSource(address: string): Promise<bigint> {
  const logs = await rig.x.source.publicClient.getContractEvents({
    address: rig.x.source.usdc,
    abi: erc20Abi,
    eventName: "Transfer",
    args: { to: getAddress(address) },
    fromBlock: 0n,
  });
  return logs.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n);
}

describe("paying on any listed network", () => {
  test("both networks with the same address; the wallet pays with a plain USDC transfer on the source chain", async () => {
    const p = await rig.x.stack.createPayment({ amount: "9.00", description: "Paid on the source chain" });
    const context = await newContext(rig.browser, [rig.x.stack.url]);
    const wallet = await installTestWallet(context, {
      rpcUrl: rig.x.chain.rpcUrl,
      privateKey: ANVIL_KEY_1,
      otherChains: { [LOCAL_SOURCE.chainId]: rig.x.local.source.rpcUrl },
    });
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.x.stack.url}/pay/${p.id}`);

    // The address once, then a card per network, each with its own QR.
    expect(await page.locator("#deposit-address").innerText()).toBe(p.deposit_address);
    expect(await page.locator("main").innerText()).toContain("The same address on every network below.");
    const cards = page.locator("li.network");
    expect(await cards.evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.chain))).toEqual([
      "custom",
      LOCAL_SOURCE.name,
    ]);
    expect(await cards.nth(0).innerText()).toContain("Chain 31337");
    expect(await cards.nth(1).innerText()).toContain("Local Source");
    expect(await cards.nth(1).innerText()).toContain(rig.x.source.usdc);
    for (const img of await page.locator("li.network img.qr").all()) {
      expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0)).toBe(true);
    }
    expect(await page.locator(".only-usdc").innerText()).toContain("Send only USDC");
    await page.locator("#wallet-options button").first().waitFor();
    // Paying without gas is the settlement chain's (its USDC, its relayer).
    await page.getByRole("button", { name: "Pay without gas on Chain 31337 with Test Wallet" }).waitFor();
    await screenshot(page, "anychain-desktop");
    await page.setViewportSize(PHONE);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(page, "anychain-phone");

    // Part of it sent from an exchange: a plain transfer on the source chain, listed with its chain,
    // and that chain's QR code drawn again for what is left.
    const first = await rig.x.sourceTransfer(p.deposit_address, 4_000_000n);
    const firstBlock = (await rig.x.source.publicClient.getTransactionReceipt({ hash: first })).blockNumber;
    await rig.x.sourceScanned(firstBlock + 1n);
    await page.locator("#status-label").filter({ hasText: "Partly paid" }).waitFor({ timeout: 20_000 });
    expect(await page.locator('.notice[data-state="underpaid"]').innerText()).toContain(
      "Send the remaining 5.00 USDC to the same address (on any of the networks below) to complete the payment.",
    );
    const transfers = page.locator("#transfer-list li");
    await transfers.filter({ hasText: "4.00 USDC on Local Source" }).waitFor();
    expect(await transfers.first().getAttribute("data-chain")).toBe(LOCAL_SOURCE.name);
    const sourceQr = page.locator(`img[data-qr-chain="${LOCAL_SOURCE.name}"]`);
    await waitFor(async () => (await sourceQr.getAttribute("src"))?.startsWith("/api/"), 10_000, "the QR redrawn");
    await waitFor(() => sourceQr.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0));
    const redrawn = await (await fetch(rig.x.stack.url + (await sourceQr.getAttribute("src")))).text();
    const rest = `ethereum:${rig.x.source.usdc}@${LOCAL_SOURCE.chainId}/transfer?address=${p.deposit_address}&uint256=5000000`;
    expect(redrawn).toBe(await qrSvg(rest));
    await screenshot(page, "anychain-underpaid-phone");

    // The rest from the browser wallet: the payer picks the source chain, the wallet switches
    // there and sends that chain's USDC, and the page reports it with /sync naming the chain.
    await page.getByLabel("Network to pay on").selectOption(LOCAL_SOURCE.name);
    expect(await page.getByRole("button", { name: /without gas/ }).count()).toBe(0);
    const syncs: Array<{ tx_hash?: string; chain?: string }> = [];
    page.on("request", (r) => void (r.url().endsWith("/sync") && syncs.push(JSON.parse(r.postData() ?? "{}"))));
    // Both anvils automine only transactions: blocks on top give confirmations on each chain.
    const miner = setInterval(() => void Promise.all([rig.x.mineSource(1), rig.x.chain.mine(1)]).catch(() => {}), 250);
    try {
      await page.getByRole("button", { name: "Pay the remaining 5.00 USDC on Local Source with Test Wallet" }).click();
      await waitFor(
        async () => (await sentOnSource(p.deposit_address)) === 9_000_000n,
        30_000,
        "9.00 USDC sent to the deposit address on the source chain",
      );
      await transfers.filter({ hasText: "5.00 USDC on Local Source" }).waitFor({ timeout: 20_000 });
      const view = () => rig.x.stack.request(`/api/public/payments/${p.id}`, { auth: false });
      await waitFor(async () => (await view()).json.amount_received === "9.00", 20_000, "both transfers credited");
      // Bridged to the settlement chain by the deposit address and settled there.
      await page
        .locator("#status-label")
        .filter({ hasText: /^Paid$/ })
        .waitFor({ timeout: 60_000 });
      expect((await view()).json.status).toBe("confirmed");
      for (const amount of ["4.00", "5.00"]) {
        await transfers
          .filter({ hasText: `${amount} USDC on Local Source · received, moved to Chain 31337` })
          .waitFor({ timeout: 20_000 });
      }
    } finally {
      clearInterval(miner);
    }
    expect(await transfers.evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.chain))).toEqual([
      LOCAL_SOURCE.name,
      LOCAL_SOURCE.name,
    ]);
    // The page told the server about the wallet's transaction, naming its chain.
    expect(syncs.length).toBeGreaterThan(0);
    for (const body of syncs) expect(body.chain).toBe(LOCAL_SOURCE.name);
    await screenshot(page, "anychain-paid-phone");
    const switches = wallet.calls
      .filter((c) => c.method === "wallet_switchEthereumChain")
      .map((c) => (c.params[0] as { chainId: string }).chainId);
    expect(switches).toEqual([toHex(LOCAL_SOURCE.chainId)]);
    const sent = wallet.calls.filter((c) => c.method === "eth_sendTransaction");
    expect(sent.length).toBe(1);
    expect(getAddress((sent[0]!.params[0] as { to: string }).to)).toBe(rig.x.source.usdc);
    expect(problems).toEqual([]);
    await context.close();

    // Without JavaScript the server lists the same transfers, each with its chain and bridge.
    const plain = await newContext(rig.browser, [rig.x.stack.url], { javaScriptEnabled: false });
    const still = await plain.newPage();
    await still.goto(`${rig.x.stack.url}/pay/${p.id}`);
    const listed = still.locator("#transfer-list li");
    expect(await listed.evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.chain))).toEqual([
      LOCAL_SOURCE.name,
      LOCAL_SOURCE.name,
    ]);
    expect(await listed.nth(0).innerText()).toMatch(/^4\.00 USDC on Local Source\s+· received, moved to Chain 31337/);
    expect(await listed.nth(1).innerText()).toMatch(/^5\.00 USDC on Local Source\s+· received, moved to Chain 31337/);
    await plain.close();
  });

  test("the widget shows the same networks, each with its QR, in its iframe", async () => {
    const p = await rig.x.stack.createPayment({ amount: "4.00" });
    const shopUrl = `http://localhost:${rig.shop.port}`;
    const context = await newContext(rig.browser, [rig.x.stack.url, shopUrl], { viewport: PHONE });
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${shopUrl}/?payment=${p.id}`);
    await page.getByRole("button", { name: "Pay with USDC" }).click();
    const frame = page.frameLocator('iframe[title="Stablegate checkout"]');
    await frame.locator("li.network").nth(1).waitFor();
    expect(await frame.locator("#deposit-address").innerText()).toBe(p.deposit_address);
    expect(
      await frame.locator("li.network").evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.chain)),
    ).toEqual(["custom", LOCAL_SOURCE.name]);
    for (const img of await frame.locator("li.network img.qr").all()) {
      expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0)).toBe(true);
    }
    expect(await frame.locator(".only-usdc").isVisible()).toBe(true);
    // No wallet in this browser: no network to pick for one, the QR codes name theirs.
    await frame.locator("#wallet-none").waitFor({ state: "visible" });
    expect(await frame.getByLabel("Network to pay on").isVisible()).toBe(false);
    await screenshot(page, "anychain-widget-phone");
    expect(problems).toEqual([]);
    await context.close();
  });
});
