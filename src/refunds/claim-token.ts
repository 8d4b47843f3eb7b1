import { createHmac } from "node:crypto";
import { sha256Hex } from "../lib/secrets.ts";

/** A claim link's token: 256 bits of MAC, base64url. */
export const CLAIM_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type ClaimTokens = ReturnType<typeof createClaimTokens>;

/**
 * The capability in a refund's claim link (`{base}/refund/{token}`): a MAC of the refund's id
 * under a key of the server's, so the link can be shown again (the refund's `claim_url`) while only
 * its SHA-256 is stored, the way API keys are. Not the payment id: whoever can see a payment
 * (its checkout page is public) cannot name where its refund goes.
 */
export function createClaimTokens(key: string) {
  const tokenFor = (refundId: string) =>
    createHmac("sha256", key).update(`refund-claim:${refundId}`).digest("base64url");
  return {
    tokenFor,
    /** What is stored and looked up: the token itself is never kept. */
    hashOf: (token: string) => sha256Hex(token),
  };
}
