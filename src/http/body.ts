/**
 * Request bodies are parsed here rather than by Elysia so the raw text stays available: the
 * merchant's metadata is echoed byte for byte, which re-serialising a parsed object cannot do.
 */
import { HttpError } from "../lib/errors.ts";

const rawBodies = new WeakMap<Request, string>();

/** Upper bound on any request body; a payment with 50 line items and full metadata is ~60 KB. */
export const MAX_BODY_BYTES = 256 * 1024;
const TOO_LARGE = `request body is larger than ${MAX_BODY_BYTES / 1024} KB`;

export function tooLarge(): Response {
  return new Response(JSON.stringify({ error: TOO_LARGE }), { status: 413, headers: { "content-type": "application/json" } });
}

export async function parseJsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new HttpError(413, TOO_LARGE);
  rawBodies.set(request, text);
  if (text.trim() === "") return undefined;
  return JSON.parse(text); // a SyntaxError here becomes Elysia's PARSE error -> 400
}

export function rawBody(request: Request): string {
  return rawBodies.get(request) ?? "";
}
