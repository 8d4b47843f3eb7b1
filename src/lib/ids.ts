/**
 * Identifiers. Payment ids are 256-bit random hex (the spec fixes their shape); everything else
 * carries a type prefix (`acct_`, `key_`, `we_`, `evt_`, `whd_`, `usr_`, `ses_`, `plink_`, `rcv_`, `auth_`, `re_`,
 * `eml_`) so a stray id says what it is.
 */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` characters drawn uniformly from base62 (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

export type IdPrefix =
  | "acct"
  | "key"
  | "we"
  | "evt"
  | "whd"
  | "burn"
  | "brg"
  | "usr"
  | "ses"
  | "plink"
  | "rcv"
  | "auth"
  | "re"
  | "eml";

export interface IdGenerator {
  paymentId(): `0x${string}`;
  prefixed(prefix: IdPrefix): string;
  apiKey(): string;
  webhookSecret(): string;
}

export const randomIds: IdGenerator = {
  paymentId: () => `0x${randomHex(32)}`,
  prefixed: (prefix) => `${prefix}_${randomBase62(24)}`,
  apiKey: () => `sk_live_${randomBase62(32)}`,
  webhookSecret: () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
};

export const PAYMENT_ID = /^0x[0-9a-f]{64}$/;
/** The shape `randomIds.prefixed(prefix)` gives, as a pattern source for request schemas. */
export const prefixedIdPattern = (prefix: IdPrefix) => `^${prefix}_[0-9A-Za-z]{24}$`;
export const API_KEY = /^sk_live_[0-9A-Za-z]{32}$/;
