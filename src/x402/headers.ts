/**
 * The HTTP transport's headers (specs/transports-v2/http.md): PAYMENT-REQUIRED (server to
 * client), PAYMENT-SIGNATURE (client to server) and PAYMENT-RESPONSE (server to client), each
 * base64 of the message's JSON, UTF-8.
 */
export const PAYMENT_REQUIRED = "PAYMENT-REQUIRED";
export const PAYMENT_SIGNATURE = "PAYMENT-SIGNATURE";
export const PAYMENT_RESPONSE = "PAYMENT-RESPONSE";

/** A header must stay well under what proxies accept (8 KiB is common); a payload is a few hundred bytes. */
export const MAX_HEADER_CHARS = 8192;

export const encodeHeader = (message: unknown): string =>
  Buffer.from(JSON.stringify(message), "utf8").toString("base64");

/** The JSON inside a base64 header, or null when it is not base64 of JSON. */
export function decodeHeader(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_HEADER_CHARS || !/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return null;
  try {
    return JSON.parse(Buffer.from(trimmed, "base64").toString("utf8"));
  } catch {
    return null;
  }
}
