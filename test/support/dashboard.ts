/**
 * Dashboard users and signed-in clients for tests, over the real CLI command and real HTTP:
 *
 *   const user = await createDashboardUser(server.env, accountId);
 *   const client = await signIn(server.url, user);          // fetch with the session cookie
 *   const page = await client.get("/dashboard/payments");
 *   await client.post("/dashboard/logout", {});             // the CSRF token is added for you
 *
 *   const context = await signedInContext(browser, stack.url, user);   // a browser, signed in
 */
import type { Browser, BrowserContext } from "playwright-core";
import { runUserCommand } from "../../src/cli/users.ts";
import { newContext } from "./browser.ts";

export interface DashboardUser {
  id: string;
  accountId: string;
  email: string;
  password: string;
}

let users = 0;

/** A dashboard user of `accountId`, made by `stablegate user create` against the data dir in `env`. */
export async function createDashboardUser(
  env: Record<string, string>,
  accountId: string,
  email = `user${++users}-${crypto.randomUUID().slice(0, 8)}@shop.example`,
): Promise<DashboardUser> {
  const out = (await runUserCommand(["create", "--account", accountId, "--email", email], env)) as {
    user: { id: string; account_id: string; email: string };
    password: string;
  };
  return { id: out.user.id, accountId: out.user.account_id, email: out.user.email, password: out.password };
}

/** The cookies a response sets, as `name=value` pairs for a Cookie header. */
export function setCookies(res: Response): Map<string, string> {
  const jar = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return jar;
}

/** The token a page's forms carry (`<input type="hidden" name="csrf" value="...">`). */
export function csrfOf(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error("no CSRF field on the page");
  return token;
}

/** What the sign-in form answers, fetched as a browser would: GET the form, then POST it back. */
export async function postSignIn(
  url: string,
  form: { email: string; password: string; next?: string },
  /** Cookies the browser holds already, such as a session's (`stablegate_session=...`). */
  cookie?: string,
  /** How requests are sent: a client at another address, say (forwarding-proxy.ts's fetchFrom). */
  send: (url: string, init?: RequestInit) => Promise<Response> = fetch,
): Promise<Response> {
  const page = await send(`${url}/dashboard/login`);
  const cookies = [...[...setCookies(page)].map(([k, v]) => `${k}=${v}`), ...(cookie ? [cookie] : [])];
  const body = new URLSearchParams({ ...form, csrf: csrfOf(await page.text()) });
  if (form.next === undefined) body.delete("next");
  return send(`${url}/dashboard/login`, {
    method: "POST",
    body,
    headers: { cookie: cookies.join("; ") },
    redirect: "manual",
  });
}

export interface DashboardClient {
  /** `stablegate_session=...`, for a Cookie header. */
  cookie: string;
  /** The session's CSRF token, as its pages' forms carry it. */
  csrf: string;
  get(path: string): Promise<Response>;
  /** Posts `form` as an HTML form would, with the session's CSRF token unless `form` sets `csrf`. */
  post(path: string, form: Record<string, string>): Promise<Response>;
}

/** Signs `user` in through the sign-in form over real HTTP; redirects are not followed. */
export async function signIn(url: string, user: Pick<DashboardUser, "email" | "password">): Promise<DashboardClient> {
  const res = await postSignIn(url, { email: user.email, password: user.password });
  const token = setCookies(res).get("stablegate_session");
  if (res.status !== 303 || !token) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const cookie = `stablegate_session=${token}`;
  const home = await fetch(`${url}/dashboard`, { headers: { cookie } });
  const csrf = csrfOf(await home.text());
  return {
    cookie,
    csrf,
    get: (path) => fetch(url + path, { headers: { cookie }, redirect: "manual" }),
    post: (path, form) =>
      fetch(url + path, {
        method: "POST",
        body: new URLSearchParams({ csrf, ...form }),
        headers: { cookie },
        redirect: "manual",
      }),
  };
}

/** A browser context (see newContext) signed in as `user` through the sign-in page itself. */
export async function signedInContext(
  browser: Browser,
  url: string,
  user: Pick<DashboardUser, "email" | "password">,
): Promise<BrowserContext> {
  const context = await newContext(browser, [url]);
  try {
    const page = await context.newPage();
    await page.goto(`${url}/dashboard/login`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await Promise.all([page.waitForURL(`${url}/dashboard`), page.getByRole("button", { name: "Sign in" }).click()]);
    await page.close();
    return context;
  } catch (error) {
    await context.close();
    throw error;
  }
}
