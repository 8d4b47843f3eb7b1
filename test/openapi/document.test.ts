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
import { type Contract, loadContract, operationKey, pointerOf } from "../support/openapi-contract.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

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
    expect({ undocumented: registered.filter((r) => !documented.includes(r)) }).toEqual({ undocumented: [] });
    expect({ notServed: documented.filter((d) => !registered.includes(d)) }).toEqual({ notServed: [] });
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
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Za-z]*$/);
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
});
