/**
 * Deliveries survive a crash: the server runs as `bun src/main.ts serve` in a subprocess, its
 * first attempts get 500, it is killed with SIGKILL, the receiver recovers, and the restarted
 * server delivers every event, under the webhook-id it had before the crash. The default
 * schedule is in force here, so the retry comes about 5 s after the first attempt.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { type ApiRequest, api, makeTempDir, TEST_PAYOUT, testEnv } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

const TEST_EVENTS = 5;
const PAYMENTS = 2;

interface Hit {
  id: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

let dataDir: string;
let env: Record<string, string>;
let receiver: ReturnType<typeof Bun.serve>;
let answer = 500;
const hits: Hit[] = [];
let child: ServeProcess["proc"] | null = null;
let url = "";

beforeAll(() => {
  dataDir = makeTempDir("stablegate-restart-");
  env = { ...testEnv(dataDir), STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on", STABLEGATE_PAYMENT_WINDOW: "1s" };
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const headers = Object.fromEntries(req.headers.entries());
      const status = answer;
      hits.push({ id: headers["webhook-id"] ?? "", status, headers, body: await req.text() });
      return new Response(null, { status });
    },
  });
});

afterAll(async () => {
  if (child) {
    child.kill("SIGKILL");
    await child.exited;
  }
  receiver?.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServe(): Promise<void> {
  const started = await startServeProcess(env);
  child = started.proc;
  url = started.url;
}

test("events whose first attempt failed are delivered after kill -9 and a restart, with the same webhook-id", async () => {
  const { api_key: key } = (await runAccountCommand(
    "account",
    ["create", "--name", "Crashy Shop", "--payout-address", TEST_PAYOUT],
    env,
  )) as { api_key: string };
  // The server's address changes with the restart: each call goes to where it listens now.
  const call = (path: string, req?: ApiRequest) => api(url, key)(path, req);

  await startServe();
  const endpoint = await call("/api/v1/webhook_endpoints", { body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
  expect(endpoint.status).toBe(201);
  const { id: endpointId, secret } = endpoint.json;

  // Test events, and payment events from the expiry loop, all answered 500 at first.
  const eventIds = new Set<string>();
  for (let i = 0; i < TEST_EVENTS; i++) {
    const sent = await call(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" });
    expect(sent.status).toBe(202);
    eventIds.add(sent.json.event_id);
  }
  for (let i = 0; i < PAYMENTS; i++)
    expect((await call("/api/v1/payments", { body: { amount: "2.00" } })).status).toBe(201);
  const listed = await waitFor(
    async () => {
      const list = (await call(`/api/v1/webhook_endpoints/${endpointId}/deliveries?limit=100`)).json.data as any[];
      return list.length === TEST_EVENTS + PAYMENTS &&
        list.every((d) => d.status === "pending" && d.attempt_count === 1)
        ? list
        : undefined;
    },
    10_000,
    "every first attempt to fail and be recorded",
  );
  for (const d of listed) eventIds.add(d.event_id);
  expect(eventIds.size).toBe(TEST_EVENTS + PAYMENTS);
  expect(listed.filter((d) => d.event_type === "payment.expired")).toHaveLength(PAYMENTS);
  const beforeCrash = hits.slice();
  expect(beforeCrash.every((h) => h.status === 500)).toBe(true);
  expect(new Set(beforeCrash.map((h) => h.id))).toEqual(eventIds);

  const running = child!;
  running.kill("SIGKILL");
  await running.exited;
  expect(running.signalCode).toBe("SIGKILL");
  child = null;
  answer = 200;

  await startServe();
  const delivered = () => new Set(hits.filter((h) => h.status === 200).map((h) => h.id));
  await waitFor(() => delivered().size === eventIds.size, 20_000, "every event to be delivered after the restart");
  expect(delivered()).toEqual(eventIds);

  for (const id of eventIds) {
    const forEvent = hits.filter((h) => h.id === id);
    // The 500 before the crash, the 200 after it; same event, same body.
    expect(forEvent.map((h) => h.status)).toEqual([500, 200]);
    expect(forEvent[1]!.body).toBe(forEvent[0]!.body);
    expect(JSON.parse(forEvent[1]!.body).id).toBe(id);
    for (const hit of forEvent) expect(() => new Webhook(secret).verify(hit.body, hit.headers)).not.toThrow();
  }
  // The receiver has its 200 a moment before the server records the attempt: wait for the records.
  const after = await waitFor(
    async () => {
      const list = (await call(`/api/v1/webhook_endpoints/${endpointId}/deliveries?limit=100`)).json.data as any[];
      return list.every((d) => d.status !== "pending") ? list : undefined;
    },
    10_000,
    "every delivery's second attempt to be recorded",
  );
  expect(after).toHaveLength(eventIds.size);
  for (const d of after) {
    expect(d).toMatchObject({ status: "succeeded", attempt_count: 2 });
    expect(d.attempts.map((a: { response_status: number }) => a.response_status)).toEqual([200, 500]);
  }
  // Nothing is sent twice once it has succeeded: one more event goes through the worker, and
  // only it arrives (a succeeded delivery sent again would have been due before it).
  const marker = await call(`/api/v1/webhook_endpoints/${endpointId}/test`, { method: "POST" });
  expect(marker.status).toBe(202);
  await waitFor(() => hits.some((h) => h.id === marker.json.event_id && h.status === 200), 10_000, "the marker event");
  expect(hits.filter((h) => !eventIds.has(h.id)).map((h) => h.id)).toEqual([marker.json.event_id]);
  expect(hits).toHaveLength(2 * eventIds.size + 1);
}, 60_000);
