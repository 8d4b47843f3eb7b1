/**
 * Every `/dashboard` route, with what it takes to call it for the owner of the objects it names.
 * test/dashboard/auth.test.ts iterates this table (sign-in required, CSRF required, another
 * account's objects are 404) and checks it against the server's registered routes, so a new
 * dashboard route cannot ship without those checks. Add yours here, and the objects it needs to
 * DashboardObjects and createDashboardObjects.
 */
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { insertPendingRecovery } from "./recovery-rows.ts";
import { markReceived } from "./refund-rows.ts";
import { api, type TestAccount } from "./server.ts";
import { waitFor } from "./wait.ts";

/** One account's objects, made through the API, whose ids fill a route's path parameters. */
export interface DashboardObjects {
  paymentId: string;
  linkId: string;
  /** A webhook endpoint at the sweep's receiver, with one delivered test event. */
  endpointId: string;
  deliveryId: string;
  /** An API key of its own, so revoking it leaves the account's first key working. */
  keyId: string;
  /** A payment that received 2.00 USDC, and a refund of part of it waiting for the payer's address. */
  paidPaymentId: string;
  refundId: string;
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
  { method: "GET", path: "/dashboard/webhooks" },
  { method: "POST", path: "/dashboard/webhooks", form: { url: "https://hooks.example.com/sweep" } },
  { method: "GET", path: "/dashboard/webhooks/:id", params: { id: "endpointId" } },
  { method: "POST", path: "/dashboard/webhooks/:id/test", params: { id: "endpointId" }, form: {} },
  {
    method: "POST",
    path: "/dashboard/webhooks/:id/deliveries/:delivery_id/retry",
    params: { id: "endpointId", delivery_id: "deliveryId" },
    form: {},
  },
  { method: "POST", path: "/dashboard/webhooks/:id/delete", params: { id: "endpointId" }, form: { confirm: "yes" } },
  { method: "GET", path: "/dashboard/keys" },
  { method: "POST", path: "/dashboard/keys", form: {} },
  { method: "POST", path: "/dashboard/keys/:id/revoke", params: { id: "keyId" }, form: { confirm: "yes" } },
  { method: "GET", path: "/dashboard/settings" },
  { method: "POST", path: "/dashboard/settings/speed", form: { speed: "fast" } },
  { method: "POST", path: "/dashboard/settings/business", form: { legal_name: "Sweep Shop GmbH", tax_id: "DE1" } },
  // A urlencoded post of the logo form is its remove button (an upload is multipart: test/documents/).
  { method: "POST", path: "/dashboard/settings/logo", form: { remove: "yes" } },
  { method: "POST", path: "/dashboard/settings/email/customers", form: { customer_emails: "off" } },
  { method: "POST", path: "/dashboard/settings/email/notices", form: { payments: "daily" } },
  { method: "POST", path: "/dashboard/settings/email/test", form: { address: "sweep@example.com" } },
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
  // The owner's request names the payment's recovery under way (the sweep's server has no chain).
  { method: "POST", path: "/dashboard/payments/:id/recover", params: { id: "paymentId" }, form: { chain: "custom" } },
  {
    method: "POST",
    path: "/dashboard/payments/:id/refunds",
    params: { id: "paidPaymentId" },
    form: { amount: "0.50", nonce: "sweepRefundNonce00000000" },
  },
  { method: "POST", path: "/dashboard/refunds/:id/cancel", params: { id: "refundId" }, form: {} },
];

/** The concrete path of `route` for `objects`. */
export function examplePath(route: DashboardRouteCase, objects: DashboardObjects): string {
  let path = route.path;
  for (const [param, object] of Object.entries(route.params ?? {})) path = path.replace(`:${param}`, objects[object]);
  return path;
}

/** Whether a route names one object in its path (so another account must get 404 for it). */
export const namesAnObject = (route: DashboardRouteCase) => route.path.includes(":");

/** The running server the objects are made on, and a webhook receiver that answers 200. */
export interface SweepTarget {
  url: string;
  /** The CLI's environment for the server's data dir. */
  env: Record<string, string>;
  /** A local receiver (the server needs STABLEGATE_WEBHOOK_ALLOW_PRIVATE). */
  hookUrl: string;
}

/**
 * A fresh set of objects of `account`, marked so they can be recognised. It returns once no
 * delivery of the account is pending, so no send lands while the sweep compares the database.
 */
export async function createDashboardObjects(target: SweepTarget, account: TestAccount): Promise<DashboardObjects> {
  const call = api(target.url, account.apiKey);
  const marker = `sweep-${crypto.randomUUID().slice(0, 8)}`;
  const payment = await call("/api/v1/payments", {
    body: { amount: "3.00", reference: marker, description: `Order ${marker}` },
  });
  if (payment.status !== 201) throw new Error(`payment: ${payment.status} ${payment.text}`);
  const link = await call("/api/v1/payment_links", { body: { amount: "4.00", description: `Link ${marker}` } });
  if (link.status !== 201) throw new Error(`payment link: ${link.status} ${link.text}`);
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: `${target.hookUrl}/${marker}` } });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${endpoint.text}`);
  const sent = await call(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" });
  if (sent.status !== 202) throw new Error(`test event: ${sent.status} ${sent.text}`);
  const key = (await runAccountCommand("key", ["create", "--account", account.accountId], target.env)) as {
    id: string;
  };
  await insertPendingRecovery(target.env, payment.json.id);
  const paid = await call("/api/v1/payments", { body: { amount: "2.00", reference: `${marker}-paid` } });
  if (paid.status !== 201) throw new Error(`paid payment: ${paid.status} ${paid.text}`);
  await markReceived(target.env, paid.json.id, 2_000_000n);
  const refund = await call(`/api/v1/payments/${paid.json.id}/refunds`, {
    body: { amount: "0.75", reason: `Refund ${marker}` },
  });
  if (refund.status !== 201) throw new Error(`refund: ${refund.status} ${refund.text}`);
  await deliveriesSettled(target, account);
  return {
    paymentId: payment.json.id,
    linkId: link.json.id,
    endpointId: endpoint.json.id,
    deliveryId: sent.json.delivery.id,
    keyId: key.id,
    paidPaymentId: paid.json.id,
    refundId: refund.json.id,
    marker,
  };
}

/** Waits until none of the account's webhook deliveries is still to be sent (the sweep's actions queue some). */
export async function deliveriesSettled(target: SweepTarget, account: TestAccount): Promise<void> {
  const call = api(target.url, account.apiKey);
  await waitFor(
    async () => {
      const endpoints = (await call("/api/v1/webhook_endpoints")).json.data as Array<{ id: string }>;
      for (const endpoint of endpoints) {
        const list = await call(`/api/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=100`);
        if ((list.json.data as Array<{ status: string }>).some((d) => d.status === "pending")) return false;
      }
      return true;
    },
    10_000,
    "the account's webhook deliveries to be sent",
  );
}
