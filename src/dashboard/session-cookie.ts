/**
 * The dashboard's two cookies: the session (its token, never stored on the server) and, before
 * sign-in, the token the sign-in form echoes back (double-submit, so another site cannot sign a
 * browser into an account of the attacker's choosing).
 */
export const SESSION_COOKIE = "stablegate_session";
export const LOGIN_CSRF_COOKIE = "stablegate_login";

/** A session cookie lives as long as the session can (SESSION_MAX_MS); the server ends it sooner when idle. */
const SESSION_MAX_AGE_S = 7 * 24 * 60 * 60;

export interface CookieOptions {
  /** STABLEGATE_BASE_URL is https: the browser must never send the cookie over plain http. */
  secure: boolean;
}

/** The value of cookie `name` in a request's Cookie header, if present. */
export function readCookie(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export function sessionCookie(token: string, opts: CookieOptions): string {
  return cookie(SESSION_COOKIE, token, "/dashboard", SESSION_MAX_AGE_S, opts);
}

export function clearSessionCookie(opts: CookieOptions): string {
  return cookie(SESSION_COOKIE, "", "/dashboard", 0, opts);
}

/** Kept for the browser session; only the sign-in form's path ever receives it. */
export function loginCsrfCookie(token: string, opts: CookieOptions): string {
  return cookie(LOGIN_CSRF_COOKIE, token, "/dashboard/login", null, opts);
}

export function clearLoginCsrfCookie(opts: CookieOptions): string {
  return cookie(LOGIN_CSRF_COOKIE, "", "/dashboard/login", 0, opts);
}

function cookie(name: string, value: string, path: string, maxAge: number | null, opts: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${path}`, "HttpOnly", "SameSite=Lax"];
  if (maxAge !== null) parts.push(`Max-Age=${maxAge}`);
  if (opts.secure) parts.push("Secure");
  return parts.join("; ");
}
