/**
 * `bun scripts/mutate.ts [--only src/path.ts]... [--list]`: a mutation pass over the money,
 * settlement, webhook and auth paths. For each target file it makes simple, deterministic
 * mutants (delete a one-line guard, negate an `if`, flip a comparison), applies ONE at a time to
 * a scratch copy of the repository, runs the file's paired tests there with `--bail`, and counts
 * the mutant killed (a test failed), survived (all passed) or timeout. The working tree is never
 * touched. A line ending in `// mutation: equivalent (why)` is skipped: only for mutants that
 * cannot change behaviour. Prints a summary with every survivor and exits 0.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killProcesses, leftoverProcesses, markedProcesses, TEST_RUN_MARKER } from "./test-leftovers.ts";

const ROOT = resolve(import.meta.dir, "..");

/** Target files and the tests that cover them, fastest first (the run stops at the first failure). */
const TARGETS: Record<string, string[]> = {
  "src/lib/money.ts": [
    "test/lib/money.test.ts",
    "test/chain/redeeming/quote-property.test.ts",
    "test/payments/create.test.ts",
  ],
  "src/lib/secrets.ts": ["test/accounts/auth.test.ts"],
  "src/payments/states.ts": ["test/payments/states.test.ts"],
  "src/payments/lifecycle.ts": [
    "test/chain/payments-onchain.test.ts",
    "test/webhooks/endpoint-removal.test.ts",
    "test/webhooks/payment-events.test.ts",
  ],
  "src/chain/watching/ledger.ts": [
    "test/chain/watching/sync.test.ts",
    "test/chain/payments-onchain.test.ts",
    "test/chain/watching/large-amounts.test.ts",
    "test/chain/watching/reorg.test.ts",
  ],
  "src/chain/settling/settlement-proof.ts": [
    "test/chain/settling/settlement-proof.test.ts",
    "test/chain/payments-onchain.test.ts",
    "test/chain/settling/settlement-mempool.test.ts",
    "test/chain/settling/settlement-failure.test.ts",
    "test/chain/watching/hostile-rpc.test.ts",
  ],
  "src/chain/settling/settler.ts": [
    "test/chain/settling/settlement-confirmations.test.ts",
    "test/chain/relayer-status.test.ts",
    "test/chain/settling/lagging-receipts.test.ts",
    "test/chain/settling/settlement-failure.test.ts",
    "test/chain/settling/settlement-mempool.test.ts",
    "test/chain/payments-onchain.test.ts",
    "test/chain/watching/hostile-rpc.test.ts",
    "test/chain/crash.test.ts",
  ],
  "src/webhooks/signature.ts": [
    "test/webhooks/schedule.test.ts",
    "test/webhooks/signed-payload.test.ts",
    "test/webhooks/payment-events.test.ts",
    "test/webhooks/retries.test.ts",
  ],
  "src/webhooks/url-guard.ts": [
    "test/webhooks/url-guard.test.ts",
    "test/webhooks/pinning.test.ts",
    "test/webhooks/rebinding.test.ts",
  ],
  "src/webhooks/sender.ts": [
    "test/webhooks/pinning.test.ts",
    "test/webhooks/rebinding.test.ts",
    "test/webhooks/signed-payload.test.ts",
    "test/webhooks/misbehaving-receivers.test.ts",
    "test/webhooks/retries.test.ts",
  ],
  "src/http/auth.ts": ["test/accounts/auth.test.ts"],
  "src/accounts/service.ts": ["test/accounts/auth.test.ts", "test/cli/cli.test.ts"],
  "src/idempotency/index.ts": ["test/payments/idempotency.test.ts", "test/idempotency/expiry.test.ts"],
  "src/chain/redeeming/quote.ts": [
    "test/chain/redeeming/quote-property.test.ts",
    "test/chain/redeeming/payer-burns.test.ts",
  ],
  "src/chain/redeeming/service.ts": [
    "test/chain/redeeming/payer-burns.test.ts",
    "test/chain/redeeming/stuck-redemption.test.ts",
  ],
  "src/payment-links/service.ts": [
    "test/payment-links/service.test.ts",
    "test/payment-links/api.test.ts",
    "test/payment-links/page.test.ts",
  ],
};

export interface Mutant {
  file: string;
  line: number; // 1-based
  edit: string; // what was done, for the report
  mutated: string; // the line as mutated ("" for a deleted line)
}

const EQUIVALENT = "// mutation: equivalent";
const COMMENT = /^\s*(\/\/|\/\*|\*)/;
const LOGGING = /\b(log|logger)\??\.(debug|info|warn|error)\b|\bconsole\./;
const GUARD = /^\s*(\}\s*else\s+)?if \(.*\)\s*(throw|return|continue|break)\b.*;\s*(\/\/.*)?$/;
const FLIPS: Record<string, string> = { "<": "<=", "<=": "<", ">": ">=", ">=": ">", "===": "!==", "!==": "===" };
const COMPARISON = / (<=|>=|===|!==|<|>) /g;

/** The line with string and template literals and a trailing comment blanked, so operators there are not mutated. */
function codeOnly(line: string): string {
  let out = "";
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\") {
        out += "  ";
        i++;
      } else {
        if (c === quote) quote = null;
        out += quote ? " " : c;
      }
      continue;
    }
    if (c === "/" && line[i + 1] === "/") return out + " ".repeat(line.length - i);
    if (c === '"' || c === "'" || c === "`") quote = c;
    out += c;
  }
  return out;
}

