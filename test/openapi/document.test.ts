/**
 * The document served at `GET /openapi.json`, against the server that serves it: valid OpenAPI
 * 3.1, every schema compiling with its `$ref`s resolved, exactly the API routes the server
 * registers, the bearer key on the merchant routes only, and a documented webhook, with the
 * Standard Webhooks headers, for every event type. Real answers are held to it in contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { OpenAPIV3_1 } from "openapi-types";
import { EVENT_TYPES } from "../../src/events/service.ts";
import { type Contract, loadContract } from "../support/openapi-contract.ts";
import { operationKey, pointerOf } from "../support/openapi-document.ts";
import { type ApiResponse, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let contract: Contract;

beforeAll(async () => {
  server = await startTestServer();
  contract = await loadContract(server.url);
});
afterAll(() => server.stop());

/** The routes the document must describe: the API and the operators' JSON endpoints, not pages and assets. */
const API_ROUTE = /^\/api\/(v1|public)\/|^\/(healthz|readyz|openapi\.json)$/;

describe("the document", () => {
  test("is valid OpenAPI 3.1 (checked against the specification's own schema)", async () => {
    const result = await new Validator().validate(structuredClone(contract.doc) as Record<string, unknown>);
    expect({ valid: result.valid, errors: result.errors ?? null }).toEqual({ valid: true, errors: null });
    expect(contract.doc.openapi).toStartWith("3.1.");
  });

  test("every component schema compiles as JSON Schema 2020-12, its $refs resolving in the document", () => {
    const names = Object.keys(contract.doc.components?.schemas ?? {});
    expect(names).toEqual(expect.arrayContaining(["Payment", "PaymentLink", "WebhookEndpoint", "Event", "Error"]));
    for (const name of names)
      expect(() => contract.validatorAt(pointerOf("components", "schemas", name))).not.toThrow();
  });

  test("describes exactly the API routes the server registers", () => {
    const registered = server.running.routes
      .filter((route) => API_ROUTE.test(route.path))
      .map((route) => operationKey(route.method, route.path))
      .sort();
    const documented = [...contract.operations.keys()].sort();
    expect({
      undocumented: registered.filter((r) => !documented.includes(r)),
      notServed: documented.filter((d) => !registered.includes(d)),
    }).toEqual({ undocumented: [], notServed: [] });
  });

  test("merchant operations require the bearer API key; public ones take none", () => {
    const scheme = contract.doc.components?.securitySchemes?.ApiKey as OpenAPIV3_1.HttpSecurityScheme;
    expect({ type: scheme?.type, scheme: scheme?.scheme }).toEqual({ type: "http", scheme: "bearer" });
    for (const { key, path, operation } of contract.operations.values()) {
      const merchant = path.startsWith("/api/v1/");
      expect({ key, security: operation.security }).toEqual({ key, security: merchant ? [{ ApiKey: [] }] : [] });
      if (merchant)
        expect({ key, declares401: "401" in (operation.responses ?? {}) }).toEqual({ key, declares401: true });
    }
  });

  test("operation ids are unique camelCase verbs", () => {
    const ids = [...contract.operations.values()].map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    // A verb first; digits only as a protocol's name has them (x402).
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
  });
});

