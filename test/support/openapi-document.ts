/**
 * The OpenAPI document as the contract test reads it: operations by key ("GET /api/v1/payments/{id}"),
 * JSON pointers into it, `$ref`s followed, and any schema in it compiled by Ajv as JSON Schema
 * 2020-12 with its `$ref`s resolved against the document itself.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenAPIV3_1 } from "openapi-types";

export type Document = OpenAPIV3_1.Document;
type Operation = OpenAPIV3_1.OperationObject;

/** The id the document is registered under in Ajv: `$ref`s such as `#/components/...` resolve against it. */
const DOC_ID = "https://stablegate.test/openapi.json";
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** "GET /api/v1/payments/{id}": an operation named as the document names it. */
export type OperationKey = string;

/** The document's name for a route Elysia registers as `/api/v1/payments/:id`. */
export const operationKey = (method: string, path: string): OperationKey =>
  `${method.toUpperCase()} ${path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}")}`;

export interface DocumentedOperation {
  key: OperationKey;
  method: (typeof METHODS)[number];
  path: string;
  operation: Operation;
  /** JSON pointer of the operation inside the document. */
  pointer: string;
}

/** A JSON pointer, escaped for use as a URI fragment. */
export const pointerOf = (...segments: string[]) =>
  segments.map((s) => `/${encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"))}`).join("");

export function documentedOperations(doc: Document): DocumentedOperation[] {
  const found: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation)
        found.push({
          key: operationKey(method, path),
          method,
          path,
          operation,
          pointer: pointerOf("paths", path, method),
        });
    }
  }
  return found;
}

/** The statuses an operation declares, as numbers ("default" or ranges such as "4XX" are not statuses). */
export const declaredStatuses = (operation: Operation): number[] =>
  Object.keys(operation.responses ?? {})
    .filter((s) => /^\d{3}$/.test(s))
    .map(Number)
    .sort((a, b) => a - b);

export type DocumentSchemas = ReturnType<typeof documentSchemas>;

/** The document's schemas, compiled on first use, and its `$ref`s followed. */
export function documentSchemas(doc: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc as object, DOC_ID);
  const validators = new Map<string, ValidateFunction>();

  /** A validator for the schema at `pointer` in the document (compiled once; unresolvable `$ref`s throw). */
  function validatorAt(pointer: string): ValidateFunction {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  }

  /** Follows a `$ref` to a component (a response or a header), with the pointer of where it lands. */
  function resolve<T>(value: T | OpenAPIV3_1.ReferenceObject, pointer: string): { value: T; pointer: string } {
    let current: unknown = value;
    let at = pointer;
    for (let hops = 0; hops < 10 && current && typeof current === "object" && "$ref" in current; hops++) {
      const ref = (current as OpenAPIV3_1.ReferenceObject).$ref;
      if (!ref.startsWith("#/")) throw new Error(`${at}: only local $refs are supported, not ${ref}`);
      at = ref.slice(1);
      current = at
        .split("/")
        .slice(1)
        .reduce<any>(
          (node, segment) => node?.[decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~")],
          doc,
        );
      if (current === undefined) throw new Error(`${pointer}: $ref ${ref} names nothing in the document`);
    }
    return { value: current as T, pointer: at };
  }

  const describe = (errors: ErrorObject[] | null | undefined) =>
    (errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message} ${JSON.stringify(e.params)}`).join("; ");

  /** Whether `value` validates against the schema at `pointer`; the reasons when it does not. */
  function schemaProblems(pointer: string, value: unknown): string | null {
    const validate = validatorAt(pointer);
    return validate(value) ? null : describe(validate.errors);
  }

  /** An operation's parameters, each resolved, with the pointer of its schema's parent. */
  const parametersOf = (op: Pick<DocumentedOperation, "operation" | "pointer">) =>
    (op.operation.parameters ?? []).map((parameter, i) =>
      resolve<OpenAPIV3_1.ParameterObject>(parameter, `${op.pointer}${pointerOf("parameters", String(i))}`),
    );

  return { validatorAt, resolve, schemaProblems, parametersOf };
}

/** A header's or parameter's text as its schema types it (Retry-After is an integer on the wire as text). */
export function headerValue(text: string, schema: OpenAPIV3_1.SchemaObject | undefined): unknown {
  const type = schema?.type;
  const numeric = type === "integer" || type === "number" || (Array.isArray(type) && type.includes("integer"));
  return numeric && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}
