/**
 * The payment page's "Recover a token sent by mistake" form, signed in, against the server on two
 * anvils: over HTTP (a request answered with a 303 to the page, which lists the recovery as it
 * goes; a refusal answered on the page with its reason, what was typed kept, nothing stored) and
 * in a real chromium at desktop and phone width, screenshots in test/artifacts/.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { getAddress, parseEther } from "viem";
import { collectProblems, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { mined } from "../support/chain.ts";
import { LOCAL_SOURCE, startCrossChainStack } from "../support/crosschain.ts";
import { createDashboardUser, signedInContext, signIn } from "../support/dashboard.ts";
import { sourceFactoryDeployed, strayTokenOnSource } from "../support/stray-tokens.ts";
import { waitFor } from "../support/wait.ts";

setDefaultTimeout(90_000);

const rig = useBrowserRig({
  start: async (undo) => {
    const x = await startCrossChainStack();
    undo(() => x.stop());
    const user = await createDashboardUser(x.stack.env, x.stack.accountId);
    await sourceFactoryDeployed(x);
    return { x, stack: x.stack, user };
  },
});

const recoveriesOf = (paymentId: string) =>
  rig.stack.sql<{ id: string; state: string }>("SELECT id, state FROM recoveries WHERE payment_id = ?", paymentId);

/** Mines on both chains until the payment's only recovery has succeeded. */
function waitSucceeded(paymentId: string) {
  return waitFor(
    async () => {
      const rows = await recoveriesOf(paymentId);
      if (rows.length === 1 && rows[0]!.state === "succeeded") return rows[0]!;
      await Promise.all([rig.stack.chain.mine(1), rig.x.local.source.rpc("evm_mine")]);
      return null;
    },
    30_000,
    "the recovery to succeed",
    60,
  );
}

describe("the recovery form on the payment page", () => {
  test("a request is a 303 back to the page, which then lists the recovery; a refusal says why and stores nothing", async () => {
    const client = await signIn(rig.stack.url, rig.user);
    const payment = await rig.stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await strayTokenOnSource(rig.x, deposit, 1_500_000_000_000_000_000n);

    const page = await (await client.get(`/dashboard/payments/${payment.id}`)).text();
    expect(page).toContain("Recover a token sent by mistake");
    expect(page).toContain(`<option value="${rig.stack.config.chain.name}" selected>`);
    expect(page).toContain(`<option value="${LOCAL_SOURCE.name}">`);

    const refused = await client.post(`/dashboard/payments/${payment.id}/recover`, {
      chain: rig.stack.config.chain.name,
      token: rig.stack.chain.usdc,
    });
    expect(refused.status).toBe(400);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain(`Token ${rig.stack.chain.usdc} is the USDC this payment settles in`);
    expect(refusedPage).toContain(`value="${rig.stack.chain.usdc}"`);
    expect(await recoveriesOf(payment.id)).toEqual([]);

    const malformed = await client.post(`/dashboard/payments/${payment.id}/recover`, {
      chain: LOCAL_SOURCE.name,
      token: "0xnot-an-address",
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain(
      "Token must be an ERC-20 contract address (0x and 40 hex digits), or empty for the native coin.",
    );
    expect(await recoveriesOf(payment.id)).toEqual([]);

    const asked = await client.post(`/dashboard/payments/${payment.id}/recover`, { chain: LOCAL_SOURCE.name, token });
    expect(asked.status).toBe(303);
    const [row] = await recoveriesOf(payment.id);
    expect(asked.headers.get("location")).toBe(`/dashboard/payments/${payment.id}?recovery=${row!.id}#pd-recover`);
    await waitSucceeded(payment.id);

    const after = await (await client.get(`/dashboard/payments/${payment.id}?recovery=${row!.id}`)).text();
    // The notice speaks of the stored recovery the address names, as it stands now.
    expect(after).toContain(
      `Recovery ${row!.id} requested: token ${token} on ${LOCAL_SOURCE.name} went back to your payout address.`,
    );
    const card = after.slice(after.indexOf('id="pd-recover"'));
    expect(card).toContain(`<td>${LOCAL_SOURCE.name}</td>`);
    expect(card).toContain('<span class="badge confirmed">succeeded</span>');
    expect(card).toContain('<td class="num">1.5</td>');

    // The same token again within 24 hours: refused on the page with the limit's reason, as the API's 429.
    const again = await client.post(`/dashboard/payments/${payment.id}/recover`, { chain: LOCAL_SOURCE.name, token });
    expect(again.status).toBe(429);
    expect(await again.text()).toContain(
      `A recovery of token ${token} on ${LOCAL_SOURCE.name} was asked for this payment`,
    );
    expect(await recoveriesOf(payment.id)).toHaveLength(1);
  });

  test("in a browser, at desktop and phone width", async () => {
    const payment = await rig.stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    await mined(
      rig.stack.chain.publicClient,
      rig.stack.chain.payer.sendTransaction({ to: deposit, value: parseEther("0.25") }),
    );
    const context = await signedInContext(rig.browser, rig.stack.url, rig.user);
    const page = await context.newPage();
    const problems = collectProblems(page);

    await page.goto(`${rig.stack.url}/dashboard/payments/${payment.id}`);
    await page.getByLabel("Chain").selectOption(rig.stack.config.chain.name);
    await Promise.all([page.waitForURL(/recovery=rcv_/), page.getByRole("button", { name: "Recover" }).click()]);
    expect(await page.getByRole("status").first().innerText()).toMatch(/^Recovery rcv_\w+ requested/);
    await waitSucceeded(payment.id);
    await page.reload();
    await page.locator("#pd-recover").scrollIntoViewIfNeeded();
    expect(await page.locator("#pd-recover").innerText()).toContain("succeeded");
    await screenshot(page, "dashboard-recover-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-recover-phone");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
    await context.close();
  });
});
