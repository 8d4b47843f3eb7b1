/**
 * PostgreSQL stalls under load: two `serve` replicas share one PostgreSQL database while clients
 * create and retrieve payments; PostgreSQL (its postmaster and every backend) is stopped with
 * SIGSTOP for `--stall` seconds, then continued. Meanwhile each replica's /healthz and the
 * checkout's static asset (/checkout.js) are probed every 100 ms, as a load balancer would.
 *
 *   bun run build && bun bench/pg-stall.ts [--binary dist/stablegate] [--stall 10] [--clients 16]
 *
 * It prints the probes' latency before, during and after the stall, what the requests that
 * needed the database answered while it stalled (2xx, 503, other, or nothing within the
 * client's 30 s), and then checks that nothing accepted was lost: every payment a create
 * answered 2xx for is there, and a create retried with its Idempotency-Key after a 503 finds
 * the payment or makes it once. `--binary` runs an older build for a before-and-after.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SQL, type Subprocess } from "bun";
import { freePort } from "../src/lib/free-port.ts";
import { createTestDatabase } from "../test/support/postgres.ts";
import { numberFlag, percentile, spawnChild, stopChild, waitForHttp } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = resolve(flag("binary") ?? join(ROOT, "dist/stablegate"));
const STALL_S = numberFlag(process.argv, "stall", 10);
const CLIENTS = numberFlag(process.argv, "clients", 16);
const REPLICAS = 2;
const CLIENT_TIMEOUT_MS = 30_000;
const PAYOUT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

setTimeout(
  () => {
    console.error("bench: time limit reached; stopping");
    process.exit(1);
  },
  (STALL_S + 120) * 1000,
).unref();

type Phase = "before" | "stall" | "after";
interface Probe {
  replica: number;
  what: "healthz" | "asset";
  sent: number;
  answered: number;
  ms: number;
  ok: boolean;
}
interface Request {
  kind: "create" | "retrieve";
  /** When it was sent and answered, in performance.now() time. */
  sent: number;
  answered: number;
  ms: number;
  status: number | "timeout" | "error";
  key?: string;
  id?: string;
}

const dataDir = mkdtempSync(join(tmpdir(), "stablegate-stall-"));
process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));

const url = await createTestDatabase("durable");
const postmaster = await postmasterOf(url);
const env: Record<string, string | undefined> = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  STABLEGATE_DATABASE_URL: url,
  STABLEGATE_CHAIN: "custom",
  STABLEGATE_CHAIN_ID: "31337",
  STABLEGATE_USDC_ADDRESS: TOKEN,
  STABLEGATE_RPC_URL: "http://127.0.0.1:9",
  STABLEGATE_LOG_LEVEL: "warn",
};
const created = Bun.spawnSync([BINARY, "account", "create", "--name", "Stall", "--payout-address", PAYOUT], {
  env: { ...env, STABLEGATE_DATA_DIR: join(dataDir, "cli") },
});
if (created.exitCode !== 0) throw new Error(`account create failed: ${created.stderr.toString()}`);
const apiKey = (JSON.parse(created.stdout.toString()) as { api_key: string }).api_key;

const servers: Subprocess[] = [];
mkdirSync(join(dataDir, "logs"));
const bases: string[] = [];
for (let i = 0; i < REPLICAS; i++) {
  const port = await freePort();
  const dir = join(dataDir, `replica-${i}`);
  const server = spawnChild(
    [BINARY, "serve"],
    { ...env, STABLEGATE_DATA_DIR: dir, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) },
    join(dataDir, "logs", `replica-${i}.log`),
  );
  servers.push(server);
  bases.push(`http://127.0.0.1:${port}`);
  await waitForHttp(`${bases[i]}/healthz`, 20_000, server);
}

console.log(`PostgreSQL stall: ${REPLICAS} replicas of ${BINARY}, ${CLIENTS} clients, SIGSTOP for ${STALL_S} s`);
let running = true;
const probes: Probe[] = [];
const requests: Request[] = [];
const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
const ids: string[] = [];

const probing = Promise.all(
  bases.flatMap((base, replica) =>
    (["healthz", "asset"] as const).map(async (what) => {
      while (running) {
        const t0 = performance.now();
        let ok = false;
        try {
          const response = await fetch(`${base}${what === "healthz" ? "/healthz" : "/checkout.js"}`, {
            signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
          });
          await response.arrayBuffer();
          ok = response.ok;
        } catch {}
        const answered = performance.now();
        probes.push({ replica, what, sent: t0, answered, ms: answered - t0, ok });
        await Bun.sleep(100);
      }
    }),
  ),
);

let turn = 0;
const loading = Promise.all(
  Array.from({ length: CLIENTS }, async (_, client) => {
    while (running) {
      const base = bases[turn++ % bases.length]!;
      const create = client % 2 === 0 || ids.length === 0;
      const key = crypto.randomUUID();
      const t0 = performance.now();
      const request: Request = {
        kind: create ? "create" : "retrieve",
        sent: t0,
        answered: 0,
        ms: 0,
        status: "error",
        key,
      };
      try {
        const response = create
          ? await fetch(`${base}/api/v1/payments`, {
              method: "POST",
              headers: { ...headers, "idempotency-key": key },
              body: JSON.stringify({ amount: "25.00", reference: `stall-${key}` }),
              signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
            })
          : await fetch(`${base}/api/v1/payments/${ids[Math.floor(Math.random() * ids.length)]}`, {
              headers,
              signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
            });
        const body = await response.text();
        request.status = response.status;
        if (create && response.ok) {
          request.id = (JSON.parse(body) as { id: string }).id;
          ids.push(request.id);
        }
      } catch (error) {
        request.status = (error as Error).name === "TimeoutError" ? "timeout" : "error";
      }
      request.answered = performance.now();
      request.ms = request.answered - t0;
      requests.push(request);
    }
  }),
);

