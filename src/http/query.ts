import { type StaticDecode, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { isoMillis } from "../lib/clock.ts";
import { ValidationError } from "../lib/errors.ts";
import { parseIsoInstant } from "../lib/iso-time.ts";

/**
 * Query parameters (the lists', the QR code's format) as TypeBox schemas the routes hand to
 * Elysia's `query` option. Each carries the message a client sees (`error`: it names the parameter and the rule);
 * Transforms turn the text into the value the services take, so no service parses a query string.
 * Parameters no schema names are ignored, as they always were.
 */

/** `limit`: 1..100, default 10, as Stripe-style lists take it. */
export const DEFAULT_LIMIT = 10;
const limit = Type.Transform(
  Type.String({
    pattern: "^(100|[1-9][0-9]?)$",
    error: "limit must be a whole number from 1 to 100",
    // The wire text is checked by pattern; the document says what it means (src/openapi/).
    docAs: { type: "integer", minimum: 1, maximum: 100, default: DEFAULT_LIMIT },
  }),
)
  .Decode(Number)
  .Encode(String);

/**
 * An ISO 8601 date (the start of that day, UTC) or date-time with a time zone, as epoch
 * milliseconds; `name` is the parameter. The strict parser refuses dates that do not exist
 * (2031-02-30), which Date.parse would roll over into March.
 */
export function instantParam(name: string) {
  const rule = `${name} must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T12:00:00Z`;
  return Type.Transform(Type.String({ error: rule }))
    .Decode((text) => {
      const ms = parseIsoInstant(text);
      if (Number.isNaN(ms)) throw new ValidationError(rule);
      return ms;
    })
    .Encode((ms) => isoMillis(ms));
}

/** One of `values`, exactly; `name` is the parameter. */
export function oneOfParam<T extends string>(name: string, values: readonly T[]) {
  const escaped = values.map((value) => value.replaceAll(".", "\\."));
  return Type.Unsafe<T>(
    // `enum` is for the OpenAPI document; the pattern is what Elysia checks, with the message.
    Type.String({
      pattern: `^(${escaped.join("|")})$`,
      enum: [...values],
      error: `${name} must be one of ${values.join(", ")}`,
    }),
  );
}

/**
 * The query of a list: `limit` and `starting_after` (an id from the previous page, `cursor`
 * giving its shape) plus the list's own filters. Elysia validates and decodes it before the
 * handler runs; a bad value is a 400 naming the parameter.
 */
export function listQuery<T extends TProperties>(cursor: { pattern: string; what: string }, filters: T) {
  return Type.Object(
    {
      limit: Type.Optional(limit),
      starting_after: Type.Optional(
        Type.String({ pattern: cursor.pattern, error: `starting_after must be the id of ${cursor.what}` }),
      ),
      ...filters,
    },
    { additionalProperties: true },
  );
}

/**
 * The query as Elysia hands it over: decoded through the schema's Transforms (numbers, epoch
 * milliseconds), though Elysia's types still describe the text. This names the decoded type.
 */
export function decoded<T extends TSchema>(_schema: T, query: unknown): StaticDecode<T> {
  return query as StaticDecode<T>;
}
