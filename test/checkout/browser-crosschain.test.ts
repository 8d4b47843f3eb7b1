/**
 * Paying from another chain in the browser, end to end and offline: the settlement anvil, a
 * source anvil with the CCTP rig on both, the local attestation service (../support/crosschain.ts)
 * and the test wallet, which knows both chains. The page quotes, switches the wallet to the
 * source chain, sends approve and depositForBurn, records the burn, shows its state, and ends
 * confirmed once the mint on the settlement chain is credited.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { toHex } from "viem";
import { ANVIL_KEY_1 } from "../support/anvil.ts";
import { collectProblems, installTestWallet, newContext, screenshot, useBrowserRig } from "../support/browser.ts";
import { LOCAL_SOURCE, startCrossChainStack } from "../support/crosschain.ts";

setDefaultTimeout(90_000);

const rig = useBrowserRig({
  start: async (undo) => {
    // A slower attestation leaves time to see the burn's state on the page.
    const x = await startCrossChainStack({ attestationDelayMs: 2_500 });
    undo(() => x.stop());
    return { x };
  },
});

describe("cross-chain funding in the checkout", () => {
  test("quote, approve and burn from the wallet on the source chain, burn state shown, then confirmed", async () => {
    const p = await rig.x.stack.createPayment({ amount: "9.00", description: "Paid from another chain" });
    const context = await newContext(rig.browser, [rig.x.stack.url]);
    // The payer (anvil key 1) holds test USDC on the source chain.
    const wallet = await installTestWallet(context, {
      rpcUrl: rig.x.chain.rpcUrl,
      privateKey: ANVIL_KEY_1,
      otherChains: { [LOCAL_SOURCE.chainId]: rig.x.local.source.rpcUrl },
    });
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.x.stack.url}/pay/${p.id}`);

    await page.locator("#crosschain").waitFor();
    expect(await page.getByLabel("Source network").inputValue()).toBe(LOCAL_SOURCE.name);
    await page.getByRole("button", { name: "Get quote" }).click();
    const fast = page.getByRole("radio", { name: /^Fast: send [\d.]+ USDC on Local Source/ });
    await fast.waitFor();
    expect(await fast.isChecked()).toBe(true);
    await screenshot(page, "crosschain-quote-desktop");

    // The settlement anvil automines: mine along so the mint gets its confirmations.
    const miner = setInterval(() => void rig.x.chain.mine(1).catch(() => {}), 250);
    try {
      await page.getByRole("button", { name: "Pay from Local Source with wallet" }).click();
      await page.locator("#cc-msg").filter({ hasText: "Transfer started" }).waitFor({ timeout: 30_000 });
      await page.locator("#cc-transfers").filter({ hasText: "from Local Source" }).waitFor({ timeout: 15_000 });
      await screenshot(page, "crosschain-burn-desktop");
      await page.locator("#status-label").filter({ hasText: "Paid" }).waitFor({ timeout: 45_000 });
    } finally {
      clearInterval(miner);
    }

    const switches = wallet.calls
      .filter((c) => c.method === "wallet_switchEthereumChain")
      .map((c) => (c.params[0] as { chainId: string }).chainId);
    expect(switches).toContain(toHex(LOCAL_SOURCE.chainId));
    expect(wallet.calls.filter((c) => c.method === "eth_sendTransaction").length).toBe(2); // approve, burn
    // The mint credits the payment through the watcher; the burn is marked redeemed at the
    // redeemer's next look at its receiveMessage (once a second), which may come after "Paid".
    await rig.x.waitBurn(p.id, "redeemed");
    expect(problems).toEqual([]);
    await context.close();
  });
});
