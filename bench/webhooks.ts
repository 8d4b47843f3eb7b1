/**
 * Webhook delivery throughput: the real server in this process (fresh data dir, real worker),
 * one account with one endpoint pointing at a local receiver that answers 200 and notes when
 * each webhook-id arrives. Events are written through the outbox as production writes them
 * (the event row and its queued delivery, in transactions), as fast as possible, then the run
 * waits until every one has arrived.
 *
 *   bun bench/webhooks.ts [--events 10000] [--batch 500] [--hanging 0] [--synchronous NORMAL]
 *
 * --hanging N adds a second endpoint of the same account whose receiver never answers, with N
 * test events queued for it before the run (and every event of the run too): the latency then
 * says how long a healthy endpoint waits behind a hanging one.
 *
 * --synchronous NORMAL is a diagnostic only: it turns off the fsync on each commit of the
 * server's connection (durability lost on power cut), to show how much of the time is disk.
 *
 * Prints deliveries/s, p50/p99 latency from the event's created_at to its arrival, and peak
 * RSS (of this process: server and receiver together). Loopback only; stops after 120 s
 * whatever happens.
 */
import { readFileSync, rmSync } from "node:fs";
import { runAccountCommand } from "../src/cli/accounts.ts";
import { loadConfig } from "../src/config.ts";
import { sql } from "../src/db/engine.ts";
import { createEventStore } from "../src/events/store.ts";
import { randomIds } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/log.ts";
import { startServer } from "../src/server.ts";
import { makeTempDir, TEST_PAYOUT, testEnv } from "../test/support/server.ts";
import { numberFlag, percentile } from "./lib.ts";

const EVENTS = numberFlag(process.argv, "events", 10_000);
const BATCH = numberFlag(process.argv, "batch", 500);
const HANGING = numberFlag(process.argv, "hanging", 0);
const LIMIT_MS = 120_000;
const syncFlag = process.argv.indexOf("--synchronous");
const SYNCHRONOUS = syncFlag < 0 ? null : (process.argv[syncFlag + 1] ?? "").toUpperCase();
if (SYNCHRONOUS !== null && !["NORMAL", "FULL"].includes(SYNCHRONOUS))
  throw new Error("--synchronous takes NORMAL or FULL");

const dataDir = makeTempDir("stablegate-bench-webhooks-");
process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));

/** Peak resident set of this process, from the kernel where it keeps one, else sampled. */
let sampledPeak = 0;
const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss)), 50);
function peakRssMb(): number {
  try {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (hwm) return Number(hwm[1]) / 1024;
  } catch {
    // not Linux
  }
  return Math.max(sampledPeak, process.memoryUsage().rss) / 1024 / 1024;
}

// The receiver: 200 to everything, arrival time per webhook-id (wall clock, as created_at is).
const arrivals = new Map<string, number>();
let requests = 0;
let allArrived: () => void = () => {};
/** Requests to /hang, held open until the run ends. */
const held: Array<() => void> = [];
const done = new Promise<void>((resolve) => (allArrived = resolve));
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const at = Date.now();
    if (new URL(req.url).pathname === "/hang")
      return new Promise<Response>((resolve) => held.push(() => resolve(new Response(null))));
    await req.arrayBuffer();
    requests++;
    const id = req.headers.get("webhook-id") ?? "";
    if (!arrivals.has(id)) arrivals.set(id, at);
    if (arrivals.size === EVENTS) allArrived();
    return new Response(null, { status: 200 });
  },
});

