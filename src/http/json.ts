/**
 * Routes return plain objects and let Elysia serialise them, with one exception answered through
 * these two helpers: JSON that exists as text already. Payments and events embed the merchant's
 * metadata exactly as stored, byte for byte (a parse and re-serialise would change escapes and
 * spacing), so they are rendered once, as text; idempotent replays answer the stored text.
 */
export function jsonResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
}

/** A create's answer under an Idempotency-Key: the stored text, marked when it is a replay. */
export function idempotentResponse(result: { status: number; body: string; replayed: boolean }): Response {
  return jsonResponse(result.status, result.body, result.replayed ? { "idempotent-replayed": "true" } : {});
}

/** A list page of items that are JSON text already (see jsonResponse). */
export function listJson(items: string[], hasMore: boolean): string {
  return `{"object":"list","data":[${items.join(",")}],"has_more":${hasMore}}`;
}
