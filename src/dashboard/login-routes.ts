import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { clientAddressOf } from "../http/client-address.ts";
import { AuthError, TooManyRequestsError } from "../lib/errors.ts";
import { constantTimeEqual } from "../lib/secrets.ts";
import { randomToken, SESSION_TOKEN } from "../users/service.ts";
import { type DashboardRoute, seeOther } from "./kit.ts";
import { signInPage } from "./login-page.ts";
import {
  type CookieOptions,
  clearLoginCsrfCookie,
  clearSessionCookie,
  LOGIN_CSRF_COOKIE,
  loginCsrfCookie,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
} from "./session-cookie.ts";
import { createSessionGate } from "./session-gate.ts";

const HOME = "/dashboard";
const SIGN_IN = "/dashboard/login";

/** GET and POST /dashboard/login: the only dashboard pages open without a session. */
export function signInRoutes(ctx: AppContext) {
  const cookies: CookieOptions = { secure: ctx.config.baseUrl.startsWith("https:") };
  const gate = createSessionGate(ctx.users);
  const clientOf = clientAddressOf(ctx.config.trustedProxies);

  return new Elysia()
    .get(SIGN_IN, async ({ request }) => {
      const next = safeNext(new URL(request.url).searchParams.get("next"));
      if (await gate.resolve(request)) return seeOther(next);
      const { csrf, setCookie } = loginCsrf(request, cookies);
      return withCookies(signInPage({ csrf, next }), setCookie);
    })
    .post(SIGN_IN, async ({ request, body, server }) => {
      const form = body instanceof URLSearchParams ? body : new URLSearchParams();
      const next = safeNext(form.get("next"));
      const email = (form.get("email") ?? "").trim();
      const password = form.get("password") ?? "";
      const cookieToken = readCookie(request, LOGIN_CSRF_COOKIE);
      const formToken = form.get("csrf");
      // Double-submit: only a page of this site can have read the cookie's token into the form.
      if (!cookieToken || !formToken || !constantTimeEqual(cookieToken, formToken)) {
        const fresh = loginCsrf(null, cookies);
        const error = "This sign-in form had expired. Please sign in again.";
        return withCookies(signInPage({ csrf: fresh.csrf, next, email, error, status: 403 }), fresh.setCookie);
      }
      const again = (error: string, status: number) => signInPage({ csrf: cookieToken, next, email, error, status });
      if (!email || !password) return again("Enter your email and password.", 400);
      try {
        const { token } = await ctx.users.signIn({ email, password, client: clientOf(request, server) });
        // A session this browser held already (another user's, say) ends: the cookie is replaced anyway.
        const previous = readCookie(request, SESSION_COOKIE);
        if (previous) await ctx.users.signOut(previous);
        return withCookies(seeOther(next), [sessionCookie(token, cookies), clearLoginCsrfCookie(cookies)]);
      } catch (error) {
        if (error instanceof TooManyRequestsError) {
          const page = again(error.message, 429);
          page.headers.set("retry-after", String(error.retryAfterSeconds));
          return page;
        }
        if (error instanceof AuthError) return again(error.message, 401);
        throw error;
      }
    });
}

/** POST /dashboard/logout, behind the gate like every signed-in action (so it needs the CSRF token). */
export function signOutRoutes(ctx: AppContext): DashboardRoute[] {
  const cookies: CookieOptions = { secure: ctx.config.baseUrl.startsWith("https:") };
  return [
    {
      method: "POST",
      path: "/dashboard/logout",
      async handle({ request }) {
        const token = readCookie(request, SESSION_COOKIE);
        if (token) await ctx.users.signOut(token);
        return withCookies(seeOther(SIGN_IN), [clearSessionCookie(cookies)]);
      },
    },
  ];
}

/**
 * Where to send the browser after sign-in: `next` when it is a dashboard path on this site,
 * else the home page. Anything a browser could read as another origin (`//evil`, `/\evil`, a
 * scheme, the whitespace and control characters browsers strip) falls back to home: the
 * sign-in page is no open redirect.
 */
export function safeNext(next: string | null): string {
  if (!next || next.length > 2000 || !next.startsWith(HOME)) return HOME;
  // Printable ASCII without the backslash: what signInFirst sends is percent-encoded already.
  if (!/^[!-[\]-~]+$/.test(next)) return HOME;
  const base = "http://stablegate.invalid";
  const url = new URL(next, base);
  if (url.origin !== base || !(url.pathname === HOME || url.pathname.startsWith(`${HOME}/`))) return HOME;
  // Back to the sign-in page after signing in would only bounce on to home.
  if (url.pathname === SIGN_IN) return HOME;
  return url.pathname + url.search;
}

/** The sign-in form's token: the one the browser holds already, else a new one set now. */
function loginCsrf(request: Request | null, cookies: CookieOptions): { csrf: string; setCookie: string[] } {
  const held = request ? readCookie(request, LOGIN_CSRF_COOKIE) : null;
  if (held && SESSION_TOKEN.test(held)) return { csrf: held, setCookie: [] };
  const csrf = randomToken();
  return { csrf, setCookie: [loginCsrfCookie(csrf, cookies)] };
}

function withCookies(response: Response, setCookies: string[]): Response {
  for (const value of setCookies) response.headers.append("set-cookie", value);
  return response;
}
