import type { TObject, TSchema } from "@sinclair/typebox";

/** An error status an operation can answer, each with its shared meaning (document.ts). */
export type ErrorStatus = 400 | 401 | 404 | 409 | 422 | 429 | 503;

/** A success answer: JSON of `schema`, or another media type described in words. */
export interface Answer {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json. */
  mediaType?: string;
  /** Sent when an Idempotency-Key request is answered from the stored response. */
  replayable?: boolean;
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
  tag: "Payments" | "Payment links" | "Webhook endpoints" | "Events" | "Recoveries" | "Public" | "Operations";
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
  responses: Partial<Record<200 | 201 | 202 | 503, Answer>>;
  /** Besides 413 and 500, which any request can get (document.ts). */
  errors: ErrorStatus[];
}
