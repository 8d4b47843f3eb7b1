/**
 * Signing in and out of the dashboard in a real chromium against the shipped binary on a real
 * anvil, as a merchant does it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import {
  collectProblems,
  newContext,
  PHONE,
  screenshot,
  startCheckoutRig,
  stopCheckoutRig,
} from "../support/browser.ts";
import { createDashboardUser, type DashboardUser, signedInContext } from "../support/dashboard.ts";
import type { Stack } from "../support/stack.ts";
import type { TestChain } from "../support/test-chain.ts";

// A browser, a chain and the built binary take longer than bun's 5 s default.
setDefaultTimeout(60_000);

let chain: TestChain;
let stack: Stack;
let browser: Browser;
let user: DashboardUser;

beforeAll(async () => {
  ({ chain, stack, browser } = await startCheckoutRig());
  user = await createDashboardUser(stack.env, stack.accountId);
});
afterAll(() => stopCheckoutRig({ chain, stack, browser }));

describe("dashboard sign-in in a browser", () => {
  test("signs in through the form, lands on the page asked for, and signs out", async () => {
    const context = await newContext(browser, [stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${stack.url}/dashboard?from=bookmark`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${stack.url}/dashboard?from=bookmark`);
    expect(await page.locator("main").innerText()).toContain(user.email);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${stack.url}/dashboard/login`);
    await page.goto(`${stack.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("signedInContext gives a context that is signed in already", async () => {
    const context = await signedInContext(browser, stack.url, user);
    const page = await context.newPage();
    await page.goto(`${stack.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await context.close();
  });

  test("the sign-in page at desktop and phone width", async () => {
    const context = await newContext(browser, [stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${stack.url}/dashboard/login`);
    await screenshot(page, "dashboard-login-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-login-phone");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
    expect(problems).toEqual([]);
    await context.close();
  });
});
