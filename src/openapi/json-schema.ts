import type { TSchema } from "@sinclair/typebox";

/** A JSON Schema (2020-12, as OpenAPI 3.1 takes it) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * Keywords our TypeBox schemas carry for the server alone: `rule` and `keyRule` phrase a 400
 * (src/http/validate.ts), `error` is Elysia's message for a query or path parameter, and
 * `docAs` is how a parameter reads in the document when its wire text is checked by pattern.
 */
const SERVER_KEYWORDS = new Set(["rule", "keyRule", "error", "docAs", "$id"]);

/**
 * The schema as the document shows it: TypeBox's symbols and our own keywords dropped, a `rule`
 * kept as the field's description (it says what the field must be), and every nested schema
 * with an `$id` in `components` written as a reference to it.
 */
export function toJsonSchema(schema: TSchema, components: ReadonlySet<string>, root = true): JsonSchema {
  const id = (schema as { $id?: unknown }).$id;
  if (!root && typeof id === "string" && components.has(id)) return { $ref: `#/components/schemas/${id}` };
  const docAs = (schema as { docAs?: JsonSchema }).docAs;
  if (docAs) return { ...docAs };
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (SERVER_KEYWORDS.has(keyword) || typeof value === "function") continue;
    out[keyword] = convertValue(keyword, value, components);
  }
  const rule = (schema as { rule?: unknown }).rule;
  if (typeof rule === "string" && out.description === undefined)
    out.description = `${rule[0]!.toUpperCase()}${rule.slice(1)}.`;
  return out;
}

// Keywords whose value is a schema, a list of schemas or a map of them.
const ONE = new Set(["items", "not", "additionalProperties", "propertyNames", "contains"]);
const LIST = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const MAP = new Set(["properties", "patternProperties", "$defs"]);

function convertValue(keyword: string, value: unknown, components: ReadonlySet<string>): unknown {
  const convert = (item: unknown) =>
    typeof item === "object" && item !== null ? toJsonSchema(item as TSchema, components, false) : item;
  if (ONE.has(keyword)) return convert(value);
  if (LIST.has(keyword)) return (value as unknown[]).map(convert);
  if (MAP.has(keyword))
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, convert(v)]));
  return value;
}
