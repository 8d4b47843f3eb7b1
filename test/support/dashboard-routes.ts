/**
 * Every `/dashboard` route, with what it takes to call it for the owner of the objects it names.
 * test/dashboard/auth.test.ts iterates this table (sign-in required, CSRF required, another
 * account's objects are 404) and checks it against the server's registered routes, so a new
 * dashboard route cannot ship without those checks. Add yours here, and the objects it needs to
 * DashboardObjects and createDashboardObjects.
 */
import { api } from "./server.ts";

/** One account's objects, made through the API, whose ids fill a route's path parameters. */
export interface DashboardObjects {
  paymentId: string;
  linkId: string;
  /** Text on the objects that no page of another account may show. */
  marker: string;
}

export interface DashboardRouteCase {
  method: "GET" | "POST";
  /** As the server registers it, with `:params`. */
  path: string;
  /** Which object each path parameter names: `{ id: "paymentId" }`. */
  params?: Record<string, Exclude<keyof DashboardObjects, "marker">>;
  /** For a POST: a form that succeeds for the owner (the CSRF token is added by the sweep). */
  form?: Record<string, string>;
  /** Open without a session: the sign-in page and the static assets. */
  open?: true;
}

export const DASHBOARD_ROUTES: readonly DashboardRouteCase[] = [
  { method: "GET", path: "/dashboard/login", open: true },
  { method: "POST", path: "/dashboard/login", open: true },
  { method: "GET", path: "/dashboard/assets/dashboard.css", open: true },
  { method: "GET", path: "/dashboard/assets/dashboard.js", open: true },
  { method: "GET", path: "/dashboard" },
  { method: "GET", path: "/dashboard/payments" },
  { method: "GET", path: "/dashboard/payments.csv" },
  { method: "POST", path: "/dashboard/logout", form: {} },
  { method: "GET", path: "/dashboard/links" },
  { method: "GET", path: "/dashboard/links/new" },
  { method: "POST", path: "/dashboard/links/new", form: { mode: "fixed", amount: "2.00", description: "Sweep link" } },
  { method: "GET", path: "/dashboard/links/:id", params: { id: "linkId" } },
  { method: "POST", path: "/dashboard/links/:id", params: { id: "linkId" }, form: { active: "false" } },
  { method: "GET", path: "/dashboard/payments/new" },
  // A form's nonce is 24 base62 characters; sent again, it answers with the payment it made.
  { method: "POST", path: "/dashboard/payments/new", form: { amount: "5.00", nonce: "sweepNonce00000000000000" } },
  { method: "GET", path: "/dashboard/payments/:id", params: { id: "paymentId" } },
];

/** The concrete path of `route` for `objects`. */
export function examplePath(route: DashboardRouteCase, objects: DashboardObjects): string {
  let path = route.path;
  for (const [param, object] of Object.entries(route.params ?? {})) path = path.replace(`:${param}`, objects[object]);
  return path;
}

/** Whether a route names one object in its path (so another account must get 404 for it). */
export const namesAnObject = (route: DashboardRouteCase) => route.path.includes(":");

/** A fresh set of objects of the account whose API key is `apiKey`, marked so they can be recognised. */
export async function createDashboardObjects(url: string, apiKey: string): Promise<DashboardObjects> {
  const call = api(url, apiKey);
  const marker = `sweep-${crypto.randomUUID().slice(0, 8)}`;
  const payment = await call("/api/v1/payments", {
    body: { amount: "3.00", reference: marker, description: `Order ${marker}` },
  });
  if (payment.status !== 201) throw new Error(`payment: ${payment.status} ${payment.text}`);
  const link = await call("/api/v1/payment_links", { body: { amount: "4.00", description: `Link ${marker}` } });
  if (link.status !== 201) throw new Error(`payment link: ${link.status} ${link.text}`);
  return { paymentId: payment.json.id, linkId: link.json.id, marker };
}
