/**
 * What a failed call throws. Every error is a `StablegateError`; its class says what kind of
 * failure it was, so a caller can `catch` by class rather than by status code.
 */

export interface ErrorDetails {
  /** The HTTP status; null when no answer came back (StablegateConnectionError). */
  status: number | null;
  /** Seconds to wait before asking again, from the answer's `Retry-After`; null without one. */
  retryAfter?: number | null;
  /** The answer's `X-Request-Id` or `Request-Id` (set by a proxy in front of the server, if any). */
  requestId?: string | null;
  /** The Idempotency-Key the request carried: send the same call again with it to retry safely. */
  idempotencyKey?: string | null;
  cause?: unknown;
}

export class StablegateError extends Error {
  readonly status: number | null;
  readonly retryAfter: number | null;
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;

  constructor(message: string, details: ErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = details.status;
    this.retryAfter = details.retryAfter ?? null;
    this.requestId = details.requestId ?? null;
    this.idempotencyKey = details.idempotencyKey ?? null;
  }
}

/** 401: the API key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends StablegateError {}

/** 404: no such object, or it belongs to another account (the server does not say which). */
export class NotFoundError extends StablegateError {}

/** 400 (and 413, 422 without an Idempotency-Key): the request breaks a rule; the message names the field. */
export class ValidationError extends StablegateError {}

/**
 * 409: a request with the same Idempotency-Key is still being processed; retry shortly.
 * 422 on a request that carried an Idempotency-Key: the key was used before with another body.
 */
export class IdempotencyError extends StablegateError {}

/**
 * 409 on a request that carried no Idempotency-Key: the object's state refuses it (a refund that
 * succeeded, was canceled, or has a transfer paying it on chain cannot be canceled).
 */
export class ConflictError extends StablegateError {}

/** 429: too many requests; `retryAfter` says when to ask again. */
export class RateLimitError extends StablegateError {}

/** 5xx: the server failed or cannot reach what it needs right now (503 carries `retryAfter`). */
export class ServerError extends StablegateError {}

/** No answer came back: the server could not be reached, or the connection broke before it answered. */
export class StablegateConnectionError extends StablegateError {}

/** The error a non-2xx answer stands for; `body` is its text, `{"error": "..."}` from Stablegate. */
export function errorFromResponse(response: Response, body: string, idempotencyKey: string | null): StablegateError {
  const { status } = response;
  const details: ErrorDetails = {
    status,
    retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
    requestId: response.headers.get("x-request-id") ?? response.headers.get("request-id"),
    idempotencyKey,
  };
  const message = errorMessage(body) ?? `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}`;
  if (status === 401) return new AuthenticationError(message, details);
  if (status === 404) return new NotFoundError(message, details);
  if (status === 409 && idempotencyKey === null) return new ConflictError(message, details);
  if (status === 409 || (status === 422 && idempotencyKey !== null)) return new IdempotencyError(message, details);
  if (status === 400 || status === 413 || status === 422) return new ValidationError(message, details);
  if (status === 429) return new RateLimitError(message, details);
  if (status >= 500) return new ServerError(message, details);
  return new StablegateError(message, details);
}

/** The `error` field of a JSON error body; undefined when the body is something else (a proxy's page). */
function errorMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = (parsed as { error?: unknown } | null)?.error;
    return typeof error === "string" && error !== "" ? error : undefined;
  } catch {
    return undefined;
  }
}

/** `Retry-After` in seconds: a whole number as sent, or an HTTP date counted from now (never negative). */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
