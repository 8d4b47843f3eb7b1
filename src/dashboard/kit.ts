import { html, type Raw } from "../html/template.ts";

/**
 * The contract every dashboard page is written against. routes.ts resolves the session before
 * any handler runs and checks the CSRF token before any POST handler runs, so a handler only
 * ever sees a signed-in user, and scopes everything it reads or changes to `session.accountId`.
 */
export interface DashboardSession {
  userId: string;
  email: string;
  accountId: string;
  /** Sent back by every state-changing form (csrfField); a POST without it is 403 before its handler. */
  csrfToken: string;
}

/** Which navigation entry a page belongs to. */
export type NavKey = "home" | "payments" | "new-payment" | "links" | "webhooks" | "keys" | "settings";

export interface PageInput {
  session: DashboardSession;
  request: Request;
  /** Path parameters, as the route's path names them (`/dashboard/payments/:id` gives `id`). */
  params: Record<string, string>;
  query: URLSearchParams;
}

export interface ActionInput extends PageInput {
  /** The submitted form's text fields, its CSRF token already checked. */
  form: URLSearchParams;
  /** A multipart form's files by field name (the logo upload); empty for any other form. */
  files: ReadonlyMap<string, File>;
}

/** One dashboard route: a page (GET) or an action (POST, answered with a page or a 303). */
export type DashboardRoute =
  | { method: "GET"; path: string; handle: (input: PageInput) => Response | Promise<Response> }
  | { method: "POST"; path: string; handle: (input: ActionInput) => Response | Promise<Response> };

/** The hidden field every state-changing form carries. */
export const csrfField = (session: DashboardSession): Raw =>
  html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;

/** After a successful POST: the browser loads `location` with a GET, so a reload resubmits nothing. */
export const seeOther = (location: string): Response => new Response(null, { status: 303, headers: { location } });
