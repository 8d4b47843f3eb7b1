import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  createFuzzTarget,
  type FuzzTarget,
  hostileBody,
  hostileRequest,
  judge,
  sendHostile,
} from "../support/hostile.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let target: FuzzTarget;

beforeAll(async () => {
  server = await startTestServer();
  target = await createFuzzTarget(server);
});

afterAll(() => server.stop());

describe("hostile requests over every route (bench/fuzz.ts runs the same generators at length)", () => {
  test("no 5xx and no error body that is not JSON", async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest(target), async (req) => {
        const res = await sendHostile(server.url, req);
        const verdict = judge(req, res);
        expect({ status: res.status, body: res.text.slice(0, 200), ...verdict }).toMatchObject({
          serverError: false,
          nonJsonError: false,
        });
      }),
      { numRuns: 300 },
    );
  }, 60_000); // 300 requests, some of which wait out the unreachable chain's retries

  test("every hostile body on every body-taking route is a 4xx JSON error or a success", async () => {
    const routes = [
      { path: () => "/api/v1/payments", auth: true },
      { path: () => "/api/v1/webhook_endpoints", auth: true },
      { path: () => `/api/public/payments/${target.paymentId}/sync`, auth: false },
      { path: () => `/api/public/payments/${target.paymentId}/cross-chain`, auth: false },
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), hostileBody, fc.boolean(), async (route, body, chunked) => {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (route.auth) headers.authorization = `Bearer ${target.apiKey}`;
        const req = { method: "POST", path: route.path(), headers, body, chunkBytes: chunked ? 4096 : undefined };
        const res = await sendHostile(server.url, req);
        expect({ status: res.status, body: res.text.slice(0, 200), ...judge(req, res) }).toMatchObject({
          serverError: false,
          nonJsonError: false,
        });
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});