/** The end (exclusive) of the parenthesised group opening at `open`, or -1 when it runs past the line. */
function closingParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === "(") depth++;
    else if (code[i] === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

/** Every mutant of one source file, in line order. */
export function mutantsOf(file: string, source: string): Mutant[] {
  const mutants: Mutant[] = [];
  source.split("\n").forEach((line, index) => {
    if (COMMENT.test(line) || line.includes(EQUIVALENT) || LOGGING.test(line) || line.trim() === "") return;
    const at = { file, line: index + 1 };
    const code = codeOnly(line);
    if (GUARD.test(code)) mutants.push({ ...at, edit: `delete guard: ${line.trim()}`, mutated: "" });
    const ifAt = code.search(/\bif \(/);
    if (ifAt >= 0) {
      const open = code.indexOf("(", ifAt);
      const close = closingParen(code, open);
      if (close > 0) {
        const condition = line.slice(open + 1, close - 1);
        mutants.push({
          ...at,
          edit: `negate if (${condition})`,
          mutated: `${line.slice(0, open)}(!(${condition}))${line.slice(close)}`,
        });
      }
    }
    for (const match of code.matchAll(COMPARISON)) {
      const op = match[1]!;
      const start = match.index! + 1;
      mutants.push({
        ...at,
        edit: `${op} -> ${FLIPS[op]} in: ${line.trim()}`,
        mutated: line.slice(0, start) + FLIPS[op] + line.slice(start + op.length),
      });
    }
  });
  return mutants;
}

function applyMutant(source: string, mutant: Mutant): string {
  const lines = source.split("\n");
  lines[mutant.line - 1] = mutant.mutated;
  return lines.join("\n");
}

type Outcome = "killed" | "survived" | "timeout";

/** Marks every process a run starts, so an interrupted pass can stop them too. */
const RUN_MARKER = `mutate-${process.pid}-${crypto.randomUUID()}`;

/** Runs `tests` in `dir`, one bun test at a time; stops whatever the run left behind. */
async function runTests(dir: string, tests: string[], timeoutMs: number): Promise<{ outcome: Outcome; ms: number }> {
  const marker = RUN_MARKER;
  const started = Date.now();
  const child = Bun.spawn([process.execPath, "test", ...tests, "--bail", "--timeout", "60000"], {
    cwd: dir,
    env: { ...process.env, [TEST_RUN_MARKER]: marker },
    stdout: "ignore",
    stderr: "ignore",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  killProcesses(await leftoverProcesses(marker, timedOut ? 0 : 2_000));
  return { outcome: timedOut ? "timeout" : code === 0 ? "survived" : "killed", ms: Date.now() - started };
}

/** A copy of the repository (without .git; node_modules linked) that mutants are applied to. */
function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "stablegate-mutate-"));
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (path) => {
      const rel = path.slice(ROOT.length + 1).split("/")[0];
      return rel !== ".git" && rel !== "node_modules" && rel !== "dist";
    },
  });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.flatMap((arg, i) => (args[i - 1] === "--only" ? [arg] : []));
  for (const file of only) {
    if (!TARGETS[file]) throw new Error(`--only ${file}: not a target (${Object.keys(TARGETS).join(", ")})`);
  }
  const files = only.length > 0 ? only : Object.keys(TARGETS);
  const mutants = files.flatMap((file) => mutantsOf(file, readFileSync(join(ROOT, file), "utf8")));

  if (args.includes("--list")) {
    for (const m of mutants) console.log(`${m.file}:${m.line}  ${m.edit}`);
    console.log(`${mutants.length} mutants`);
    return;
  }

  const dir = scratchCopy();
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.on("SIGINT", () => {
    killProcesses(markedProcesses(RUN_MARKER));
    cleanup();
    process.exit(130);
  });
  const survivors: Mutant[] = [];
  const counts = { killed: 0, survived: 0, timeout: 0 };
  const skipped: string[] = [];
  try {
    for (const file of files) {
      const tests = TARGETS[file]!;
      const ofFile = mutants.filter((m) => m.file === file);
      if (ofFile.length === 0) continue;
      const original = readFileSync(join(dir, file), "utf8");
      const baseline = await runTests(dir, tests, 600_000);
      if (baseline.outcome !== "survived") {
        skipped.push(`${file}: its tests fail unmutated (${baseline.outcome}); mutants not run`);
        console.log(skipped.at(-1));
        continue;
      }
      // A mutant may loop forever (a flipped loop bound): three times the clean run is plenty.
      const timeoutMs = Math.max(60_000, baseline.ms * 3);
      for (const mutant of ofFile) {
        writeFileSync(join(dir, file), applyMutant(original, mutant));
        try {
          const { outcome, ms } = await runTests(dir, tests, timeoutMs);
          counts[outcome]++;
          if (outcome === "survived") survivors.push(mutant);
          console.log(
            `${outcome.padEnd(8)} ${(ms / 1000).toFixed(1).padStart(6)}s  ${mutant.file}:${mutant.line}  ${mutant.edit}`,
          );
        } finally {
          writeFileSync(join(dir, file), original);
        }
      }
    }
  } finally {
    cleanup();
  }

  const made = counts.killed + counts.survived + counts.timeout;
  console.log(
    `\nmutants made: ${made}, killed: ${counts.killed}, survived: ${counts.survived}, timeout: ${counts.timeout}`,
  );
  for (const line of skipped) console.log(`skipped ${line}`);
  if (survivors.length > 0) console.log("survivors:");
  for (const m of survivors) console.log(`  ${m.file}:${m.line}  ${m.edit}`);
}

if (import.meta.main) await main();
