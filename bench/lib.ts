/**
 * Shared pieces for the benchmarks under bench/: a closed-loop HTTP load generator, latency
 * percentiles, free ports, child servers that are always killed, and a results table.
 * Benchmarks are scripts run by hand (`bun bench/<name>.ts`), not tests.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Subprocess } from "bun";

/** The create every API benchmark sends: a payment with the fields a shop's backend fills in. */
export const CREATE_BODY = JSON.stringify({
  amount: "25.00",
  description: "Order 1234: 2 items",
  reference: "order_1234",
  customer_email: "payer@example.com",
  metadata: { order_id: "1234", channel: "web" },
});

/** The payout address of the benchmarks' accounts (anvil's second dev account). */
export const BENCH_PAYOUT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** The USDC address a benchmarked server is configured with: nothing runs behind it. */
export const BENCH_USDC = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

/**
 * What a benchmarked `serve` needs to start with no chain behind it: a custom chain whose RPC URL
 * is a closed port (its chain loops retry and warn; the API does not wait for them).
 */
export function offlineServerEnv(dataDir: string, logLevel = "error"): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    STABLEGATE_DATA_DIR: dataDir,
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: "31337",
    STABLEGATE_USDC_ADDRESS: BENCH_USDC,
    STABLEGATE_RPC_URL: "http://127.0.0.1:9",
    STABLEGATE_LOG_LEVEL: logLevel,
  };
}

export interface LoadResult {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Status and body of the first failed request, to tell a broken run from a slow one. */
  firstError?: string;
  /** CPU the `cpuOf` processes used per request while measuring, in µs: whole process and main thread. */
  cpu?: { processUs: number; mainThreadUs: number };
  /** CPU the `databaseOf` processes used per request while measuring, in µs. */
  databaseUs?: number;
  /** CPU this process (the load generator) used per request while measuring, in µs. */
  clientUs?: number;
}

export interface LoadOptions {
  name: string;
  /** Concurrent clients; each sends its next request as soon as the previous one is answered. */
  clients: number;
  seconds: number;
  /** Untimed warm-up (JIT, connection pool) before measuring; 0 to skip. */
  warmupSeconds?: number;
  request: (client: number) => Promise<Response>;
  /** Called with each successful response's body (during measurement only). */
  onBody?: (body: string) => void;
  /**
   * Server processes whose CPU time to count while measuring (Linux). On a shared machine a
   * server's CPU per request moves far less from run to run than its requests per second.
   */
  cpuOf?: number[];
  /**
   * The database server's processes, asked for at the start and the end of the measurement
   * (a server's sessions come and go): their CPU is counted apart from the servers'.
   */
  databaseOf?: () => number[];
}

/**
 * Closed-loop load: `clients` async loops share one process and Bun's keep-alive connection
 * pool. Every response body is read in full, so a request counts only once it is complete.
 */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  if (opts.warmupSeconds) await loop(opts, opts.warmupSeconds, false);
  const before = opts.cpuOf?.map(cpuMicros);
  const databaseBefore = opts.databaseOf && processesCpu(opts.databaseOf());
  const clientBefore = process.cpuUsage();
  const result = await loop(opts, opts.seconds, true);
  const client = process.cpuUsage(clientBefore);
  if (result.requests > 0) result.clientUs = (client.user + client.system) / result.requests;
  if (databaseBefore && result.requests > 0) {
    let used = 0;
    for (const [pid, now] of processesCpu(opts.databaseOf!())) used += now - (databaseBefore.get(pid) ?? 0);
    result.databaseUs = used / result.requests;
  }
  if (before?.every(Boolean) && result.requests > 0) {
    const after = opts.cpuOf!.map(cpuMicros);
    const used = (key: "processUs" | "mainThreadUs") =>
      after.reduce((sum, now, i) => sum + (now?.[key] ?? 0) - before[i]![key], 0) / result.requests;
    result.cpu = { processUs: used("processUs"), mainThreadUs: used("mainThreadUs") };
  }
  return result;
}

/** CPU time a process has used, all threads and its main thread, from /proc; undefined elsewhere. */
function cpuMicros(pid: number): { processUs: number; mainThreadUs: number } | undefined {
  const ticks = (file: string) => {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(file, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  };
  try {
    return { processUs: ticks(`/proc/${pid}/stat`), mainThreadUs: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

/** Each process's CPU time in µs, by pid; one gone meanwhile is left out. */
function processesCpu(pids: number[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    const cpu = cpuMicros(pid);
    if (cpu) used.set(pid, cpu.processUs);
  }
  return used;
}

/**
 * The PostgreSQL server listening on `port` (Linux): its postmaster, found by the `-p PORT` of
 * its command line, and the postmaster's children (sessions, WAL writer, checkpointer).
 */
export function postgresProcesses(port: number): number[] {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  const read = (pid: string, file: string) => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, "utf8");
    } catch {
      return "";
    }
  };
  const postmaster = pids.find(
    (pid) => read(pid, "cmdline").includes(`\0-p\0${port}\0`) && read(pid, "comm").trim() === "postgres",
  );
  if (!postmaster) return [];
  // The parent pid is the 2nd field after the command's closing parenthesis.
  const children = pids.filter((pid) => read(pid, "stat").split(") ")[1]?.split(" ")[1] === postmaster);
  return [postmaster, ...children].map(Number);
}

/** USER_HZ: 100 on every Linux build that matters here. */
const CLOCK_TICKS = 100;

async function loop(opts: LoadOptions, seconds: number, measure: boolean): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const client = async (id: number) => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const response = await opts.request(id);
        const body = await response.text();
        if (!response.ok) throw new Error(`HTTP ${response.status} ${body.slice(0, 200)}`);
        if (measure) {
          latencies.push(performance.now() - t0);
          opts.onBody?.(body);
        }
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
        if (errors > 1000 && latencies.length === 0) break; // nothing works: stop hammering
      }
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, (_, i) => client(i)));
  const elapsed = (performance.now() - started) / 1000;
  return summarise(opts.name, latencies, elapsed, errors, firstError);
}

