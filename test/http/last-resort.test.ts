/**
 * The last resort: when the log line for an internal error cannot be written (stdout is gone),
 * the client still gets the opaque JSON 500, never Bun's HTML error page with its stack trace and
 * working directory, and the server's loops, which log too, go on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/log.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let attempts = 0;

beforeAll(async () => {
  const unwritable = createLogger("error", () => {
    attempts++;
    throw new Error(`log sink is gone (cwd ${process.cwd()})`);
  });
  server = await startTestServer({}, { log: unwritable });
});

afterAll(() => server.stop());

test('an internal error whose logging throws is still {"error":"internal error"} with status 500', async () => {
  const merchant = api(server.url, (await server.createAccount()).apiKey);
  await server.running.db.close();
  const res = await merchant("/api/v1/payments", { body: { amount: "1.00" } });
  expect(attempts).toBeGreaterThan(0);
  expect({ status: res.status, type: res.headers.get("content-type"), text: res.text }).toEqual({
    status: 500,
    type: "application/json",
    text: '{"error":"internal error"}',
  });
});
