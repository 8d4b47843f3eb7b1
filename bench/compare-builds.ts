/**
 * Two builds side by side, for a question bench/api.ts answers too noisily on a shared machine: is
 * build B faster than build A? Both servers run at once, each on a data directory of its own (and
 * with `--db postgres` a database of its own on one PostgreSQL server of this run's, with durable
 * defaults), but only one is under load at a time: short phases of creates (then retrieves)
 * alternate A, B, B, A, ... so each round's two phases are seconds apart and see the same
 * machine. Prints every round's rates, the servers' CPU per create (and PostgreSQL's) and the B/A
 * ratios, and their medians. `--db-a` and `--db-b` give one side an engine of its own: the same
 * build on SQLite and on PostgreSQL answers bench/api.ts's PostgreSQL/SQLite question with the
 * machine's drift between its two halves taken out.
 *
 *   bun bench/compare-builds.ts --a <binary> --b <binary> [--db sqlite|postgres] [--db-a …] [--db-b …]
 *     [--rounds 8] [--seconds 3] [--clients 32] [--tcp]
 *
 * As in bench/api.ts, PostgreSQL is reached through its Unix socket, or with `--tcp` over TCP on
 * the loopback.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../src/lib/free-port.ts";
import { createTestDatabase } from "../test/support/postgres.ts";
import {
  BENCH_PAYOUT,
  CREATE_BODY,
  type LoadResult,
  median,
  numberFlag,
  offlineServerEnv,
  postgresProcesses,
  runLoad,
  spawnChild,
  stopChild,
  stringFlag,
  waitForHttp,
} from "./lib.ts";

const ROUNDS = numberFlag(process.argv, "rounds", 8);
const SECONDS = numberFlag(process.argv, "seconds", 3);
const CLIENTS = numberFlag(process.argv, "clients", 32);
const BUILDS = { a: binaryFlag("a"), b: binaryFlag("b") };
const ENGINE = engineFlag("db", "sqlite");
const ENGINES = { a: engineFlag("db-a", ENGINE), b: engineFlag("db-b", ENGINE) };
const POSTGRES = ENGINES.a === "postgres" || ENGINES.b === "postgres";
const UNIX_SOCKET = !process.argv.includes("--tcp");

setTimeout(
  () => {
    console.error("compare-builds: time limit reached; stopping");
    process.exit(1);
  },
  (ROUNDS * 4 * (SECONDS + 1) + 120) * 1000,
).unref();

const root = mkdtempSync(join(tmpdir(), "stablegate-compare-"));
process.once("exit", () => rmSync(root, { recursive: true, force: true }));

interface Server {
  name: string;
  base: string;
  headers: Record<string, string>;
  process: Subprocess;
  ids: string[];
  /** Its PostgreSQL server's processes, when it runs on one. */
  database?: () => number[];
}

const servers: Server[] = [];
try {
  for (const name of ["a", "b"] as const) servers.push(await start(name, BUILDS[name]));
  console.log(
    `A: ${BUILDS.a} on ${engineLabel(ENGINES.a)}\nB: ${BUILDS.b} on ${engineLabel(ENGINES.b)}\n${CLIENTS} clients, ${SECONDS} s phases, ${ROUNDS} rounds\n`,
  );
  const ratios = { creates: [] as number[], retrieves: [] as number[], cpu: [] as number[] };
  console.log(
    `${"round".padEnd(7)}${"creates/s A".padStart(13)}${"B".padStart(8)}${"B/A".padStart(7)}   ${"retrieves/s A".padStart(13)}${"B".padStart(8)}${"B/A".padStart(7)}   ${"CPU µs/create A".padStart(15)}${"B".padStart(6)}${POSTGRES ? `   ${"PostgreSQL µs A".padStart(15)}${"B".padStart(6)}` : ""}`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    // A, B then B, A: neither build is always the one that runs second.
    const order = round % 2 === 1 ? servers : [...servers].reverse();
    const creates = new Map<string, LoadResult>();
    const retrieves = new Map<string, LoadResult>();
    for (const server of order) creates.set(server.name, await createLoad(server));
    for (const server of order) retrieves.set(server.name, await retrieveLoad(server));
    const c = [creates.get("a")!.perSecond, creates.get("b")!.perSecond];
    const r = [retrieves.get("a")!.perSecond, retrieves.get("b")!.perSecond];
    // The servers' own CPU per create (process-wide, from /proc): the same question asked of the work done.
    const cpu = [creates.get("a")!.cpu?.processUs ?? Number.NaN, creates.get("b")!.cpu?.processUs ?? Number.NaN];
    ratios.creates.push(c[1]! / c[0]!);
    ratios.retrieves.push(r[1]! / r[0]!);
    ratios.cpu.push(cpu[1]! / cpu[0]!);
    console.log(
      `${String(round).padEnd(7)}${c[0]!.toFixed(0).padStart(13)}${c[1]!.toFixed(0).padStart(8)}${(c[1]! / c[0]!).toFixed(2).padStart(7)}   ${r[0]!.toFixed(0).padStart(13)}${r[1]!.toFixed(0).padStart(8)}${(r[1]! / r[0]!).toFixed(2).padStart(7)}   ${cpu[0]!.toFixed(0).padStart(15)}${cpu[1]!.toFixed(0).padStart(6)}${POSTGRES ? `   ${databaseCpu(creates.get("a")!).padStart(15)}${databaseCpu(creates.get("b")!).padStart(6)}` : ""}`,
    );
    const failed = [...creates.values(), ...retrieves.values()].find((result) => result.errors > 0);
    if (failed) console.log(`! ${failed.name}: ${failed.errors} errors, first: ${failed.firstError}`);
  }
  console.log(
    `\nmedian B/A: creates/s ${median(ratios.creates).toFixed(2)}x, retrieves/s ${median(ratios.retrieves).toFixed(2)}x, CPU per create ${median(ratios.cpu).toFixed(2)}x`,
  );
} finally {
  for (const server of servers) await stopChild(server.process);
}
process.exit(0);

