import { EVENT_TYPES } from "../events/service.ts";

/** Standard Webhooks' three headers, as every delivery carries them (src/webhooks/signature.ts). */
const SIGNATURE_HEADERS = [
  {
    name: "webhook-id",
    description: "The event id: the same on every retry of this event; de-duplicate on it.",
    schema: { type: "string", pattern: "^evt_[0-9A-Za-z]{24}$" },
  },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, in Unix seconds.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    description:
      "`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the bytes of the " +
      "base64 part of the endpoint's `whsec_` secret.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$" },
  },
].map((header) => ({ ...header, in: "header", required: true }));

/**
 * How a receiver knows a delivery is Stablegate's: by its signature, not by a credential it holds,
 * so the operations declare no security scheme (`security: []`) and say this instead.
 */
const AUTHENTICATION =
  "Signed per [Standard Webhooks](https://www.standardwebhooks.com), not sent with a credential: verify " +
  "`webhook-signature` against the raw body with the endpoint's `whsec_` secret, refuse a `webhook-timestamp` " +
  "more than 5 minutes away from now, and de-duplicate on `webhook-id`.";

/** `deliverPaymentConfirmedEvent` for `payment.confirmed`: a delivery is what Stablegate calls sending a webhook. */
const operationIdOf = (type: string) =>
  `deliver${type
    .split(/[._]/)
    .map((word) => `${word[0]!.toUpperCase()}${word.slice(1)}`)
    .join("")}Event`;

/**
 * The payload schema of each kind of event. A new kind of event with no entry here stops the
 * document from being built, instead of being described as a `test` event.
 */
const PAYLOADS: Array<[test: (type: string) => boolean, schema: string]> = [
  [(type) => type.startsWith("payment."), "PaymentEvent"],
  [(type) => type.startsWith("refund."), "RefundEvent"],
  [(type) => type === "account.updated", "AccountEvent"],
  [(type) => type === "test", "TestEvent"],
];

function payloadOf(type: string): string {
  const found = PAYLOADS.find(([matches]) => matches(type));
  if (!found) throw new Error(`no payload schema for the event type ${type}`);
  return found[1];
}

const WHEN: Record<string, string> = {
  "payment.pending":
    "A reorg took back every transfer credited to the payment before it was confirmed: it waits for funds again.",
  "payment.funds_seen":
    "A transfer to the payment is in a block but does not count yet under the payment's speed policy " +
    "(received, confirming); it is credited once it does.",
  "payment.funds_received": "More funds arrived for a payment that is already confirmed (they are forwarded too).",
  "payment.funds_reversed":
    "A reorg took a transfer to the payment off the chain: its credit, if it had one, is taken back " +
    "(`amount_received`), and a confirmed payment stays confirmed.",
  "payment.settlement_reversed":
    "A reorg took a mined settlement off the chain: what it swept counts as unsettled again and is settled again.",
  "refund.created":
    "A refund was created (by the API or the dashboard). Its amount counts against what the payment may still " +
    "refund from now on, until it is canceled.",
  "refund.payable":
    "The refund's address is known (the payer named it at the claim link, or the merchant gave it): " +
    "`payment_instructions` carries the exact transfer for the merchant to make.",
  "refund.succeeded":
    "The transfer paying the refund counts under the payment's speed policy: `tx_hash` names it, and the " +
    "payment's `amount_refunded` includes it.",
  "refund.canceled":
    "The refund was canceled before any transfer paying it was seen; what it held may be refunded again.",
  "account.updated": "The account's payout address changed.",
  test: "Sent on demand by `POST /api/v1/webhook_endpoints/{id}/test`, to that endpoint only.",
};

const whenSent = (type: string) => WHEN[type] ?? `The payment entered the status \`${type.slice("payment.".length)}\`.`;

/**
 * What Stablegate POSTs to each webhook endpoint: one entry per event type. Any 2xx within 15 s
 * is success; anything else is retried for about three days; 410 Gone disables the endpoint.
 */
export const WEBHOOKS = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        operationId: operationIdOf(type),
        summary: type,
        description: `${whenSent(type)}\n\n${AUTHENTICATION}`,
        security: [],
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: `#/components/schemas/${payloadOf(type)}` } } },
        },
        responses: {
          "2XX": { description: "Received. Answer within 15 seconds; anything else is retried." },
          "410": { description: "Gone: the endpoint is disabled and what was queued for it is canceled." },
        },
      },
    },
  ]),
);
