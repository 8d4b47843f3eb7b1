import { createHmac } from "node:crypto";
import type { Clock } from "../lib/clock.ts";
import { randomBase62 } from "../lib/ids.ts";
import { constantTimeEqual } from "../lib/secrets.ts";

/**
 * The one-time token in each rendering of a payment link's form: when it was issued, a random
 * part, and a MAC over both and the link's id under a key of the server's. Only a page this
 * server rendered can start a payment, so every payment costs a page fetch; the token is the
 * form's idempotency key, so sending it again leads to the same payment. Alphanumeric, as forms
 * and URLs like.
 */
export const FORM_TOKEN = /^[0-9a-z]{8}[0-9A-Za-z]{16}[0-9a-f]{32}$/;
/** A form is good for a day: as long as its idempotency key is kept, so a late resend still finds its payment. */
export const FORM_TOKEN_TTL_MS = 24 * 60 * 60_000;
/** How far ahead of this server's clock another replica's may run. */
const CLOCK_SKEW_MS = 5 * 60_000;

export type FormTokens = ReturnType<typeof createFormTokens>;

export function createFormTokens(key: string, clock: Clock) {
  const mac = (linkId: string, issued: string, nonce: string) =>
    createHmac("sha256", key).update(`${linkId}:${issued}:${nonce}`).digest("hex").slice(0, 32);

  return {
    /** A fresh token for one rendering of `linkId`'s form. */
    issue(linkId: string): string {
      const issued = Math.floor(clock.now() / 1000)
        .toString(36)
        .padStart(8, "0");
      const nonce = randomBase62(16);
      return `${issued}${nonce}${mac(linkId, issued, nonce)}`;
    },

    /** Whether `token` was issued by this server (or a replica) for `linkId` less than a day ago. */
    valid(linkId: string, token: string): boolean {
      if (!FORM_TOKEN.test(token)) return false;
      const [issued, nonce, sent] = [token.slice(0, 8), token.slice(8, 24), token.slice(24)];
      const expected = mac(linkId, issued, nonce);
      if (!constantTimeEqual(sent, expected)) return false;
      const age = clock.now() - Number.parseInt(issued, 36) * 1000;
      return age < FORM_TOKEN_TTL_MS && age > -CLOCK_SKEW_MS;
    },
  };
}
