/**
 * Hostile requests (test/support/hostile.ts: bad ids, keys, bodies, content types, junk queries,
 * chunked bodies) aimed at the documented operations: whatever the server answers must be an
 * answer the document declares for that operation, with its schema. Requests outside the
 * document are left to test/http/fuzz.test.ts: another method on a path, or a body sent to an
 * operation that documents none.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { createFuzzTarget, type FuzzTarget, hostileRequest, sendHostile } from "../support/hostile.ts";
import { type Contract, loadContract } from "../support/openapi-contract.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const RUNS = 400;

let server: TestServer;
let contract: Contract;
let target: FuzzTarget;

beforeAll(async () => {
  server = await startTestServer();
  contract = await loadContract(server.url);
  target = await createFuzzTarget(server);
});
afterAll(() => server.stop());

test("every answer to a hostile request for a documented operation is one the document declares", async () => {
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(hostileRequest(target), async (req) => {
      const op = contract.operationFor(req.method, req.path);
      if (!op || (req.body !== undefined && !op.operation.requestBody)) return;
      // Thousands of tiny chunks take seconds to send and try the body reader (test/http/fuzz.test.ts), not
      // the document: the same body goes in chunks of at least 4 KB.
      const chunkBytes = req.chunkBytes === undefined ? undefined : Math.max(req.chunkBytes, 4096);
      const res = await sendHostile(server.url, { ...req, chunkBytes });
      let json: unknown;
      try {
        json = JSON.parse(res.text);
      } catch {}
      const problems = contract.problemsWith(op.key, {
        status: res.status,
        headers: res.headers,
        json,
        text: res.text,
      });
      expect({ request: `${req.method} ${req.path}`, problems }).toEqual({
        request: `${req.method} ${req.path}`,
        problems: [],
      });
      checked++;
    }),
    { numRuns: RUNS },
  );
  // About a third of the generated requests name a documented operation (the rest are pages, other
  // methods, bodies where none is documented): the property was not vacuous.
  expect(checked).toBeGreaterThan(RUNS / 6);
}, 60_000);
