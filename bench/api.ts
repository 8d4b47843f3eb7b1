/**
 * API throughput of the compiled binary, next to two floors measured in the same run:
 *   1. `dist/stablegate serve`: POST /api/v1/payments, then GET /api/v1/payments/:id of the
 *      payments just created;
 *   2. a bare Elysia app (bench/bare-elysia.ts) hit by the same client loop and request body;
 *   3. bare bun:sqlite inserts of a payment row (real schema, WAL, synchronous=FULL, one
 *      transaction per insert), in this process.
 *
 *   bun run build && bun bench/api.ts [--seconds 5] [--clients 32]
 *
 * Loopback only, no chain needed (the RPC URL points at a closed port). Everything it starts
 * is killed at the end, and the whole run is bounded in time.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../src/lib/free-port.ts";
import {
  formatResults,
  type LoadResult,
  numberFlag,
  runInProcess,
  runLoad,
  spawnChild,
  stopChild,
  waitForHttp,
} from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist/stablegate");
const SECONDS = numberFlag(process.argv, "seconds", 5);
const CLIENTS = numberFlag(process.argv, "clients", 32);
const WARMUP_SECONDS = 1;
const PAYOUT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const CREATE_BODY = JSON.stringify({
  amount: "25.00",
  description: "Order 1234: 2 items",
  reference: "order_1234",
  customer_email: "payer@example.com",
  metadata: { order_id: "1234", channel: "web" },
});

if (!existsSync(BINARY)) {
  console.error(`bench: ${BINARY} is missing; build it first with: bun run build`);
  process.exit(1);
}

// Whatever happens (a hung server, a stuck phase), the run ends; lib.ts kills the children on exit.
const limitMs = (5 * (SECONDS + WARMUP_SECONDS) + 60) * 1000;
setTimeout(() => {
  console.error(`bench: time limit of ${limitMs / 1000} s reached; stopping`);
  process.exit(1);
}, limitMs).unref();

const dataDir = mkdtempSync(join(tmpdir(), "stablegate-bench-"));
const serverLog = join(dataDir, "server.log");
process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));

console.log(
  `Stablegate API benchmark: ${CLIENTS} concurrent clients, ${SECONDS} s per phase (after ${WARMUP_SECONDS} s warm-up), loopback`,
);
console.log(
  `Note: the load generator and the servers share this machine's ${cpus().length} CPU cores, so the HTTP figures ` +
    "include the client's own CPU use; compare them with each other rather than read them as capacity.\n",
);

const results: LoadResult[] = [];
const api = await benchStablegate();
results.push(...api);
results.push(...(await benchBareElysia()));
const sqlite = benchBareSqlite();

console.log(formatResults(results, "req/s"));
console.log(formatResults([sqlite], "inserts/s"));
for (const r of [...results, sqlite]) {
  if (r.errors > 0) console.log(`! ${r.name}: ${r.errors} errors, first: ${r.firstError}`);
}
console.log(`\n${summariseServerLog(serverLog)}`);

const [creates, retrieves, barePost, bareGet] = results as [LoadResult, LoadResult, LoadResult, LoadResult];
const ratio = (a: LoadResult, b: LoadResult) => `${(a.perSecond / b.perSecond).toFixed(1)}x`;
console.log("\nOverhead (how many times faster the floor is):");
console.log(`  bare Elysia POST / creates     ${ratio(barePost, creates)}`);
console.log(`  bare Elysia GET  / retrieves   ${ratio(bareGet, retrieves)}`);
console.log(`  bare SQLite insert / creates   ${ratio(sqlite, creates)}   (one writer, in-process, no HTTP)`);
process.exit(0);

async function benchStablegate(): Promise<LoadResult[]> {
  const env: Record<string, string | undefined> = {
    ...withoutStablegateVars(process.env),
    STABLEGATE_DATA_DIR: dataDir,
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: "31337",
    STABLEGATE_USDC_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    STABLEGATE_RPC_URL: "http://127.0.0.1:9",
    STABLEGATE_LOG_LEVEL: "warn",
  };
  const created = Bun.spawnSync([BINARY, "account", "create", "--name", "Bench", "--payout-address", PAYOUT], { env });
  if (created.exitCode !== 0) throw new Error(`account create failed: ${created.stderr.toString()}`);
  const apiKey = (JSON.parse(created.stdout.toString()) as { api_key: string }).api_key;

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnChild(
    [BINARY, "serve"],
    { ...env, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) },
    serverLog,
  );
  try {
    await waitForHttp(`${base}/healthz`, 15_000, server);
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    const ids: string[] = [];
    const creates = await runLoad({
      name: "stablegate POST /api/v1/payments",
      clients: CLIENTS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      request: () => fetch(`${base}/api/v1/payments`, { method: "POST", headers, body: CREATE_BODY }),
      onBody: (body) => ids.push(/"id":"(0x[0-9a-f]{64})"/.exec(body)![1]!),
    });
    if (ids.length === 0) throw new Error(`no payment was created: ${creates.firstError}`);
    let next = 0;
    const retrieves = await runLoad({
      name: "stablegate GET /api/v1/payments/:id",
      clients: CLIENTS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      request: () => fetch(`${base}/api/v1/payments/${ids[next++ % ids.length]}`, { headers }),
    });
    return [creates, retrieves];
  } finally {
    await stopChild(server);
  }
}

async function benchBareElysia(): Promise<LoadResult[]> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/x`;
  const server = spawnChild([process.execPath, join(import.meta.dir, "bare-elysia.ts")], {
    ...process.env,
    PORT: String(port),
  });
  try {
    await waitForHttp(url, 15_000, server);
    const headers = { "content-type": "application/json" };
    const post = await runLoad({
      name: "bare Elysia POST /x",
      clients: CLIENTS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      request: () => fetch(url, { method: "POST", headers, body: CREATE_BODY }),
    });
    const get = await runLoad({
      name: "bare Elysia GET /x",
      clients: CLIENTS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      request: () => fetch(url),
    });
    return [post, get];
  } finally {
    await stopChild(server);
  }
}

/** One writer inserting payment-shaped rows into the real schema, one transaction each. */
function benchBareSqlite(): LoadResult {
  const db = new Database(join(dataDir, "bare.db"), { create: true, strict: true });
  try {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = FULL");
    db.run(readFileSync(join(ROOT, "migrations/001_core.sql"), "utf8"));
    db.run("INSERT INTO accounts (id, name, payout_address, created_at) VALUES ('acct_bench', 'Bench', ?, ?)", [
      PAYOUT,
      Date.now(),
    ]);
    const insert = db.query(
      `INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id, token_address,
         deposit_address, description, reference, customer_email, metadata, expires_at, created_at, updated_at)
       VALUES ($id, 'acct_bench', 'pending', 25000000, 0, $zero, $payout, 31337, $token, $deposit, 'Order 1234: 2 items',
         'order_1234', 'payer@example.com', '{"order_id":"1234","channel":"web"}', $expires, $now, $now)`,
    );
    const insertOne = db.transaction((id: string, deposit: string, now: number) =>
      insert.run({
        id,
        zero: "0x0000000000000000000000000000000000000000",
        payout: PAYOUT,
        token: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        deposit,
        expires: now + 3_600_000,
        now,
      }),
    );
    return runInProcess("bare bun:sqlite payment insert", SECONDS, () => {
      const id = `0x${randomHex(32)}`;
      insertOne(id, `0x${randomHex(20)}`, Date.now());
    });
  } finally {
    db.close();
  }
}

/** The server logs at warn level; with no chain behind the RPC URL, its loops' retries are expected. */
function summariseServerLog(path: string): string {
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  const levels = new Map<string, number>();
  for (const line of lines) {
    const level = /"level":"(\w+)"/.exec(line)?.[1] ?? "other";
    levels.set(level, (levels.get(level) ?? 0) + 1);
  }
  const counts = [...levels].map(([level, n]) => `${n} ${level}`).join(", ") || "nothing";
  const lastError = lines.findLast((line) => line.includes('"level":"error"'));
  return `Server log: ${counts} (chain RPC retries are expected: no chain runs behind STABLEGATE_RPC_URL)${lastError ? `\nlast error: ${lastError}` : ""}`;
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

function withoutStablegateVars(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("STABLEGATE_")));
}
