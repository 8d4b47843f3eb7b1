/**
 * `bun run test [bun test args]`: the whole check as the README gives it. Makes sure chromium,
 * poppler-utils and the PostgreSQL binaries are there (scripts/test-prereqs.ts), then, side by side:
 * - the type check and Biome's lint and format check;
 * - bun test over every file, in parallel worker processes, in a random order whose seed it
 *   prints (TEST_SEED=<seed> replays it);
 * - the end-to-end suites of ON_POSTGRES again with their servers on PostgreSQL.
 * The tests share what is worth starting once: the binary, built before them, and one PostgreSQL
 * server, on which each test takes a database of its own. At the end it prints the ten slowest
 * files and both passes' totals, and fails if the tests left any process running
 * (scripts/test-leftovers.ts), and stops those.
 * The random order is why one run is enough to catch a test that leans on another's leftovers.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Glob } from "bun";
import {
  postgresServer,
  SHARED_POSTGRES,
  SHARED_POSTGRES_SOCKET,
  stopPostgresServers,
} from "../test/support/postgres.ts";
import { killProcesses, leftoverProcesses, TEST_RUN_MARKER } from "./test-leftovers.ts";
import { PrereqError, requireChromium, requirePoppler, requirePostgres } from "./test-prereqs.ts";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;

/**
 * Files under test/chain/ that open no database: the contracts on anvil, their compilation (solc,
 * seconds of a core) and the chain's pure parts. A second run of them would test nothing new.
 */
const NO_DATABASE = new Set(
  [
    "artifacts",
    "backoff",
    "deposit-factory",
    "deposit-factory-v2",
    "deposit-factory-v3",
    "deposit-terms",
    "explorer",
    "test-usdc-eip3009",
  ].map((name) => `test/chain/${name}.test.ts`),
);

/** Suites run a second time on PostgreSQL: the API, refunds, webhooks, and the chain side (watchers, settlement, crashes). */
const ON_POSTGRES = [
  "test/payments/",
  "test/payment-links/",
  // The refunds API and the chain's side of refunds; the browser flows run once.
  "test/refunds/api.test.ts",
  "test/refunds/on-chain.test.ts",
  "test/refunds/crash.test.ts",
  "test/webhooks/",
  "test/events/",
  "test/accounts/",
  "test/users/",
  // The chain side's own suites (watchers, settlement, crashes); bridging/, redeeming/ and recovering/ run once.
  ...[...new Glob("test/chain/*.test.ts").scanSync(ROOT)].filter((file) => !NO_DATABASE.has(file)).sort(),
  "test/chain/watching/",
  "test/chain/settling/",
];

/**
 * Worker processes per pass. Most of a test's time is spent waiting on a chain, a server or a
 * browser, so two cores keep more than two workers busy.
 */
const WORKERS = { first: 4, postgres: 2 };

let chromium: string;
try {
  chromium = await requireChromium(process.env);
  requirePoppler(process.env);
  requirePostgres();
} catch (error) {
  if (!(error instanceof PrereqError)) throw error;
  console.error(`test-prereqs: ${error.message}`);
  process.exit(1);
}
console.log(`test-prereqs: chromium is ${chromium}`);

interface Finished {
  status: number;
  output: string;
}

