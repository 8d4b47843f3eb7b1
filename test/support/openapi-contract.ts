/**
 * Checks real answers against the OpenAPI document the server serves (`GET /openapi.json`): the
 * status is declared for the operation, the content type is declared for that status, and the
 * body and declared headers validate against their schemas with a JSON Schema 2020-12 validator
 * (Ajv), `$ref`s resolved inside the served document. A request the server accepted must be one
 * the document allows. Every checked answer is counted per operation, with the parameters of the
 * accepted requests, so a test can say which declared statuses and parameters it exercised.
 *
 *   const contract = await loadContract(server.url);
 *   const res = await contract.call("GET /api/v1/payments/{id}", { params: { id }, key });
 *   expect(res.status).toBe(200);        // call() has already failed on an undocumented answer
 */
import type { OpenAPIV3_1 } from "openapi-types";
import {
  type Document,
  type DocumentedOperation,
  declaredStatuses,
  documentedOperations,
  documentSchemas,
  headerValue,
  type OperationKey,
  pointerOf,
} from "./openapi-document.ts";
import { type ApiResponse, api, rawApi, toApiResponse } from "./server.ts";

type Operation = OpenAPIV3_1.OperationObject;
type Response = OpenAPIV3_1.ResponseObject;
type Header = OpenAPIV3_1.HeaderObject;

/** Response headers a client acts on: when the server sends one, the answer must declare it. */
const MEANINGFUL_HEADERS = ["retry-after", "idempotent-replayed", "payment-required", "payment-response"];

export interface CallRequest {
  /** Values for the path's `{params}`. */
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** Objects are JSON-encoded; strings are sent as they are (malformed or oversized bodies). */
  body?: unknown;
  headers?: Record<string, string>;
  /** A bearer API key; omitted or null sends no Authorization header. */
  key?: string | null;
  /** The answer stays open (Server-Sent Events): read what has come with the headers, then leave. */
  streams?: boolean;
  /** Another server than the contract's (same document), for answers only a chain-less server gives. */
  baseUrl?: string;
}

export type Contract = Awaited<ReturnType<typeof loadContract>>;

/** Fetches the server's document and builds the checker for it. */
export async function loadContract(serverUrl: string) {
  const res = await api(serverUrl, null)("/openapi.json");
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return createContract(res.json as Document, serverUrl);
}

