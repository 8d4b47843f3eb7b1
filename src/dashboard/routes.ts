import { Elysia } from "elysia";
import { assetResponse } from "../html/assets.ts";
import { html } from "../html/template.ts";
import { DASHBOARD_ASSETS } from "./assets.ts";
import type { DashboardRoute, DashboardSession } from "./kit.ts";
import { publicDashboardPage } from "./layout.ts";

/** How routes.ts learns who is signed in and whether a form's CSRF token is theirs. */
export interface SessionGate {
  /** The session the request's cookie names, if it is live; extends its idle expiry. */
  resolve(request: Request): Promise<DashboardSession | null>;
  /** Constant-time comparison of a submitted token with the session's. */
  csrfValid(session: DashboardSession, token: string | null): boolean;
}

/**
 * Registers the signed-in dashboard routes behind the gate: without a session a GET is sent to
 * the sign-in page (303, then back to where it was going), a POST too; a POST whose CSRF token
 * is missing or wrong is 403 and its handler never runs.
 */
export function dashboardRoutes(gate: SessionGate, routes: DashboardRoute[]) {
  const app = new Elysia();
  for (const asset of Object.values(DASHBOARD_ASSETS))
    app.get(asset.path, ({ request }) => assetResponse(asset, request));
  for (const route of routes) {
    const handler = async ({
      request,
      params,
      body,
    }: {
      request: Request;
      params: Record<string, string>;
      body: unknown;
    }) => {
      const session = await gate.resolve(request);
      const url = new URL(request.url);
      if (!session) return signInFirst(route.method === "GET" ? url.pathname + url.search : "/dashboard");
      const input = { session, request, params, query: url.searchParams };
      if (route.method === "GET") return route.handle(input);
      const { form, files } = formParts(body);
      if (!gate.csrfValid(session, form.get("csrf"))) return forbidden();
      return route.handle({ ...input, form, files });
    };
    if (route.method === "GET") app.get(route.path, handler);
    else app.post(route.path, handler);
  }
  return app;
}

/** A posted form's text fields and files, whether it came urlencoded or as multipart. */
function formParts(body: unknown): { form: URLSearchParams; files: Map<string, File> } {
  const files = new Map<string, File>();
  if (body instanceof URLSearchParams) return { form: body, files };
  const form = new URLSearchParams();
  if (body instanceof FormData)
    for (const [name, value] of body.entries()) {
      if (typeof value === "string") form.append(name, value);
      else files.set(name, value);
    }
  return { form, files };
}

/** To the sign-in page, which sends the user on to `next` (a path on this site) afterwards. */
export function signInFirst(next: string): Response {
  const location = `/dashboard/login?next=${encodeURIComponent(next)}`;
  return new Response(null, { status: 303, headers: { location } });
}

function forbidden(): Response {
  const body = html`<section class="card">
  <h1>This form has expired</h1>
  <p>It did not come from this dashboard, or its page is too old. Go back, reload the page and try again.</p>
</section>`;
  return publicDashboardPage("Form expired", body, 403);
}
