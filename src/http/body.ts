/**
 * Request bodies are read and parsed here rather than by Elysia: the read stops at the size
 * limit, chunked or not, so no body costs more memory than the limit; nesting is bounded before
 * anything recurses into the value; and the raw text stays available for the metadata, which is
 * stored as sent.
 */
import { TooLargeError, ValidationError } from "../lib/errors.ts";
import { nestingDepth } from "../lib/raw-json.ts";

const rawBodies = new WeakMap<Request, string>();

/** Upper bound on any request body; a payment with 50 line items and full metadata is ~60 KB. */
export const MAX_BODY_BYTES = 256 * 1024;
/** Deeper than any request schema needs (a line item is 3 levels down). */
export const MAX_BODY_DEPTH = 32;
const TOO_LARGE = `request body is larger than ${MAX_BODY_BYTES / 1024} KB`;

export function tooLarge(): Response {
  return new Response(JSON.stringify({ error: TOO_LARGE }), {
    status: 413,
    headers: { "content-type": "application/json" },
  });
}

export async function parseJsonBody(request: Request): Promise<unknown> {
  const text = await readLimited(request, MAX_BODY_BYTES);
  rawBodies.set(request, text);
  // null, not undefined: Elysia would take undefined as "not parsed" and read the spent stream again.
  if (text.trim() === "") return null;
  if (nestingDepth(text) > MAX_BODY_DEPTH)
    throw new ValidationError(`request body nests deeper than ${MAX_BODY_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError("request body must be valid JSON");
  }
}

/** An HTML form's body (application/x-www-form-urlencoded), under the same size limit. */
export async function parseFormBody(request: Request): Promise<URLSearchParams> {
  return new URLSearchParams(await readLimited(request, MAX_BODY_BYTES));
}

/**
 * A multipart form (the dashboard's logo upload), under the same size limit: its text fields and
 * files as FormData. A body that is not a valid multipart form is a 400.
 */
export async function parseMultipartBody(request: Request): Promise<FormData> {
  const bytes = await readLimitedBytes(request, MAX_BODY_BYTES);
  const type = request.headers.get("content-type") ?? "";
  try {
    return await new Response(bytes, { headers: { "content-type": type } }).formData();
  } catch {
    throw new ValidationError("request body must be a valid multipart form");
  }
}

export function rawBody(request: Request): string {
  return rawBodies.get(request) ?? "";
}

/** The body as UTF-8 text, or a 413 as soon as more than `limit` bytes have arrived. */
async function readLimited(request: Request, limit: number): Promise<string> {
  return new TextDecoder().decode(await readLimitedBytes(request, limit));
}

/** The body's bytes, or a 413 as soon as more than `limit` bytes have arrived. */
async function readLimitedBytes(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  // A Content-Length at most the limit, without chunking, bounds the body by itself (the server
  // reads no more than it says): read it whole, without a stream reader's per-chunk promises.
  const declared = request.headers.get("content-length");
  if (
    declared !== null &&
    /^\d{1,9}$/.test(declared) &&
    Number(declared) <= limit &&
    request.headers.get("transfer-encoding") === null
  ) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw new TooLargeError(TOO_LARGE);
    return bytes;
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new TooLargeError(TOO_LARGE);
    }
    chunks.push(value);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}