export function createContract(doc: Document, serverUrl: string) {
  const { validatorAt, resolve, schemaProblems, parametersOf } = documentSchemas(doc);
  const operations = new Map(documentedOperations(doc).map((op) => [op.key, op]));
  /** Statuses seen per operation, for the coverage report. */
  const exercised = new Map<OperationKey, Set<number>>();
  /** Parameters ("query limit", "header Idempotency-Key") sent per operation in requests the server accepted. */
  const acceptedParameters = new Map<OperationKey, Set<string>>();

  /** What is wrong with `answer` as an answer of `key` (empty when the document allows it). */
  function problemsWith(key: OperationKey, answer: ApiResponse): string[] {
    const op = operations.get(key);
    if (!op) return [`${key} is not in the document`];
    const declared = op.operation.responses?.[String(answer.status)];
    if (!declared)
      return [
        `${key} answered ${answer.status} (${answer.text.slice(0, 200)}), which it does not declare ` +
          `(declared: ${declaredStatuses(op.operation).join(", ")})`,
      ];
    const { value: response, pointer } = resolve<Response>(
      declared,
      `${op.pointer}${pointerOf("responses", String(answer.status))}`,
    );
    const problems: string[] = [];
    const where = `${key} ${answer.status}`;

    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const { value: h, pointer: hp } = resolve<Header>(header, `${pointer}${pointerOf("headers", name)}`);
      const text = answer.headers.get(name);
      if (text === null) {
        if (h.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      if (h.schema) {
        const why = schemaProblems(`${hp}/schema`, headerValue(text, h.schema as OpenAPIV3_1.SchemaObject));
        if (why) problems.push(`${where}: header ${name}: ${text}: ${why}`);
      }
    }

    const documented = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
    for (const name of MEANINGFUL_HEADERS)
      if (answer.headers.has(name) && !documented.has(name))
        problems.push(`${where}: sends ${name}, which the document does not declare for this answer`);

    const type = (answer.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (answer.text !== "")
        problems.push(`${where}: declares no body but answered ${type}: ${answer.text.slice(0, 200)}`);
      return problems;
    }
    const media = Object.keys(content).find((m) => m.toLowerCase() === type);
    if (!media) {
      problems.push(
        `${where}: content type ${type || "(none)"} is not declared (declared: ${Object.keys(content).join(", ")})`,
      );
      return problems;
    }
    if (!content[media]!.schema) return problems;
    const json = media === "application/json" || media.endsWith("+json");
    if (json && answer.json === undefined) {
      problems.push(`${where}: the body is not JSON: ${answer.text.slice(0, 200)}`);
      return problems;
    }
    const why = schemaProblems(`${pointer}${pointerOf("content", media, "schema")}`, json ? answer.json : answer.text);
    if (why) problems.push(`${where}: body does not match the schema: ${why} (body: ${answer.text.slice(0, 500)})`);
    return problems;
  }

  /** The documented webhook of an event type (`webhooks` keyed by the type), with its pointer. */
  function webhookFor(type: string): { operation: Operation; pointer: string } | null {
    const item = doc.webhooks?.[type];
    if (!item) return null;
    const { value, pointer } = resolve<OpenAPIV3_1.PathItemObject>(item, pointerOf("webhooks", type));
    return value.post ? { operation: value.post, pointer: `${pointer}/post` } : null;
  }

  /**
   * What is wrong with a webhook request the server sent, against the documented webhook of its
   * event type: the JSON body against the request body schema, and each documented header
   * (the Standard Webhooks ones) present when required and valid against its schema.
   */
  function problemsWithWebhook(hit: { headers: Headers; body: string }): string[] {
    let body: any;
    try {
      body = JSON.parse(hit.body);
    } catch {
      return [`a webhook body is not JSON: ${hit.body.slice(0, 200)}`];
    }
    const found = webhookFor(String(body?.type));
    if (!found) return [`the webhook of event type ${body?.type} is not in the document's webhooks`];
    const where = `webhook ${body.type}`;
    const problems: string[] = [];
    const { value: requestBody, pointer } = resolve<OpenAPIV3_1.RequestBodyObject>(
      found.operation.requestBody!,
      `${found.pointer}/requestBody`,
    );
    const type = (hit.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!requestBody?.content?.[type]) problems.push(`${where}: content type ${type} is not declared`);
    else {
      const why = schemaProblems(`${pointer}${pointerOf("content", type, "schema")}`, body);
      if (why) problems.push(`${where}: body does not match the schema: ${why}`);
    }
    for (const { value: p, pointer: pp } of parametersOf(found)) {
      if (p.in !== "header") continue;
      const text = hit.headers.get(p.name);
      if (text === null) {
        if (p.required) problems.push(`${where}: required header ${p.name} is missing`);
        continue;
      }
      const why = p.schema && schemaProblems(`${pp}/schema`, headerValue(text, p.schema as OpenAPIV3_1.SchemaObject));
      if (why) problems.push(`${where}: header ${p.name}: ${text}: ${why}`);
    }
    return problems;
  }

  /** Records and checks one real answer; throws, naming every disagreement, when the document does not allow it. */
  function check(key: OperationKey, answer: ApiResponse): ApiResponse {
    const problems = problemsWith(key, answer);
    if (problems.length) throw new Error(problems.join("\n"));
    let seen = exercised.get(key);
    if (!seen) exercised.set(key, (seen = new Set()));
    seen.add(answer.status);
    return answer;
  }

  /**
   * What the document says against a request the server accepted: its body, path and query
   * parameters and headers must be ones the document allows (so the request schemas are not stricter than the
   * server, nor missing what it takes).
   */
  function requestProblems(op: DocumentedOperation, req: CallRequest): string[] {
    const problems: string[] = [];
    const parameters = parametersOf(op);
    // Content-Type and Authorization are the document's request body and security, not parameters.
    const headers = Object.entries(req.headers ?? {}).filter(([name]) => !/^(content-type|authorization)$/i.test(name));
    const sent = [
      ...Object.entries(req.params ?? {}).map(([name, value]) => ["path", name, value] as const),
      ...Object.entries(req.query ?? {}).map(([name, value]) => ["query", name, value] as const),
      ...headers.map(([name, value]) => ["header", name, value] as const),
    ];
    for (const [where, name, value] of sent) {
      const found = parameters.find(
        (p) =>
          p.value.in === where &&
          (where === "header" ? p.value.name.toLowerCase() === name.toLowerCase() : p.value.name === name),
      );
      if (!found) problems.push(`${op.key}: accepted the ${where} parameter ${name}, which is not documented`);
      else if (found.value.schema) {
        const why = schemaProblems(
          `${found.pointer}/schema`,
          headerValue(value, found.value.schema as OpenAPIV3_1.SchemaObject),
        );
        if (why)
          problems.push(`${op.key}: accepted ${where} parameter ${name}=${value}, which its schema refuses: ${why}`);
      }
    }
    if (req.body !== undefined && typeof req.body !== "string") {
      if (!op.operation.requestBody) problems.push(`${op.key}: accepted a body, but documents none`);
      else {
        const { value, pointer } = resolve<OpenAPIV3_1.RequestBodyObject>(
          op.operation.requestBody,
          `${op.pointer}/requestBody`,
        );
        const why = value.content?.["application/json"]
          ? schemaProblems(`${pointer}${pointerOf("content", "application/json", "schema")}`, req.body)
          : "no application/json request body is documented";
        if (why)
          problems.push(`${op.key}: accepted the body ${JSON.stringify(req.body)}, which the document refuses: ${why}`);
      }
    }
    return problems;
  }

  /** Calls the operation `key` on the real server and checks the answer (see `check`). */
  async function call(key: OperationKey, req: CallRequest = {}): Promise<ApiResponse> {
    const op = operations.get(key);
    if (!op) throw new Error(`${key} is not in the document`);
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = req.params?.[name];
      if (value === undefined) throw new Error(`${key}: no value for {${name}}`);
      return encodeURIComponent(value);
    });
    const search = req.query ? `?${new URLSearchParams(req.query)}` : "";
    const res = await rawApi(req.baseUrl ?? serverUrl, req.key ?? null)(`${path}${search}`, {
      method: op.method.toUpperCase(),
      headers: req.headers,
      body: req.body,
    });
    let answer: ApiResponse;
    if (req.streams && res.ok) {
      // The stream never ends by itself: its first chunk (it opens by naming where it starts) stands for the body.
      const reader = res.body!.getReader();
      const first = await reader.read();
      await reader.cancel();
      const text = first.value ? new TextDecoder().decode(first.value) : "";
      answer = check(key, { status: res.status, headers: res.headers, json: undefined, text });
    } else answer = check(key, await toApiResponse(res));
    const problems = answer.status < 300 ? requestProblems(op, req) : [];
    if (problems.length) throw new Error(problems.join("\n"));
    if (answer.status < 300) {
      let names = acceptedParameters.get(key);
      if (!names) acceptedParameters.set(key, (names = new Set()));
      for (const name of Object.keys(req.params ?? {})) names.add(`path ${name}`);
      for (const name of Object.keys(req.query ?? {})) names.add(`query ${name}`);
      for (const name of Object.keys(req.headers ?? {})) names.add(`header ${name.toLowerCase()}`);
    }
    return answer;
  }

  return {
    doc,
    operations,
    check,
    problemsWith,
    problemsWithWebhook,
    webhookFor,
    /** The documented operation a concrete request names (`GET /api/v1/payments/0x..?limit=5`), if any. */
    operationFor(method: string, url: string): DocumentedOperation | null {
      const segments = url.split("?")[0]!.split("/");
      for (const op of operations.values()) {
        if (op.method !== method.toLowerCase()) continue;
        const template = op.path.split("/");
        const matches =
          template.length === segments.length &&
          template.every((part, i) => (part.startsWith("{") ? segments[i] !== "" : part === segments[i]));
        if (matches) return op;
      }
      return null;
    },
    /** What the document says against a request (see `requestProblems`), for requests the server refuses too. */
    requestProblems: (key: OperationKey, req: CallRequest) => {
      const op = operations.get(key);
      if (!op) throw new Error(`${key} is not in the document`);
      return requestProblems(op, req);
    },
    call,
    schemaProblems,
    validatorAt,
    /** Statuses each operation has answered so far through `check` or `call`. */
    exercised: (key: OperationKey): number[] => [...(exercised.get(key) ?? [])].sort((a, b) => a - b),
    /** The operation's documented parameters ("query limit") that no accepted request has sent yet. */
    parametersNotSent(key: OperationKey): string[] {
      const op = operations.get(key);
      if (!op) throw new Error(`${key} is not in the document`);
      const sent = acceptedParameters.get(key) ?? new Set();
      return parametersOf(op)
        .map(({ value }) => `${value.in} ${value.in === "header" ? value.name.toLowerCase() : value.name}`)
        .filter((name) => !sent.has(name));
    },
  };
}
