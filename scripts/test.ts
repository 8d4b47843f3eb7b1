/**
 * `bun run test [bun test args]`: the whole check as the README gives it. Makes sure chromium and
 * the PostgreSQL binaries are there (scripts/test-prereqs.ts), type-checks, lints and checks the
 * formatting (Biome), runs bun test with the browser it found, in a random order whose seed it
 * prints (TEST_SEED=<seed> replays it), then the end-to-end suites of ON_POSTGRES again with their
 * servers on PostgreSQL, then fails if the tests left any process running (scripts/test-leftovers.ts),
 * and stops those.
 * The random order is why one run is enough to catch a test that leans on another's leftovers.
 */
import { resolve } from "node:path";
import { Glob } from "bun";
import { killProcesses, leftoverProcesses, TEST_RUN_MARKER } from "./test-leftovers.ts";
import { PrereqError, requireChromium, requirePostgres } from "./test-prereqs.ts";

const ROOT = resolve(import.meta.dir, "..");

/** Suites run a second time on PostgreSQL: the API, webhooks, and the chain side (watchers, settlement, crashes). */
const ON_POSTGRES = [
  "test/payments/",
  "test/payment-links/",
  "test/webhooks/",
  "test/events/",
  "test/accounts/",
  "test/users/",
  // The chain side's own suites (watchers, settlement, crashes); bridging/, redeeming/ and recovering/ run once.
  ...[...new Glob("test/chain/*.test.ts").scanSync(ROOT)].sort(),
  "test/chain/watching/",
  "test/chain/settling/",
];

let chromium: string;
try {
  chromium = await requireChromium(process.env);
  requirePostgres();
} catch (error) {
  if (!(error instanceof PrereqError)) throw error;
  console.error(`test-prereqs: ${error.message}`);
  process.exit(1);
}
console.log(`test-prereqs: chromium is ${chromium}`);

const run = (command: string[], env: Record<string, string | undefined> = process.env) =>
  Bun.spawn(command, { cwd: ROOT, env, stdin: "inherit", stdout: "inherit", stderr: "inherit" }).exited;

for (const check of ["typecheck", "lint"]) {
  const status = await run([process.execPath, "run", check]);
  if (status !== 0) process.exit(status);
}

const args = process.argv.slice(2);
if (!args.some((a) => a.startsWith("--seed") || a === "--randomize")) {
  const seed = process.env.TEST_SEED || String(crypto.getRandomValues(new Uint32Array(1))[0]);
  console.log(`test order: random, seed ${seed} (TEST_SEED=${seed} bun run test replays it)`);
  args.push("--randomize", `--seed=${seed}`);
}

const marker = `${process.pid}-${crypto.randomUUID()}`;
const testEnv = { ...process.env, CHROMIUM_PATH: chromium, [TEST_RUN_MARKER]: marker };
let status = await run([process.execPath, "test", "--timeout", "60000", ...args], testEnv);

// A whole run (no files named) runs the suites that drive servers end to end once more with every
// test server on PostgreSQL. Tests that name their engine (`describe.each(ENGINES)("%s", ...)`)
// already ran on both in the first pass, so a name pattern leaves them out, unless one was given.
const namesFiles = args.some((a) => !a.startsWith("-") && !/^\d+$/.test(a));
if (status === 0 && !namesFiles) {
  console.log(`\nagain on PostgreSQL (STABLEGATE_TEST_ENGINE=postgres): ${ON_POSTGRES.join(" ")}`);
  const namesTests = args.some((a) => a === "-t" || a.startsWith("--test-name-pattern"));
  const notPerEngine = namesTests ? [] : ["--test-name-pattern", "^(?!(sqlite|postgres) )"];
  status = await run([process.execPath, "test", "--timeout", "60000", ...args, ...notPerEngine, ...ON_POSTGRES], {
    ...testEnv,
    STABLEGATE_TEST_ENGINE: "postgres",
  });
}

const leftovers = await leftoverProcesses(marker);
if (leftovers.length > 0) {
  console.error(`the tests left ${leftovers.length} process(es) running (now killed):`);
  for (const { pid, command } of leftovers) console.error(`  ${pid} ${command.slice(0, 200)}`);
  killProcesses(leftovers);
  process.exit(status === 0 ? 1 : status);
}
process.exit(status);