describe("the documented webhooks", () => {
  test("one per event type the server sends, each signed with the Standard Webhooks headers", () => {
    expect(Object.keys(contract.doc.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const found = contract.webhookFor(type);
      const headers = (found?.operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
      const required = headers.filter((p) => p.in === "header" && p.required).map((p) => p.name);
      expect({ type, required }).toEqual({ type, required: ["webhook-id", "webhook-timestamp", "webhook-signature"] });
    }
  });

  test("each one's payload is the schema of its own kind of event, whose `type` names it", () => {
    const schemas = contract.doc.components?.schemas ?? {};
    for (const type of EVENT_TYPES) {
      const body = contract.webhookFor(type)?.operation.requestBody as OpenAPIV3_1.RequestBodyObject;
      const ref = (body.content["application/json"]!.schema as { $ref: string }).$ref;
      const payload = schemas[ref.replace("#/components/schemas/", "")] as OpenAPIV3_1.SchemaObject;
      const named = (payload.properties!.type as { enum?: string[] }).enum ?? [];
      expect({ type, payload: ref, names: named.includes(type) }).toEqual({ type, payload: ref, names: true });
    }
    const refund = contract.webhookFor("refund.payable")?.operation.requestBody as OpenAPIV3_1.RequestBodyObject;
    expect(refund.content["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/RefundEvent" });
  });

  test("authenticated by their signature, which each says, not by a security scheme", () => {
    for (const type of EVENT_TYPES) {
      const operation = contract.webhookFor(type)?.operation;
      expect({
        type,
        security: operation?.security,
        says: operation?.description?.includes("webhook-signature"),
      }).toEqual({ type, security: [], says: true });
    }
  });
});

describe("the answer checker (test/support/openapi-contract.ts) refuses what the document does not allow", () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return {
      status,
      headers: new Headers({ "content-type": "application/json", ...headers }),
      json: typeof body === "string" ? undefined : body,
      text,
    };
  };
  const problems = (op: string, res: ApiResponse) => contract.problemsWith(op, res).join("\n");

  test("a documented answer passes", () => {
    expect(problems("GET /healthz", answer(200, { ok: true }))).toBe("");
    expect(problems("GET /api/public/payments/{id}", answer(404, { error: "no such payment" }))).toBe("");
  });

  test("an undeclared status, another content type, a body off its schema", () => {
    expect(problems("GET /healthz", answer(418, { ok: true }))).toContain("does not declare");
    expect(problems("GET /healthz", answer(200, "<p>ok</p>", { "content-type": "text/html" }))).toContain(
      "content type text/html is not declared",
    );
    expect(problems("GET /healthz", answer(200, { ok: false }))).toContain("body does not match the schema");
    expect(problems("GET /api/v1/payments/{id}", answer(404, { error: "x", detail: "y" }))).toContain(
      "body does not match the schema",
    );
  });

  test("a 429 or 503 without Retry-After, or with one that is not a number of seconds", () => {
    const limited = "GET /api/public/payments/{id}";
    expect(problems(limited, answer(429, { error: "slow down" }))).toContain("required header Retry-After is missing");
    expect(problems(limited, answer(429, { error: "slow down" }, { "retry-after": "soon" }))).toContain(
      "header Retry-After",
    );
    expect(problems(limited, answer(429, { error: "slow down" }, { "retry-after": "3" }))).toBe("");
    const sync = "POST /api/public/payments/{id}/sync";
    expect(problems(sync, answer(503, { error: "down" }))).toContain("required header Retry-After is missing");
  });

  test("a webhook without its Standard Webhooks headers, or with a payload off its schema", () => {
    const event = {
      id: "evt_000000000000000000000000",
      object: "event",
      type: "test",
      created_at: "2026-01-01T00:00:00.000Z",
      data: { message: "hi" },
    };
    const headers = {
      "content-type": "application/json",
      "webhook-id": event.id,
      "webhook-timestamp": "1767225600",
      "webhook-signature": "v1,c2lnbmF0dXJl",
    };
    const hit = (body: unknown, h: Record<string, string>) => ({ headers: new Headers(h), body: JSON.stringify(body) });
    expect(contract.problemsWithWebhook(hit(event, headers))).toEqual([]);
    const { "webhook-signature": _, ...unsigned } = headers;
    expect(contract.problemsWithWebhook(hit(event, unsigned)).join()).toContain(
      "required header webhook-signature is missing",
    );
    expect(contract.problemsWithWebhook(hit({ ...event, type: "payment.lost" }, headers)).join()).toContain(
      "payment.lost is not in the document",
    );
    expect(contract.problemsWithWebhook(hit({ ...event, type: "payment.confirmed" }, headers)).join()).toContain(
      "body does not match the schema",
    );
  });
});
