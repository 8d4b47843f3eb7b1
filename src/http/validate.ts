/**
 * Request bodies are checked here against their TypeBox schema, not by Elysia: Elysia's error
 * summaries interpolate the offending value into a string, which throws on an object with a
 * `toString` key and overflows the stack on deep nesting. Each schema carries its `rule`; the
 * message is "<field> <rule>", so it names the field and never echoes the value.
 */
import { Kind, OptionalKind, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { ValidationError } from "../lib/errors.ts";

/** Compiles `schema` once; the returned function gives the typed body or throws a 400. */
export function bodyValidator<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (body) => {
    if (compiled.Check(body)) return body;
    throw new ValidationError(explain(schema, body, "") ?? "request body is invalid");
  };
}

type Schema = TSchema & { rule?: string; keyRule?: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** "<path> <rule>", with a fallback rule for schemas that state none. */
const broken = (schema: Schema, path: string, fallback: string) =>
  `${path || "request body"} ${schema.rule ?? fallback}`;

/** The first rule `value` breaks, phrased for the client; null when it breaks none. */
function explain(schema: Schema, value: unknown, path: string): string | null {
  switch (schema[Kind]) {
    case "Union": {
      // Request schemas only use Nullable(X): null counts as absent, anything else must be X.
      if (value === null) return null;
      return explain((schema.anyOf as Schema[]).find((s) => s[Kind] !== "Null")!, value, path);
    }
    case "Object": {
      if (!isPlainObject(value)) return broken(schema, path, "must be a JSON object");
      const properties = schema.properties as Record<string, Schema>;
      for (const key of Object.keys(value))
        if (!Object.hasOwn(properties, key)) return `unknown field ${join(path, key)}`;
      for (const [key, field] of Object.entries(properties)) {
        if (!Object.hasOwn(value, key)) {
          if (field[OptionalKind] === "Optional") continue;
          return `${join(path, key)} is required (it ${field.rule ?? "has no default"})`;
        }
        const problem = explain(field, value[key], join(path, key));
        if (problem) return problem;
      }
      return null;
    }
    case "Array": {
      if (
        !Array.isArray(value) ||
        value.length < (schema.minItems ?? 0) ||
        value.length > (schema.maxItems ?? Infinity)
      ) {
        return broken(schema, path, "must be a list");
      }
      for (const [i, item] of value.entries()) {
        const problem = explain(schema.items as Schema, item, `${path}[${i}]`);
        if (problem) return problem;
      }
      return null;
    }
    case "Record": {
      const entries = isPlainObject(value) ? Object.entries(value) : null;
      if (!entries || entries.length > (schema.maxProperties ?? Infinity))
        return broken(schema, path, "must be an object");
      const [pattern, values] = Object.entries(schema.patternProperties as Record<string, Schema>)[0]!;
      const keyRule = new RegExp(pattern);
      for (const [key, item] of entries) {
        if (!keyRule.test(key)) return `${path} keys ${schema.keyRule ?? "are invalid"}`;
        const problem = explain(values, item, `${path}.${key}`);
        if (problem) return problem;
      }
      return null;
    }
    default:
      return Value.Check(schema, value) ? null : broken(schema, path, "is invalid");
  }
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
