import { WebhookVerificationError as Refused, Webhook } from "standardwebhooks";
import type { Event } from "./types.ts";

/** Headers as the Fetch API, Node's `req.headers` or a plain object hold them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** The delivery is not one Stablegate signed with this secret, or its timestamp is too far from now. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/**
 * Checks a webhook delivery by the Standard Webhooks scheme (HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under the `whsec_` secret, a timestamp within five
 * minutes of now) and returns the event. `payload` is the raw body text, before any JSON parsing.
 */
export function verifyWebhook(payload: string, headers: WebhookHeaders, secret: string): Event {
  try {
    return new Webhook(secret).verify(payload, flatten(headers)) as Event;
  } catch (error) {
    if (error instanceof Refused) throw new WebhookVerificationError(error.message);
    throw error;
  }
}

function flatten(headers: WebhookHeaders): Record<string, string> {
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // Node joins a repeated header into an array; signatures are space-separated in one header.
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(" ") : value;
  }
  return flat;
}
