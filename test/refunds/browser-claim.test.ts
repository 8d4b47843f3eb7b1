/**
 * The refund claim page in a real chromium, as a payer uses it: fills in "Refund address", ticks
 * the confirmation, presses "Claim refund" and reads the confirmation; a typo first, shown with the
 * reason and kept in the field. With and without JavaScript, at phone and desktop sizes, under the
 * page's CSP (screenshots refund-claim-*.png in test/artifacts/). The HTTP details:
 * claim-page.test.ts.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { getAddress } from "viem";
import { collectProblems, DESKTOP, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { markReceived } from "../support/refund-rows.ts";
import { api, startTestServer } from "../support/server.ts";

// Chromium on a shared 2-core machine.
setDefaultTimeout(60_000);

const rig = useBrowserRig({
  start: async (undo) => {
    const server = await startTestServer();
    undo(() => server.stop());
    return { server, merchant: api(server.url, (await server.createAccount("Bean & Leaf Roasters")).apiKey) };
  },
});

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

/** A refund of 12.50 USDC on a paid 25.00 USDC payment; answers its id and its claim page's URL on the test server. */
async function newRefund(): Promise<{ id: string; url: string }> {
  const payment = await rig.merchant("/api/v1/payments", {
    body: { amount: "25.00", description: "Espresso machine", invoice_number: "INV-2031-07" },
  });
  await markReceived(rig.server.env, payment.json.id, 25_000_000n);
  const refund = await rig.merchant(`/api/v1/payments/${payment.json.id}/refunds`, { body: { amount: "12.50" } });
  expect(refund.status).toBe(201);
  return { id: refund.json.id, url: rig.server.url + new URL(refund.json.claim_url).pathname };
}

const statusOf = async (id: string) => (await rig.merchant(`/api/v1/refunds/${id}`)).json.status as string;

/** Types `address` into the labelled field, ticks the confirmation and presses the button. */
async function claimWith(page: Page, address: string) {
  await page.getByLabel("Refund address").fill(address);
  await page.getByRole("checkbox", { name: /This is my own wallet on Chain 31337/ }).check();
  await page.getByRole("button", { name: "Claim refund" }).click();
}

describe("a payer claims a refund", () => {
  for (const [size, viewport] of [
    ["phone", PHONE],
    ["desktop", DESKTOP],
  ] as const) {
    test(`with JavaScript, on a ${size}: a typo is shown and kept, then the address is recorded`, async () => {
      const refund = await newRefund();
      const context = await newContext(rig.browser, [rig.server.url], { viewport });
      const page = await context.newPage();
      const problems = collectProblems(page);
      await page.goto(refund.url);
      expect(await page.locator("#merchant-name").innerText()).toBe("Bean & Leaf Roasters");
      expect(await page.locator("#amount").innerText()).toBe("12.50");
      expect(await page.locator("#address-warning").innerText()).toContain("Do not enter an exchange deposit address");
      await screenshot(page, `refund-claim-form-${size}`);

      const typo = PAYER.replace("8ba1", "8BA1");
      await claimWith(page, typo);
      const error = page.getByRole("alert");
      await error.waitFor();
      expect(await error.innerText()).toContain("fails its EIP-55 checksum");
      expect(await page.getByLabel("Refund address").inputValue()).toBe(typo);
      await screenshot(page, `refund-claim-error-${size}`);
      expect(await statusOf(refund.id)).toBe("awaiting_address");

      await claimWith(page, PAYER.toLowerCase());
      await page.locator("#refund-next").waitFor();
      expect(await page.locator("#refund-next").innerText()).toBe(
        `Bean & Leaf Roasters will send 12.50 USDC to ${getAddress(PAYER)} on Chain 31337.`,
      );
      expect(page.url()).toBe(refund.url);
      expect(await page.getByRole("button", { name: "Claim refund" }).count()).toBe(0);
      await screenshot(page, `refund-claim-done-${size}`);
      expect(await statusOf(refund.id)).toBe("awaiting_payment");
      // Reloading after the redirect sends nothing again.
      await page.reload();
      expect(await page.locator("#refund-status").innerText()).toBe("Address recorded");
      // Chromium reports the refused claim's 400 itself; nothing else, and no CSP violation.
      expect(problems).toEqual(["Failed to load resource: the server responded with a status of 400 (Bad Request)"]);
      await context.close();
    });
  }

  test("without JavaScript the form works the same", async () => {
    const refund = await newRefund();
    const context = await newContext(rig.browser, [rig.server.url], { javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(refund.url);
    await claimWith(page, PAYER);
    await page.locator("#refund-next").waitFor();
    expect(await page.locator("#refund-next").innerText()).toContain(`will send 12.50 USDC to ${getAddress(PAYER)}`);
    expect(await statusOf(refund.id)).toBe("awaiting_payment");
    await context.close();
  });

  test("the browser itself holds back a claim whose confirmation is not ticked", async () => {
    const refund = await newRefund();
    const context = await newContext(rig.browser, [rig.server.url], { javaScriptEnabled: false });
    const page = await context.newPage();
    const posts: string[] = [];
    page.on("request", (request) => request.method() === "POST" && posts.push(request.url()));
    await page.goto(refund.url);
    await page.getByLabel("Refund address").fill(PAYER);
    await page.getByRole("button", { name: "Claim refund" }).click();
    expect(await page.locator("#confirm").evaluate((box: HTMLInputElement) => box.validity.valueMissing)).toBe(true);
    expect(await statusOf(refund.id)).toBe("awaiting_address");
    // Ticked, it goes: one POST in all, so the first press sent nothing.
    await claimWith(page, PAYER);
    await page.locator("#refund-next").waitFor();
    expect(posts).toEqual([refund.url]);
    await context.close();
  });
});
