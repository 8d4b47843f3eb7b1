import { DomainError, type ErrorKind } from "../lib/errors.ts";
import type { Logger } from "../lib/log.ts";

/** Each kind of refusal a service can throw, as an HTTP status: the only place the two meet. */
const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  too_many: 429,
  unavailable: 503,
};

/** The status of a refusal; dashboard pages answer with it too, on a page instead of JSON. */
export const statusOf = (error: DomainError): number => STATUS[error.kind];

/**
 * The one place errors become HTTP responses: always `{"error": "..."}`. Domain errors carry
 * their own message; anything unexpected is logged with its cause and answered as an opaque
 * 500, so no stack trace or SQL ever reaches a client. It never reads the request's value itself:
 * bodies are validated by src/http/validate.ts, which phrases its own messages; query strings and
 * path params by their schemas' own `error` text (src/http/query.ts, src/http/params.ts).
 */
export function errorResponse(code: string | number, error: unknown, log: Logger, request?: Request): Response {
  if (error instanceof DomainError) {
    const headers: Record<string, string> =
      error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) };
    return json(STATUS[error.kind], error.message, headers);
  }
  // Elysia wraps whatever the parse hook throws (a 400 or 413 from body.ts, a 401 from the
  // merchant key check, see app.ts); the cause is what happened.
  if (code === "PARSE" && error instanceof Error && error.cause !== undefined) {
    return errorResponse("UNKNOWN", error.cause, log, request);
  }
  if (code === "VALIDATION" && isParamRule(error)) return json(error.type === "params" ? 404 : 400, error.customError);
  switch (code) {
    case "PARSE":
      return json(400, "request body must be valid JSON");
    case "NOT_FOUND":
      return json(404, "not found");
    case "VALIDATION":
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return json(400, "bad request");
  }
  return internalError(error, log, request);
}

/**
 * Elysia's failure of a query or path schema, carrying that schema's own `error` text. A path
 * holds ids only, and a malformed id is as unknown as any other (src/http/params.ts): 404.
 */
function isParamRule(error: unknown): error is { type: "query" | "params"; customError: string } {
  const { type, customError } = error as { type?: unknown; customError?: unknown };
  return (type === "query" || type === "params") && typeof customError === "string";
}

/** The opaque 500; also the last resort when mapping an error fails in turn. */
export function internalError(error: unknown, log: Logger, request?: Request): Response {
  log.error("unhandled error", { error, path: request ? new URL(request.url).pathname : undefined });
  return json(500, "internal error");
}

function json(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
