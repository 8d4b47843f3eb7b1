/**
 * Signing in to the dashboard over real HTTP against the running server: the form, the cookie,
 * the way back to the page asked for (and never to another site), sign-out, and the sign-in
 * form's own CSRF check.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDashboardUser, type DashboardUser, postSignIn, setCookies, signIn } from "../support/dashboard.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let user: DashboardUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await createDashboardUser(server.env, (await server.createAccount("Sign-in Shop")).accountId);
});
afterAll(() => server.stop());

describe("the sign-in page", () => {
  test("has fields labelled Email and Password and a Sign in button, under the dashboard's CSP", async () => {
    const res = await fetch(`${server.url}/dashboard/login`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const page = await res.text();
    expect(page).toMatch(/<label for="email">Email<\/label>\s*<input id="email" name="email" type="email"/);
    expect(page).toMatch(
      /<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/,
    );
    expect(page).toContain('<button class="btn" type="submit">Sign in</button>');
  });

  test("a signed-in page without a session is a 303 to the sign-in page, with the page to come back to", async () => {
    const res = await fetch(`${server.url}/dashboard?from=test`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/login?next=${encodeURIComponent("/dashboard?from=test")}`);
  });
});

describe("signing in", () => {
  test("sets an HttpOnly, SameSite=Lax, Secure (base URL is https) session cookie and lands on the home page", async () => {
    const res = await postSignIn(server.url, { email: user.email, password: user.password });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("stablegate_session="))!;
    expect(cookie).toMatch(
      /^stablegate_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Lax; Max-Age=604800; Secure$/,
    );
    const home = await fetch(`${server.url}/dashboard`, {
      headers: { cookie: `stablegate_session=${setCookies(res).get("stablegate_session")}` },
    });
    expect(home.status).toBe(200);
    expect(await home.text()).toContain(user.email);
  });

  test("the email is matched whatever its case", async () => {
    const res = await postSignIn(server.url, { email: user.email.toUpperCase(), password: user.password });
    expect(res.status).toBe(303);
  });

  test("goes back to the dashboard page asked for before signing in", async () => {
    const next = "/dashboard/payments?status=underpaid";
    const res = await postSignIn(server.url, { email: user.email, password: user.password, next });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(next);
  });

  test("never sends the browser to another site (open redirect), nor back to the sign-in page", async () => {
    for (const next of [
      "//evil.example/dashboard",
      "/\\evil.example",
      "https://evil.example/dashboard",
      "/dashboard/../\\evil.example",
      "/dashboard\t//evil.example",
      "javascript:alert(1)",
      "/dashboard@evil.example",
      "/elsewhere",
      "/dashboard/login?next=/dashboard/login",
    ]) {
      const res = await postSignIn(server.url, { email: user.email, password: user.password, next });
      expect({ next, status: res.status, location: res.headers.get("location") }).toEqual({
        next,
        status: 303,
        location: "/dashboard",
      });
    }
  });

  test("signing in again from a browser with a session ends that session", async () => {
    const first = await signIn(server.url, user);
    const res = await postSignIn(server.url, user, first.cookie);
    expect(res.status).toBe(303);
    expect((await first.get("/dashboard")).status).toBe(303);
  });

  test("a wrong password is 401, the form again with a message, and no session", async () => {
    const res = await postSignIn(server.url, { email: user.email, password: "not the password" });
    expect(res.status).toBe(401);
    expect(setCookies(res).has("stablegate_session")).toBe(false);
    const page = await res.text();
    expect(page).toContain("That email and password do not match a dashboard user.");
    expect(page).toContain(`value="${user.email}"`);
  });

  test("a sign-in form posted without the token of its cookie is 403 and signs nobody in (login CSRF)", async () => {
    const forged = await fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      body: new URLSearchParams({ email: user.email, password: user.password, csrf: "forged" }),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    expect(setCookies(forged).has("stablegate_session")).toBe(false);
  });
});

describe("signing out", () => {
  test("ends the session: the old cookie no longer opens a page", async () => {
    const client = await signIn(server.url, user);
    const res = await client.post("/dashboard/logout", {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/login");
    expect(
      res.headers.getSetCookie().some((c) => c.startsWith("stablegate_session=;") && c.includes("Max-Age=0")),
    ).toBe(true);
    expect((await client.get("/dashboard")).status).toBe(303);
  });

  test("without the session's CSRF token is 403 and the session lives on", async () => {
    const client = await signIn(server.url, user);
    const refused = await client.post("/dashboard/logout", { csrf: "" });
    expect(refused.status).toBe(403);
    // A dashboard page saying what to do, under the dashboard's CSP.
    expect(refused.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await refused.text()).toContain("<h1>This form has expired</h1>");
    expect((await client.post("/dashboard/logout", { csrf: `${client.csrf.slice(1)}x` })).status).toBe(403);
    expect((await client.get("/dashboard")).status).toBe(200);
  });
});
