/**
 * Every merchant route (`/api/v1/...`), with a request that would succeed for the owner of the
 * objects it names. The security sweeps iterate this table, and a test checks it against the
 * server's registered routes, so a new route cannot ship without the shared checks.
 */

/** Ids of one account's objects, filled into a route's path. */
export interface OwnedObjects {
  paymentId: string;
  endpointId: string;
  deliveryId: string;
  eventId: string;
  linkId: string;
  /** A recovery of the payment's native coin on the settlement chain, still pending. */
  recoveryId: string;
  /** A refund of part of the payment (which received funds), waiting for the payer's address. */
  refundId: string;
}

export interface MerchantRoute {
  method: "GET" | "POST" | "DELETE";
  /** As the server registers it, with `:params`. */
  path: string;
  body?: unknown;
  /** Changes something, so a refused request must leave the objects as they were. */
  writes: boolean;
  /** Answers a stream that stays open (Server-Sent Events): read its status, then disconnect. */
  streams?: boolean;
}

const X402_REQUIREMENTS = {
  scheme: "exact",
  network: "eip155:84532",
  amount: "1000000",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x000000000000000000000000000000000000dEaD",
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};
const X402_SWEEP_REQUEST = {
  x402Version: 2,
  paymentRequirements: X402_REQUIREMENTS,
  paymentPayload: {
    x402Version: 2,
    accepted: X402_REQUIREMENTS,
    payload: {
      signature: `0x${"11".repeat(65)}`,
      authorization: {
        from: "0x1111111111111111111111111111111111111111",
        to: X402_REQUIREMENTS.payTo,
        value: "1000000",
        validAfter: "0",
        validBefore: "99999999999",
        nonce: `0x${"22".repeat(32)}`,
      },
    },
  },
};

export const MERCHANT_ROUTES: readonly MerchantRoute[] = [
  { method: "POST", path: "/api/v1/payments", body: { amount: "1.00" }, writes: true },
  { method: "GET", path: "/api/v1/payments", writes: false },
  { method: "GET", path: "/api/v1/payments/:id", writes: false },
  { method: "GET", path: "/api/v1/payments.csv", writes: false },
  // The owner's request names the recovery already under way (the sweep's server has no chain to simulate on).
  { method: "POST", path: "/api/v1/payments/:id/recover", body: { chain: "custom" }, writes: true },
  { method: "GET", path: "/api/v1/payments/:id/recoveries", writes: false },
  // The sweep's payment has an invoice number and is confirmed: it has both documents.
  { method: "GET", path: "/api/v1/payments/:id/invoice.pdf", writes: false },
  { method: "GET", path: "/api/v1/payments/:id/receipt.pdf", writes: false },
  { method: "GET", path: "/api/v1/recoveries/:id", writes: false },
  { method: "POST", path: "/api/v1/payments/:id/refunds", body: { amount: "0.50" }, writes: true },
  { method: "GET", path: "/api/v1/payments/:id/refunds", writes: false },
  { method: "GET", path: "/api/v1/refunds", writes: false },
  { method: "GET", path: "/api/v1/refunds/:id", writes: false },
  { method: "GET", path: "/api/v1/refunds.csv", writes: false },
  { method: "POST", path: "/api/v1/refunds/:id/cancel", writes: true },
  { method: "POST", path: "/api/v1/webhook_endpoints", body: { url: "https://hooks.example.com/sweep" }, writes: true },
  { method: "GET", path: "/api/v1/webhook_endpoints", writes: false },
  { method: "DELETE", path: "/api/v1/webhook_endpoints/:id", writes: true },
  { method: "GET", path: "/api/v1/webhook_endpoints/:id/deliveries", writes: false },
  { method: "POST", path: "/api/v1/webhook_endpoints/:id/deliveries/:delivery_id/retry", writes: true },
  { method: "POST", path: "/api/v1/webhook_endpoints/:id/test", writes: true },
  { method: "POST", path: "/api/v1/payment_links", body: { amount: "1.00" }, writes: true },
  { method: "GET", path: "/api/v1/payment_links", writes: false },
  { method: "GET", path: "/api/v1/payment_links/:id", writes: false },
  { method: "POST", path: "/api/v1/payment_links/:id", body: { active: false }, writes: true },
  { method: "GET", path: "/api/v1/events", writes: false },
  { method: "GET", path: "/api/v1/events/stream", writes: false, streams: true },
  { method: "GET", path: "/api/v1/events/:id", writes: false },
  // A well-formed facilitator request for a payTo the account does not have: answered (isValid / success false), 200.
  { method: "POST", path: "/api/v1/x402/verify", body: X402_SWEEP_REQUEST, writes: false },
  { method: "POST", path: "/api/v1/x402/settle", body: X402_SWEEP_REQUEST, writes: true },
  { method: "GET", path: "/api/v1/x402/supported", writes: false },
];

/** The concrete path of `route` for `objects`. */
export function concretePath(route: MerchantRoute, objects: OwnedObjects): string {
  const id = route.path.startsWith("/api/v1/payments/")
    ? objects.paymentId
    : route.path.startsWith("/api/v1/events/")
      ? objects.eventId
      : route.path.startsWith("/api/v1/payment_links/")
        ? objects.linkId
        : route.path.startsWith("/api/v1/recoveries/")
          ? objects.recoveryId
          : route.path.startsWith("/api/v1/refunds/")
            ? objects.refundId
            : objects.endpointId;
  return route.path.replace(":delivery_id", objects.deliveryId).replace(":id", id);
}

/** Whether a route names one object in its path (so another account must get 404 for it). */
export const namesAnObject = (route: MerchantRoute) => route.path.includes(":");
