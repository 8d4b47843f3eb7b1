/**
 * SIGTERM must finish inside Docker's 10 s grace period even when a webhook receiver hangs
 * (a send may take up to 15 s). The server abandons the hanging send without recording an
 * attempt, exits cleanly, and the delivery is due again at once after restart. The bound on
 * the whole shutdown is SHUTDOWN_DEADLINE_MS in src/server.ts; this tests the behaviour.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { api, makeTempDir, testEnv } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

let dataDir: string;
let env: Record<string, string>;
let receiver: ReturnType<typeof Bun.serve>;
const hits: string[] = []; // webhook-id of each request, in arrival order
let hang = true;
let releaseHung: () => void = () => {};
const hung = new Promise<void>((resolve) => (releaseHung = resolve));
let server: ServeProcess | null = null;

beforeAll(() => {
  dataDir = makeTempDir("stablegate-shutdown-");
  env = { ...testEnv(dataDir), STABLEGATE_HOST: "127.0.0.1", STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" };
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      hits.push(req.headers.get("webhook-id") ?? "");
      if (hang) await hung; // never answers until the test ends
      return new Response(null, { status: 200 });
    },
  });
});

afterAll(async () => {
  await server?.stop();
  releaseHung();
  receiver.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

function deliveries(): Array<{ state: string; attempts: number; next_attempt_at: number | null }> {
  const db = new Database(join(dataDir, "stablegate.db"), { readonly: true });
  try {
    return db
      .query<{ state: string; attempts: number; next_attempt_at: number | null }, []>(
        "SELECT state, attempts, next_attempt_at FROM webhook_deliveries",
      )
      .all();
  } finally {
    db.close();
  }
}

test("SIGTERM with a send hanging: clean exit, nothing recorded, and the restarted server delivers it", async () => {
  const { api_key } = (await runAccountCommand(
    "account",
    ["create", "--name", "Shutdown Shop", "--payout-address", "0x1111111111111111111111111111111111111111"],
    env,
  )) as { api_key: string };
  server = spawnServe({ ...env, STABLEGATE_PORT: String(await freePort()) });
  await server.listening();
  const call = api(server.url, api_key);
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
  expect(endpoint.status).toBe(201);
  expect((await call(`/api/v1/webhook_endpoints/${endpoint.json.id}/test`, { method: "POST" })).status).toBe(202);
  await waitFor(() => hits.length === 1, 15_000, "the send to reach the hanging receiver");

  server.proc.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  expect(server.proc.signalCode).toBeNull();
  // Abandoned, not failed: no attempt counted, due now rather than on the retry schedule.
  const [abandoned] = deliveries();
  expect(abandoned).toMatchObject({ state: "pending", attempts: 0 });
  expect(abandoned!.next_attempt_at).toBeLessThanOrEqual(Date.now());

  hang = false;
  server = spawnServe({ ...env, STABLEGATE_PORT: String(await freePort()) });
  await server.listening();
  await waitFor(() => deliveries()[0]?.state === "succeeded", 15_000, "the redelivery to succeed");
  expect(hits).toHaveLength(2);
  expect(hits[1]).toBe(hits[0]!); // the same webhook-id: receivers de-duplicate on it
  expect(deliveries()[0]!.attempts).toBe(1);
});
