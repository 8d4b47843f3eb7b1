export { Stablegate } from "./client.ts";
export {
  AuthenticationError,
  ConflictError,
  IdempotencyError,
  NotFoundError,
  RateLimitError,
  ServerError,
  StablegateConnectionError,
  StablegateError,
  ValidationError,
} from "./errors.ts";
export type { List, PagePromise } from "./pages.ts";
export type { ClientOptions, RequestOptions } from "./transport.ts";
export type * from "./types.ts";
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from "./webhooks.ts";