async function start(name: "a" | "b", binary: string): Promise<Server> {
  const dir = join(root, name);
  mkdirSync(dir);
  const databaseUrl =
    ENGINES[name as keyof typeof ENGINES] === "postgres"
      ? await createTestDatabase("durable", { unixSocket: UNIX_SOCKET })
      : undefined;
  const env = { ...offlineServerEnv(dir), ...(databaseUrl ? { STABLEGATE_DATABASE_URL: databaseUrl } : {}) };
  const created = Bun.spawnSync([binary, "account", "create", "--name", "Bench", "--payout-address", BENCH_PAYOUT], {
    env,
  });
  if (created.exitCode !== 0) throw new Error(`${name}: account create failed: ${created.stderr.toString()}`);
  const apiKey = (JSON.parse(created.stdout.toString()) as { api_key: string }).api_key;
  const port = await freePort();
  const child = spawnChild(
    [binary, "serve"],
    { ...env, STABLEGATE_HOST: "127.0.0.1", STABLEGATE_PORT: String(port) },
    join(dir, "server.log"),
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 15_000, child);
  const server = {
    name,
    base,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    process: child,
    ids: [],
    database: databaseUrl ? () => postgresProcesses(Number(new URL(databaseUrl).port)) : undefined,
  };
  // Warm both up once (JIT, connections) before any round counts.
  await runLoad({ name, clients: CLIENTS, seconds: 1, request: () => create(server) });
  return server;
}

function create(server: Server): Promise<Response> {
  return fetch(`${server.base}/api/v1/payments`, { method: "POST", headers: server.headers, body: CREATE_BODY });
}

function createLoad(server: Server): Promise<LoadResult> {
  return runLoad({
    name: `${server.name} creates`,
    clients: CLIENTS,
    seconds: SECONDS,
    request: () => create(server),
    onBody: (body) => server.ids.push(/"id":"(0x[0-9a-f]{64})"/.exec(body)![1]!),
    cpuOf: [server.process.pid],
    databaseOf: server.database,
  });
}

function databaseCpu(result: LoadResult): string {
  return result.databaseUs?.toFixed(0) ?? "-";
}

function retrieveLoad(server: Server): Promise<LoadResult> {
  let next = 0;
  return runLoad({
    name: `${server.name} retrieves`,
    clients: CLIENTS,
    seconds: SECONDS,
    request: () =>
      fetch(`${server.base}/api/v1/payments/${server.ids[next++ % server.ids.length]}`, { headers: server.headers }),
  });
}

function engineLabel(engine: string): string {
  if (engine !== "postgres") return engine;
  return UNIX_SOCKET ? "postgres, through its Unix socket" : "postgres, over TCP on the loopback";
}

function engineFlag(name: string, fallback: string): string {
  const value = stringFlag(process.argv, name) ?? fallback;
  if (value !== "sqlite" && value !== "postgres") {
    console.error(`compare-builds: --${name} must be sqlite or postgres, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return value;
}

function binaryFlag(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i === -1 ? undefined : process.argv[i + 1];
  if (!value) {
    console.error(`compare-builds: --${name} <binary> is required`);
    process.exit(2);
  }
  return resolve(value);
}
