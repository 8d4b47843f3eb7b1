import type { TObject, TSchema } from "@sinclair/typebox";
import type { OpenAPIV3_1 } from "openapi-types";
import pkg from "../../package.json" with { type: "json" };
import { COMPONENTS } from "./components.ts";
import { DOCUMENT_OPERATIONS } from "./document-operations.ts";
import { type JsonSchema, toJsonSchema } from "./json-schema.ts";
import { MERCHANT_OPERATIONS } from "./merchant-operations.ts";
import { type ErrorStatus, type Operation, TAGS } from "./operation.ts";
import { PUBLIC_OPERATIONS } from "./public-operations.ts";
import { REFUND_OPERATIONS } from "./refund-operations.ts";
import { WEBHOOKS } from "./webhooks.ts";
import { X402_OPERATIONS } from "./x402-operations.ts";

/** Every operation the document describes; the contract test holds it to the server's routes. */
export const OPERATIONS: readonly Operation[] = [
  ...MERCHANT_OPERATIONS,
  ...REFUND_OPERATIONS,
  ...DOCUMENT_OPERATIONS,
  ...PUBLIC_OPERATIONS,
  ...X402_OPERATIONS,
];

/**
 * Answers any request can get, whatever its route and method: a body over the limit, refused on its
 * Content-Length before routing (src/app.ts), and the opaque 500.
 */
const ANY_REQUEST = [413, 500] as const;

const ERRORS: Record<
  ErrorStatus | (typeof ANY_REQUEST)[number],
  { name: string; description: string; retryAfter?: boolean }
> = {
  400: { name: "BadRequest", description: "The request is invalid: the message names the field and the rule." },
  401: {
    name: "Unauthorized",
    description: "Missing, malformed, unknown or revoked API key (on /readyz: a bearer that is not the metrics token).",
  },
  404: {
    name: "NotFound",
    description: "No such object: unknown, another account's, or a malformed id (all answered alike).",
  },
  409: {
    name: "Conflict",
    description:
      "A request with the same Idempotency-Key is still being processed, or the object's state refuses the " +
      "request (a refund already paid, being paid or canceled cannot be canceled).",
  },
  413: { name: "PayloadTooLarge", description: "The request body is larger than 256 KB." },
  422: {
    name: "Unprocessable",
    description: "The Idempotency-Key was used with a different request, or the request cannot be carried out.",
  },
  429: {
    name: "TooManyRequests",
    description: "Too many requests; `Retry-After` says when to try again.",
    retryAfter: true,
  },
  503: {
    name: "Unavailable",
    description: "A chain or Circle's attestation service cannot be reached right now; `Retry-After` is set.",
    retryAfter: true,
  },
  500: { name: "InternalError", description: 'Unexpected error: `{"error":"internal error"}`, details in the log.' },
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: JsonSchema) => ({ "application/json": { schema } });

/**
 * The OpenAPI 3.1 document of the API, built from the schemas the routes validate with and the
 * objects they answer (src/openapi/*-objects.ts). `baseUrl` is the server's public address.
 */
export function openApiDocument(baseUrl: string): OpenAPIV3_1.Document {
  const names = new Set(COMPONENTS.map((schema) => schema.$id as string));
  const schema = (s: TSchema) => toJsonSchema(s, names, false);
  const schemas: Record<string, JsonSchema> = {};
  for (const component of COMPONENTS) schemas[component.$id as string] = toJsonSchema(component, names);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    if (op.body) schemas[op.body.name] = toJsonSchema(op.body.schema, names);
    const path = op.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [op.method]: operationObject(op, schema) };
  }
  const responses = Object.fromEntries(
    Object.values(ERRORS).map(({ name, description, retryAfter }) => [
      name,
      {
        description,
        ...(retryAfter ? { headers: { "Retry-After": ref("headers", "RetryAfter") } } : {}),
        content: json(ref("schemas", "Error")),
      },
    ]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Stablegate API",
      version: pkg.version,
      description:
        "Accept USDC with a self-hosted server: create payments, follow them through their statuses, " +
        "receive signed webhooks. Amounts are decimal strings in USDC; ids are opaque strings.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: baseUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: paths as OpenAPIV3_1.PathsObject,
    webhooks: WEBHOOKS as OpenAPIV3_1.Document["webhooks"],
    components: {
      schemas: schemas as Record<string, OpenAPIV3_1.SchemaObject>,
      responses,
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Makes a retry safe: the same key with the same body answers the first response again " +
            "(`Idempotent-Replayed: true`), with another body 422, while the first is running 409. Kept 24 hours.",
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
        },
      },
      headers: {
        // Every 429 and 503 error carries it (src/http/errors.ts), so a client may rely on it.
        RetryAfter: {
          description: "Seconds to wait before trying again.",
          required: true,
          schema: { type: "integer", minimum: 0 },
        },
        IdempotentReplayed: {
          description: "`true` when the answer is the stored response of an earlier request with the same key.",
          schema: { type: "string", enum: ["true"] },
        },
      },
      securitySchemes: {
        ApiKey: {
          type: "http",
          scheme: "bearer",
          description: "An API key (`sk_live_...`) from `stablegate account create` or the dashboard.",
        },
      },
    },
  };
}

function operationObject(op: Operation, schema: (s: TSchema) => JsonSchema) {
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(op.responses)) {
    const named = (answer.headers ?? []).map((h) => [
      h.name,
      { description: h.description, schema: { type: "string" } },
    ]);
    const all = {
      ...(answer.replayable ? { "Idempotent-Replayed": ref("headers", "IdempotentReplayed") } : {}),
      ...Object.fromEntries(named),
    };
    const headers = Object.keys(all).length > 0 ? all : undefined;
    const content = answer.schema
      ? json(schema(answer.schema))
      : { [answer.mediaType ?? "application/json"]: { schema: { type: "string" } } };
    responses[status] = { description: answer.description, ...(headers ? { headers } : {}), content };
  }
  for (const status of [...(op.auth ? [401 as const] : []), ...op.errors, ...ANY_REQUEST].sort()) {
    responses[String(status)] = ref("responses", ERRORS[status].name);
  }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: op.auth ? [{ ApiKey: [] }] : [],
    parameters: [
      ...parametersOf(op.params, "path", schema),
      ...parametersOf(op.query, "query", schema),
      ...(op.headers ?? []).map((h) => ({
        name: h.name,
        in: "header",
        description: h.description,
        schema: schema(h.schema),
      })),
      ...(op.idempotent ? [ref("parameters", "IdempotencyKey")] : []),
    ],
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref("schemas", op.body.name), example: op.body.example } },
          },
        }
      : {}),
    responses,
  };
}

/** A route's path or query schema as parameters, each described by its own error text (its rule). */
function parametersOf(object: TObject | undefined, where: "path" | "query", schema: (s: TSchema) => JsonSchema) {
  if (!object) return [];
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties).map(([name, property]) => {
    // "limit must be a whole number from 1 to 100" describes `limit` as "Must be a whole number from 1 to 100."
    const error = (property as { error?: unknown }).error;
    const rule = typeof error === "string" && error.startsWith(`${name} `) ? error.slice(name.length + 1) : null;
    return {
      name,
      in: where,
      required: where === "path" || required.has(name),
      ...(rule ? { description: `${rule[0]!.toUpperCase()}${rule.slice(1)}.` } : {}),
      schema: schema(property),
    };
  });
}