const env = { ...testEnv(dataDir), STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" };
const { account, api_key: apiKey } = (await runAccountCommand(
  "account",
  ["create", "--name", "Bench Shop", "--payout-address", TEST_PAYOUT],
  env,
)) as {
  account: { id: string };
  api_key: string;
};
const unlimited = { burst: 1_000_000, perSecond: 1_000_000 };
const server = await startServer(
  { ...loadConfig(env), port: 0 },
  { log: silentLogger, webhookLimits: { test: unlimited, retry: unlimited } },
);
if (SYNCHRONOUS) await server.db.exec(`PRAGMA synchronous = ${SYNCHRONOUS}`);

let timedOut = false;
const deadline = setTimeout(() => {
  timedOut = true;
  allArrived();
}, LIMIT_MS);

async function call(path: string, body?: unknown): Promise<any> {
  const res = await fetch(server.url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.text();
}

try {
  await call("/api/v1/webhook_endpoints", { url: `http://127.0.0.1:${receiver.port}/hook` });
  if (HANGING > 0) {
    const hanging = JSON.parse(
      await call("/api/v1/webhook_endpoints", { url: `http://127.0.0.1:${receiver.port}/hang` }),
    ).id as string;
    for (let i = 0; i < HANGING; i++) await call(`/api/v1/webhook_endpoints/${hanging}/test`, {});
    while (held.length === 0) await Bun.sleep(10);
  }
  // A real payment object, so each event is the size production sends (~1 KB).
  const paymentText: string = await call("/api/v1/payments", {
    amount: "25.00",
    description: "Order 1234: 2 items",
    reference: "order_1234",
    customer_email: "payer@example.com",
    metadata: { order_id: "1234", channel: "web" },
  });
  const paymentId = JSON.parse(paymentText).id as string;

  // The outbox exactly as lifecycle.emit writes it: the event and one queued delivery per live
  // endpoint, in the transaction. Batches yield to the event loop so the worker runs alongside.
  const events = createEventStore(server.db, randomIds);
  const insertBatch = (count: number) =>
    server.db.transaction(async () => {
      for (let i = 0; i < count; i++) {
        const id = randomIds.prefixed("evt");
        const now = Date.now();
        const payload = `{"id":${JSON.stringify(id)},"object":"event","type":"payment.underpaid","created_at":"${new Date(now).toISOString()}","data":{"payment":${paymentText}}}`;
        await events.insert({
          id,
          account_id: account.id,
          type: "payment.underpaid",
          payment_id: paymentId,
          payload,
          created_at: now,
        });
      }
    });

  const endpoints =
    HANGING > 0 ? `one endpoint and a hanging one (${HANGING} test events queued for it first)` : "one endpoint";
  console.log(
    `Stablegate webhook delivery benchmark: ${EVENTS} events, ${endpoints}, loopback receiver, batches of ${BATCH}`,
  );
  if (SYNCHRONOUS) console.log(`(diagnostic: PRAGMA synchronous = ${SYNCHRONOUS} on the server's connection)`);
  const started = Date.now();
  for (let written = 0; written < EVENTS; written += BATCH) {
    await insertBatch(Math.min(BATCH, EVENTS - written));
    await Bun.sleep(0);
  }
  const writtenMs = Date.now() - started;
  await done;
  const finished = Date.now();

  const created = new Map(
    (
      await server.db.all<{ id: string; created_at: number }>(
        sql`SELECT id, created_at FROM events WHERE account_id = ${account.id} AND type = 'payment.underpaid'`,
      )
    ).map((r) => [r.id, r.created_at]),
  );
  const latencies = [...arrivals]
    .filter(([id]) => created.has(id))
    .map(([id, at]) => at - created.get(id)!)
    .sort((a, b) => a - b);
  const delivered = latencies.length;
  const lastArrival = Math.max(...arrivals.values());
  const seconds = ((timedOut ? finished : lastArrival) - started) / 1000;
  // The last sends are recorded just after they arrive; give them a moment.
  const pendingNow = async () =>
    (await server.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'`))!.n;
  for (let i = 0; i < 100 && !timedOut && (await pendingNow()) > 0; i++) await Bun.sleep(20);
  const states = (
    await server.db.all<{ state: string; n: number }>(
      sql`SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY state`,
    )
  )
    .map((r) => `${r.state} ${r.n}`)
    .join(", ");

  console.log(
    `events written      ${EVENTS} in ${(writtenMs / 1000).toFixed(2)} s (${Math.round(EVENTS / (writtenMs / 1000))} events/s)`,
  );
  console.log(
    `delivered           ${delivered} of ${EVENTS} in ${seconds.toFixed(2)} s${timedOut ? ` (stopped at the ${LIMIT_MS / 1000} s limit)` : ""}`,
  );
  console.log(`deliveries/s        ${(delivered / seconds).toFixed(0)}`);
  console.log(`latency p50         ${percentile(latencies, 0.5)} ms (created_at to arrival)`);
  console.log(`latency p99         ${percentile(latencies, 0.99)} ms`);
  console.log(`latency max         ${latencies.at(-1)} ms`);
  console.log(`duplicates          ${requests - arrivals.size}`);
  console.log(`delivery states     ${states}`);
  console.log(`peak RSS            ${peakRssMb().toFixed(0)} MB (server and receiver, one process)`);
  process.exitCode = timedOut ? 1 : 0;
} finally {
  clearTimeout(deadline);
  clearInterval(sampler);
  for (const release of held) release();
  await server.stop();
  receiver.stop(true);
}
