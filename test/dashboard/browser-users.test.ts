/**
 * Signing in and out of the dashboard in a real chromium against the shipped binary on a real
 * anvil, as a merchant does it: the way back to the page asked for, a wrong password, the
 * throttle, and a form posted from another origin.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Page } from "playwright-core";
import { SIGN_IN_WINDOW_MS } from "../../src/users/service.ts";
import { collectProblems, newContext, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { createDashboardUser, signedInContext } from "../support/dashboard.ts";
import { startDashboardParts } from "../support/dashboard-rig.ts";
import { startTestServer } from "../support/server.ts";

// A browser, a chain and the built binary take longer than bun's 5 s default.
setDefaultTimeout(60_000);

const rig = useBrowserRig({ start: startDashboardParts });

/** Fills in and submits the sign-in form; resolves with the status of the page it lands on. */
async function submitSignIn(page: Page, email: string, password: string): Promise<number> {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.getByRole("button", { name: "Sign in" }).click(),
  ]);
  await page.waitForLoadState();
  return response.status();
}

describe("dashboard sign-in in a browser", () => {
  test("signs in through the form, lands on the page asked for, and signs out, all without JavaScript", async () => {
    const context = await newContext(rig.browser, [rig.stack.url], { javaScriptEnabled: false });
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard?from=bookmark`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await page.getByLabel("Email").fill(rig.user.email);
    await page.getByLabel("Password").fill(rig.user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${rig.stack.url}/dashboard?from=bookmark`);
    expect(await page.locator("header.bar").innerText()).toContain(rig.user.email); // the top bar of every page

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${rig.stack.url}/dashboard/login`);
    await page.goto(`${rig.stack.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("signedInContext gives a context that is signed in already", async () => {
    const context = await signedInContext(rig.browser, rig.stack.url, rig.user);
    const page = await context.newPage();
    await page.goto(`${rig.stack.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await context.close();
  });

  test("the sign-in page at desktop and phone width", async () => {
    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/login`);
    await screenshot(page, "dashboard-login-desktop");
    await page.setViewportSize(PHONE);
    await screenshot(page, "dashboard-login-phone");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("a wrong password shows the form again with a message and the email kept", async () => {
    const context = await newContext(rig.browser, [rig.stack.url]);
    const page = await context.newPage();
    const problems = collectProblems(page);
    await page.goto(`${rig.stack.url}/dashboard/login`);
    expect(await submitSignIn(page, rig.user.email, "not the password")).toBe(401);
    expect(await page.getByRole("alert").innerText()).toBe("That email and password do not match a dashboard user.");
    expect(await page.getByLabel("Email").inputValue()).toBe(rig.user.email);
    await screenshot(page, "dashboard-login-refused");
    // The browser logs the 401 itself; the page adds nothing to it.
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
    // Then the right one still works.
    expect(await submitSignIn(page, rig.user.email, rig.user.password)).toBe(303);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await context.close();
  });

  test("past 5 failed sign-ins for an email, the next is refused with a page that says how long to wait", async () => {
    // A server of its own, on a stopped clock: the throttle counts per client, and every test here is 127.0.0.1.
    const clock = { at: Date.now(), now: () => clock.at };
    const server = await startTestServer({ baseUrl: "http://127.0.0.1" }, { clock });
    const context = await newContext(rig.browser, [server.url]);
    try {
      const own = await createDashboardUser(server.env, (await server.createAccount("Throttled Shop")).accountId);
      const page = await context.newPage();
      await page.goto(`${server.url}/dashboard/login`);
      for (let i = 0; i < 5; i++) expect(await submitSignIn(page, own.email, `wrong password ${i}`)).toBe(401);
      expect(await submitSignIn(page, own.email, own.password)).toBe(429);
      expect(await page.getByRole("alert").innerText()).toBe(
        "Too many failed sign-ins for this email. Try again in 1 second.",
      );
      await screenshot(page, "dashboard-login-throttled");
      clock.at += SIGN_IN_WINDOW_MS;
      expect(await submitSignIn(page, own.email, own.password)).toBe(303);
      expect(new URL(page.url()).pathname).toBe("/dashboard");
    } finally {
      await context.close();
      await server.stop();
    }
  });

  test("a sign-out form posted from another origin, without the session's token, is refused", async () => {
    // Another port is another origin but the same site, so SameSite=Lax sends the cookie: the token must refuse it.
    const forged = (csrf: string) => `<!doctype html><form method="post" action="${rig.stack.url}/dashboard/logout">
<input type="hidden" name="csrf" value="${csrf}"><button>Win a prize</button></form>`;
    const evil = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) =>
        new Response(forged(new URL(req.url).searchParams.get("csrf") ?? ""), {
          headers: { "content-type": "text/html" },
        }),
    });
    const context = await signedInContext(rig.browser, rig.stack.url, rig.user);
    try {
      await context.route(`${evil.url.origin}/**`, (route) => route.continue());
      const page = await context.newPage();
      for (const csrf of ["", "guessed-token"]) {
        await page.goto(`${evil.url.origin}/?csrf=${csrf}`);
        const [response] = await Promise.all([
          page.waitForResponse(`${rig.stack.url}/dashboard/logout`),
          page.getByRole("button", { name: "Win a prize" }).click(),
        ]);
        expect(response.status()).toBe(403);
      }
      await page.goto(`${rig.stack.url}/dashboard`);
      expect(new URL(page.url()).pathname).toBe("/dashboard");
    } finally {
      await context.close();
      await evil.stop(true);
    }
  });
});
