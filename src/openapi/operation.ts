import type { TObject, TSchema } from "@sinclair/typebox";

/** An error status an operation can answer, each with its shared meaning (document.ts). */
export type ErrorStatus = 400 | 401 | 404 | 409 | 422 | 429 | 503;

/** The document's tags, in the order it lists them, each with what its operations are about. */
export const TAGS = {
  Payments: "Payments to a deposit address of their own: create, list, retrieve and export them.",
  Refunds:
    "Paying a payer back from the merchant's own wallet: the refund's record, its claim link, the exact transfer " +
    "to make and the chain's word that it was made.",
  "Payment links": "Reusable links where each payer creates a payment of their own.",
  "Webhook endpoints": "Where signed events are delivered: endpoints, their deliveries, and test events.",
  Events: "What happened to the account and its payments, as webhooks send it: listed, retrieved or streamed.",
  Recoveries: "Returning another token, or the native coin, sent to a deposit address by mistake.",
  x402: "Stablegate as the x402 facilitator of the merchant's own paid resources (docs/agents-and-programs.md).",
  Public:
    "What the checkout page and the widget call, keyed by the payment id alone: no API key, rate limited per " +
    "payment.",
  Operations: "Liveness and readiness checks for load balancers and monitoring, and this document.",
} as const;

/** A success answer: JSON of `schema`, or another media type described in words. */
export interface Answer {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json. */
  mediaType?: string;
  /** Sent when an Idempotency-Key request is answered from the stored response. */
  replayable?: boolean;
  /** Response headers the answer carries (x402's PAYMENT-REQUIRED, PAYMENT-RESPONSE). */
  headers?: Array<{ name: string; description: string }>;
}

/**
 * One route of the API as the document describes it. The schemas are the very ones the route
 * validates with (its params, query and body), exported by the route's module.
 */
export interface Operation {
  method: "get" | "post" | "delete";
  /** As Elysia registers it, with `:params`. */
  path: string;
  operationId: string;
  tag: keyof typeof TAGS;
  summary: string;
  description?: string;
  /** Merchant routes take the bearer API key; public ones take none. */
  auth: boolean;
  /** Takes an Idempotency-Key header. */
  idempotent?: boolean;
  params?: TObject;
  query?: TObject;
  /** Request headers other than the key and Idempotency-Key. */
  headers?: Array<{ name: string; description: string; schema: TSchema }>;
  /** The request body, with an example for the docs (renderers otherwise invent one from the patterns). */
  body?: { name: string; schema: TSchema; example: unknown };
  /** Successes; and /readyz's 503, which is its own body rather than an error. */
  responses: Partial<Record<200 | 201 | 202 | 402 | 503, Answer>>;
  /** Besides 413 and 500, which any request can get (document.ts). */
  errors: ErrorStatus[];
}
