/**
 * The errors a caller may see, by kind. Services throw them knowing nothing of HTTP; the one
 * mapping from kind to status lives in `src/http/errors.ts`. Anything else thrown is an internal
 * error: logged with its cause and answered as an opaque 500.
 */
export type ErrorKind =
  | "invalid"
  | "unauthenticated"
  | "not_found"
  | "conflict"
  | "unprocessable"
  | "too_large"
  | "too_many"
  | "unavailable";

/** A refusal whose message is meant for the caller, as it stands. */
export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind;

  constructor(
    message: string,
    /** When asking again makes sense: the refusal is temporary and lifts after this many seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A refusal's message as a page shows it: "amount must be ..." reads "Amount must be ....". */
export function asSentence(message: string): string {
  const capital = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The request is malformed or breaks a rule; the message says which. */
export class ValidationError extends DomainError {
  readonly kind = "invalid";
}

/** Missing, malformed, unknown or revoked API key. */
export class AuthError extends DomainError {
  readonly kind = "unauthenticated";
  constructor(message = "invalid API key") {
    super(message);
  }
}

/** Missing, or owned by another account (the two are indistinguishable on purpose). */
export class NotFoundError extends DomainError {
  readonly kind = "not_found";
  constructor(message = "not found") {
    super(message);
  }
}

/** The request conflicts with one still in progress. */
export class ConflictError extends DomainError {
  readonly kind = "conflict";
}

/** Well-formed, but cannot be processed as asked. */
export class UnprocessableError extends DomainError {
  readonly kind = "unprocessable";
}

/** More input than the server accepts at once. */
export class TooLargeError extends DomainError {
  readonly kind = "too_large";
}

/** Too many requests for one thing in too short a time; lifts after `retryAfterSeconds`. */
export class TooManyRequestsError extends DomainError {
  readonly kind = "too_many";
  constructor(message: string, retryAfterSeconds: number) {
    super(message, retryAfterSeconds);
  }
}

/** Something the answer depends on (the chain, the attestation service) cannot be reached right now. */
export class UnavailableError extends DomainError {
  readonly kind = "unavailable";
  constructor(message: string, retryAfterSeconds: number) {
    super(message, retryAfterSeconds);
  }
}

/**
 * The database did not answer in time or cannot be reached. Whatever the request was doing is
 * rolled back, unless the database had already committed it when it stopped answering: a
 * retried create carries its Idempotency-Key, so it finds that payment rather than making another.
 */
export class DatabaseUnavailableError extends UnavailableError {
  constructor(message: string) {
    super(`${message}; try again shortly`, 5);
  }
}

/** A configuration mistake: start-up prints its one-line message and stops. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

/** Workers: an error worth retrying later (network, RPC hiccup) rather than a permanent failure. */
export class RetryableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RetryableError";
  }
}