await Bun.sleep(3_000);
const stallStarted = performance.now();
// Every backend open now, listed while they run; the stopped postmaster starts no new ones.
const postgresPids = [postmaster, ...childrenOf(postmaster)];
for (const pid of postgresPids) process.kill(pid, "SIGSTOP");
await Bun.sleep(STALL_S * 1000);
for (const pid of postgresPids) process.kill(pid, "SIGCONT");
const stallEnded = performance.now();
await Bun.sleep(5_000);
running = false;
await Promise.all([probing, loading]);

const when = (r: { sent: number; answered: number }): Phase =>
  r.answered < stallStarted ? "before" : r.sent > stallEnded ? "after" : "stall";
console.log(
  "\nProbes (every 100 ms per replica), by whether they were in flight during the stall: p50 / p99 / max ms, failed",
);
for (const what of ["healthz", "asset"] as const) {
  for (const at of ["before", "stall", "after"] as const) {
    const ms = probes.filter((p) => p.what === what && when(p) === at).map((p) => p.ms);
    const failed = probes.filter((p) => p.what === what && when(p) === at && !p.ok).length;
    console.log(
      `  ${(what === "asset" ? "/checkout.js" : "/healthz").padEnd(14)}${at.padEnd(8)}${figures(ms)}  ${failed}`,
    );
  }
}

console.log("\nRequests that need the database: count by answer; the longest 503");
for (const at of ["before", "stall", "after"] as const) {
  const sent = requests.filter((r) => when(r) === at);
  const byAnswer = new Map<string, number>();
  for (const r of sent) {
    const answer = typeof r.status === "number" ? (r.status < 300 ? "2xx" : String(r.status)) : r.status;
    byAnswer.set(answer, (byAnswer.get(answer) ?? 0) + 1);
  }
  const answers = [...byAnswer].map(([answer, n]) => `${answer}: ${n}`).join(", ");
  const max503 = Math.max(0, ...sent.filter((r) => r.status === 503).map((r) => r.ms));
  console.log(
    `  ${(at === "stall" ? "in flight during the stall" : `${at} it`).padEnd(28)}${String(sent.length).padStart(6)}  ${answers}${max503 ? `  (503s within ${max503.toFixed(0)} ms)` : ""}`,
  );
}

// Nothing accepted is lost: every 2xx create is there; a create that failed is retried with its key.
const base = bases[0]!;
let missing = 0;
for (const r of requests.filter((r) => r.kind === "create" && r.id)) {
  const response = await fetch(`${base}/api/v1/payments/${r.id}`, { headers });
  await response.arrayBuffer();
  if (response.status !== 200) missing++;
}
let retried = 0;
let retryFailed = 0;
const retryAnswers: string[] = [];
for (const r of requests.filter((r) => r.kind === "create" && !r.id)) {
  retried++;
  const response = await fetch(`${base}/api/v1/payments`, {
    method: "POST",
    headers: { ...headers, "idempotency-key": r.key! },
    body: JSON.stringify({ amount: "25.00", reference: `stall-${r.key}` }),
  });
  const answer = await response.text();
  if (!response.ok) {
    retryFailed++;
    retryAnswers.push(`${response.status} ${answer.slice(0, 100)}`);
  }
}
const sql = new SQL(url, { max: 1 });
const [{ n: stored }] = await sql`SELECT count(*)::int AS n FROM payments`;
const [{ n: duplicates }] =
  await sql`SELECT count(*)::int AS n FROM (SELECT reference FROM payments GROUP BY reference HAVING count(*) > 1) d`;
await sql.close();
const accepted = requests.filter((r) => r.id).length;
console.log(
  `\nAccepted creates: ${accepted}, missing afterwards: ${missing}; failed creates retried with their key: ${retried}, ` +
    `failing again: ${retryFailed}; payments stored: ${stored}, references stored twice: ${duplicates}`,
);
for (const answer of new Set(retryAnswers)) console.log(`  a retry answered: ${answer}`);
for (const server of servers) await stopChild(server);
process.exit(0);

function figures(ms: number[]): string {
  if (ms.length === 0) return "      -";
  const sorted = [...ms].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(8);
  return `${f(percentile(sorted, 0.5))}${f(percentile(sorted, 0.99))}${f(sorted.at(-1)!)}  (${ms.length})`;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

/** The postmaster of the server behind `url`. */
async function postmasterOf(databaseUrl: string): Promise<number> {
  const sql = new SQL(databaseUrl, { max: 1 });
  const [{ data_directory: dataDirectory }] = await sql`SHOW data_directory`;
  await sql.close();
  return Number(readFileSync(join(dataDirectory, "postmaster.pid"), "utf8").split("\n")[0]);
}

/** The processes `parent` started: PostgreSQL's backends and helpers. */
function childrenOf(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent;
      } catch {
        return false;
      }
    })
    .map(Number);
}