/** Runs `command`; its output is streamed when `stream`, and kept either way. */
async function run(command: string[], env: Record<string, string | undefined>, stream: boolean): Promise<Finished> {
  const child = Bun.spawn(command, { cwd: ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const chunks: string[] = [];
  const pump = async (from: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    const reader = from.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const text = decoder.decode(read.value, { stream: true });
      chunks.push(text);
      if (stream) to.write(text);
    }
  };
  await Promise.all([pump(child.stdout, process.stdout), pump(child.stderr, process.stderr), child.exited]);
  return { status: child.exitCode ?? 1, output: chunks.join("") };
}

const args = process.argv.slice(2);
if (!args.some((a) => a.startsWith("--seed") || a === "--randomize")) {
  const seed = process.env.TEST_SEED || String(crypto.getRandomValues(new Uint32Array(1))[0]);
  console.log(`test order: random, seed ${seed} (TEST_SEED=${seed} bun run test replays it)`);
  args.push("--randomize", `--seed=${seed}`);
}
const namesFiles = args.some((a) => !a.startsWith("-") && !/^\d+$/.test(a));
const namesTests = args.some((a) => a === "-t" || a.startsWith("--test-name-pattern"));

const CHECKS = ["typecheck", "lint"];
const checks = Promise.all(CHECKS.map((check) => run([BUN, "run", check], process.env, false)));

const build = await run([BUN, "run", "build"], process.env, false);
if (build.status !== 0) {
  console.error(`bun run build failed:\n${build.output}`);
  process.exit(build.status);
}

const marker = `${process.pid}-${crypto.randomUUID()}`;
process.env[TEST_RUN_MARKER] = marker;
const { adminUrl, socketDir } = await postgresServer();
const testEnv = {
  ...process.env,
  CHROMIUM_PATH: chromium,
  STABLEGATE_TEST_BINARY: process.env.STABLEGATE_TEST_BINARY || join(ROOT, "dist/stablegate"),
  [SHARED_POSTGRES]: adminUrl,
  [SHARED_POSTGRES_SOCKET]: socketDir,
};

const timings = mkdtempSync(join(tmpdir(), "stablegate-timings-"));
const bunTest = (workers: number, name: string, more: string[]) => [
  BUN,
  "test",
  "--timeout",
  "60000",
  `--parallel=${workers}`,
  // As one bun test process would: a worker's files share its modules (the loaded server code, viem).
  "--no-isolate",
  `--timings=${join(timings, `${name}.json`)}`,
  "--update-timings",
  ...args,
  ...more,
];

// A run that names no files runs the end-to-end suites again on PostgreSQL. Tests that name their
// engine (`describe.each(ENGINES)("%s", ...)`) ran on both in the first pass already, so a name
// pattern leaves them out, unless the run gave one.
const notPerEngine = namesTests ? [] : ["--test-name-pattern", "^(?!(sqlite|postgres) )"];
const second = namesFiles
  ? null
  : run(
      bunTest(WORKERS.postgres, "postgres", [...notPerEngine, ...ON_POSTGRES]),
      {
        ...testEnv,
        STABLEGATE_TEST_ENGINE: "postgres",
      },
      false,
    );
const first = await run(bunTest(WORKERS.first, "first", []), testEnv, true);

const passes: Array<[string, Finished]> = [["first pass", first]];
if (second) {
  console.log(`\nagain on PostgreSQL (STABLEGATE_TEST_ENGINE=postgres): ${ON_POSTGRES.join(" ")}`);
  const finished = await second;
  process.stdout.write(finished.output);
  passes.push(["PostgreSQL pass", finished]);
}
const failedChecks = (await checks).flatMap((check, index) =>
  check.status === 0 ? [] : [{ ...check, name: CHECKS[index] }],
);
for (const check of failedChecks) console.error(`\nbun run ${check.name} failed:\n${check.output}`);

printSlowest(timings);
rmSync(timings, { recursive: true, force: true });
await stopPostgresServers();
printFailures(passes);
printTotals(passes.map(([, finished]) => finished.output));

const failed = [...passes.filter(([, pass]) => pass.status !== 0), ...failedChecks.map((c) => [c.name, c] as const)];
for (const [name] of failed) console.error(`${name} failed`);
let status = failed[0]?.[1].status ?? 0;
const leftovers = await leftoverProcesses(marker);
if (leftovers.length > 0) {
  console.error(`the tests left ${leftovers.length} process(es) running (now killed):`);
  for (const { pid, command } of leftovers) console.error(`  ${pid} ${command.slice(0, 200)}`);
  killProcesses(leftovers);
  status ||= 1;
}
process.exit(status);

/** The ten slowest test files of the run, from bun test's per-file timings of each pass. */
function printSlowest(dir: string): void {
  const files: Array<[string, number]> = [];
  for (const name of ["first", "postgres"]) {
    try {
      const { files: measured } = JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"));
      const label = name === "postgres" ? " (PostgreSQL)" : "";
      for (const [file, ms] of Object.entries(measured as Record<string, number>)) files.push([file + label, ms]);
    } catch {
      // that pass did not run, or ended before writing its timings
    }
  }
  if (files.length === 0) return;
  console.log("\nthe ten slowest test files:");
  for (const [file, ms] of files.sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
  }
}

/**
 * Each failed test again, with its file and what it printed before failing (its error), so that
 * the end of a long run's output, which is what CI shows, names them.
 */
function printFailures(passes: Array<[string, Finished]>): void {
  for (const [name, { output }] of passes) {
    const lines = output.split("\n");
    const failures: string[] = [];
    let file = "";
    let start = 0;
    lines.forEach((line, i) => {
      if (/^\S.*\.test\.ts:$/.test(line)) [file, start] = [line.slice(0, -1), i + 1];
      // bun's own recap at the end of a pass names the failures again, without their files.
      else if (/^\d+ tests? failed:$/.test(line)) file = "";
      else if (line.startsWith("(pass) ")) start = i + 1;
      else if (line.startsWith("(fail) ") && file) {
        failures.push(`${file} ${line}\n${lines.slice(Math.max(start, i - 40), i).join("\n")}`);
        start = i + 1;
      }
    });
    if (failures.length === 0) continue;
    console.log(`\n${failures.length} failed in the ${name}:`);
    for (const failure of failures) console.log(`\n${failure}`);
  }
}

/** Both passes' totals in bun test's own words, which CI reads from the last lines of the run. */
function printTotals(outputs: string[]): void {
  const sum = (pattern: RegExp) =>
    outputs.reduce((total, output) => total + Number([...output.matchAll(pattern)].at(-1)?.[1] ?? 0), 0);
  const tests = sum(/^Ran (\d+) tests? across/gm);
  if (tests === 0) return;
  console.log(
    `\n${outputs.length > 1 ? "all passes" : "in all"}:\n ${sum(/^ *(\d+) pass$/gm)} pass\n ${sum(/^ *(\d+) fail$/gm)} fail`,
  );
  console.log(`Ran ${tests} tests across ${sum(/^Ran \d+ tests? across (\d+) files?/gm)} files.`);
}