/**
 * Times `op` back to back for `seconds` in this process (no HTTP): a storage or CPU ceiling. An
 * `op` that returns a promise is awaited; a synchronous one is timed without an await.
 */
export async function runInProcess(
  name: string,
  seconds: number,
  op: (i: number) => void | Promise<void>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  for (let i = 0; performance.now() < deadline; i++) {
    const t0 = performance.now();
    const pending = op(i);
    if (pending) await pending;
    latencies.push(performance.now() - t0);
  }
  return summarise(name, latencies, (performance.now() - started) / 1000, 0);
}

function summarise(
  name: string,
  latencies: number[],
  seconds: number,
  errors: number,
  firstError?: string,
): LoadResult {
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: latencies.length,
    errors,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    firstError,
  };
}

/** The middle value, or the mean of the two middle ones; NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** Polls `url` until it answers 2xx; fails early if `proc` exits first. */
export async function waitForHttp(url: string, timeoutMs: number, proc?: Subprocess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc?.exitCode != null) throw new Error(`process exited with code ${proc.exitCode} before ${url} answered`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

const children = new Set<Subprocess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});
// A signal would end this process without "exit" handlers; exiting runs them, so that Ctrl-C or
// a kill stops the servers too.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.once(signal, () => process.exit(code));
}

/**
 * Spawns a server that is killed when this process exits, however it exits. Its stderr is
 * shown; its stdout goes to `logFile` when given (servers log JSON lines there).
 */
export function spawnChild(cmd: string[], env: Record<string, string | undefined>, logFile?: string): Subprocess {
  const stdout = logFile ? Bun.file(logFile) : "inherit";
  const child = Bun.spawn(cmd, { env, stdin: "ignore", stdout, stderr: "inherit" });
  children.add(child);
  return child;
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: Subprocess, graceMs = 3000): Promise<void> {
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
  children.delete(child);
}

/** `--name value` flags as numbers, with defaults. */
/** The value after `--name`, if given. */
export function stringFlag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? undefined : argv[i + 1];
}

export function numberFlag(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

/**
 * Rows measured on two engines side by side, with the ratio second/first of each figure (rate,
 * p50, p99); an engine left out of the run shows no columns, and the ratio only with both.
 */
export function formatSideBySide(
  rows: Array<{ name: string; results: [LoadResult | undefined, LoadResult | undefined] }>,
  labels: [string, string],
): string {
  const shown = [0, 1].filter((i) => rows.some((row) => row.results[i]));
  const nameWidth = Math.max(...rows.map((r) => r.name.length), 5);
  const group = (label: string) => label.padEnd(38);
  const figures = (r: LoadResult | undefined) =>
    r
      ? `${r.perSecond.toFixed(0).padStart(8)}  ${r.p50Ms.toFixed(2).padStart(8)}  ${r.p99Ms.toFixed(2).padStart(8)}  ${String(r.errors).padStart(6)}  `
      : " ".repeat(38);
  const ratio = (a: number, b: number) => `${(b / a).toFixed(2)}x`.padStart(7);
  const both = shown.length === 2;
  const lines = [
    `${" ".repeat(nameWidth)}  ${shown.map((i) => group(labels[i]!)).join("")}${both ? `${labels[1]}/${labels[0]}` : ""}`,
    `${"phase".padEnd(nameWidth)}  ${shown.map(() => `${"per s".padStart(8)}  ${"p50 ms".padStart(8)}  ${"p99 ms".padStart(8)}  ${"errors".padStart(6)}  `).join("")}${both ? `${"per s".padStart(7)}  ${"p50".padStart(7)}  ${"p99".padStart(7)}` : ""}`,
  ];
  for (const { name, results } of rows) {
    const [a, b] = results;
    const ratios =
      both && a && b
        ? `${ratio(a.perSecond, b.perSecond)}  ${ratio(a.p50Ms, b.p50Ms)}  ${ratio(a.p99Ms, b.p99Ms)}`
        : "";
    lines.push(`${name.padEnd(nameWidth)}  ${shown.map((i) => figures(results[i])).join("")}${ratios}`.trimEnd());
  }
  return lines.join("\n");
}

/** Fixed-width table of results. */
export function formatResults(results: LoadResult[], unit = "ops/s"): string {
  const nameWidth = Math.max(...results.map((r) => r.name.length), 5);
  const header = `${"phase".padEnd(nameWidth)}  ${unit.padStart(10)}  ${"p50 ms".padStart(8)}  ${"p99 ms".padStart(8)}  ${"errors".padStart(6)}`;
  const rows = results.map(
    (r) =>
      `${r.name.padEnd(nameWidth)}  ${r.perSecond.toFixed(0).padStart(10)}  ${r.p50Ms.toFixed(2).padStart(8)}  ${r.p99Ms.toFixed(2).padStart(8)}  ${String(r.errors).padStart(6)}`,
  );
  return [header, ...rows].join("\n");
}
