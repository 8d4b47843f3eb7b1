import type { Logger } from "../lib/log.ts";
import { HttpError } from "../lib/errors.ts";

/**
 * The one place errors become HTTP responses: always `{"error": "..."}`. Client mistakes carry
 * their own message; anything unexpected is logged with its cause and answered as an opaque
 * 500, so no stack trace or SQL ever reaches a client.
 */
export function errorResponse(code: string | number, error: unknown, log: Logger, request?: Request): Response {
  if (error instanceof HttpError) return json(error.status, error.message, error.headers);
  // Elysia wraps whatever the parse hook throws; only a JSON syntax error is the client's fault
  // (the hook also authenticates merchant requests, see app.ts).
  if (code === "PARSE" && error instanceof Error && error.cause !== undefined && !(error.cause instanceof SyntaxError)) {
    return errorResponse("UNKNOWN", error.cause, log, request);
  }
  switch (code) {
    case "VALIDATION":
      return json(400, validationMessage(error));
    case "PARSE":
      return json(400, "request body must be valid JSON");
    case "NOT_FOUND":
      return json(404, "not found");
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return json(400, "bad request");
  }
  log.error("unhandled error", { error, code, path: request ? new URL(request.url).pathname : undefined });
  return json(500, "internal error");
}

function json(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: message }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

interface TypeBoxIssue {
  path?: string;
  message?: string;
  schema?: { error?: unknown };
  /** A union's failure (every optional field is Optional(Nullable(..))): each member's own issues. */
  errors?: Iterable<TypeBoxIssue>[];
}

/** The issues with those nested under union failures, where the field's own message lives. */
function withNested(issues: TypeBoxIssue[]): TypeBoxIssue[] {
  return issues.flatMap((issue) => [issue, ...withNested((issue.errors ?? []).flatMap((member) => [...member]))]);
}

/** The first schema failure, phrased with the field's own message when the schema gives one. */
function validationMessage(error: unknown): string {
  const issues = withNested((error as { all?: TypeBoxIssue[] }).all ?? []);
  const issue = issues.find((i) => typeof i.schema?.error === "string") ?? issues[0];
  if (!issue) return "invalid request";
  if (typeof issue.schema?.error === "string") return issue.schema.error;
  const field = (issue.path ?? "").replace(/^\//, "").replaceAll("/", ".");
  if (issue.message === "Unexpected property") return `unknown field ${field}`;
  return field ? `${field}: ${issue.message ?? "invalid"}` : (issue.message ?? "invalid request");
}
