/**
 * The errors a client may see. Each carries the message that reaches the client and the HTTP
 * status it maps to; the single mapping lives in `src/http/errors.ts`. Anything else thrown is
 * an internal error: logged with its cause and answered as an opaque 500.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request is malformed or breaks a rule; the message says which. */
export class ValidationError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

/** 401: missing, malformed, unknown or revoked API key. */
export class AuthError extends HttpError {
  constructor(message = "invalid API key") {
    super(401, message);
  }
}

/** 404: missing, or owned by another account (the two are indistinguishable on purpose). */
export class NotFoundError extends HttpError {
  constructor(message = "not found") {
    super(404, message);
  }
}

/** 409: the request conflicts with one still in progress. */
export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}

/** 422: well-formed, but cannot be processed as asked. */
export class UnprocessableError extends HttpError {
  constructor(message: string) {
    super(422, message);
  }
}

/** Workers: an error worth retrying later (network, RPC hiccup) rather than a permanent failure. */
export class RetryableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RetryableError";
  }
}
