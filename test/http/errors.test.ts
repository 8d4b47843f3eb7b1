/**
 * The one mapping from the kinds of error services throw to HTTP: each kind keeps the status,
 * body and Retry-After the API has always answered with.
 */
import { expect, test } from "bun:test";
import { errorResponse } from "../../src/http/errors.ts";
import {
  AuthError,
  ConflictError,
  type DomainError,
  NotFoundError,
  TooLargeError,
  TooManyRequestsError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from "../../src/lib/errors.ts";
import { createLogger } from "../../src/lib/log.ts";

async function answer(error: unknown, logged: string[] = []) {
  const res = errorResponse(
    "UNKNOWN",
    error,
    createLogger("debug", (line) => logged.push(line)),
  );
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    retryAfter: res.headers.get("retry-after"),
    text: await res.text(),
  };
}

const KINDS: [DomainError, number, string | null][] = [
  [new ValidationError("amount must be positive"), 400, null],
  [new AuthError(), 401, null],
  [new NotFoundError(), 404, null],
  [new ConflictError("a request with this key is in progress"), 409, null],
  [new TooLargeError("request body is larger than 256 KB"), 413, null],
  [new UnprocessableError("transaction reverted"), 422, null],
  [new TooManyRequestsError("too many requests", 3), 429, "3"],
  [new UnavailableError("the chain cannot be reached right now; try again shortly", 5), 503, "5"],
];

test.each(KINDS.map(([error, status, retryAfter]) => [error.name, status, retryAfter, error] as const))(
  "%s: status %p, Retry-After %p, its own message",
  async (_name, status, retryAfter, error) => {
    const logged: string[] = [];
    expect(await answer(error, logged)).toEqual({
      status,
      type: "application/json",
      retryAfter,
      text: JSON.stringify({ error: error.message }),
    });
    expect(logged).toEqual([]);
  },
);

test("anything else is the opaque 500, logged with its cause", async () => {
  const logged: string[] = [];
  expect(await answer(new Error("SQLITE_CORRUPT at /var/lib/stablegate"), logged)).toEqual({
    status: 500,
    type: "application/json",
    retryAfter: null,
    text: '{"error":"internal error"}',
  });
  expect(logged.join("")).toContain("SQLITE_CORRUPT");
});
