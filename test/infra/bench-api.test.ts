/**
 * bench/api.ts refuses what it cannot measure before it starts anything, and runs with several
 * replicas on PostgreSQL; the figures themselves are run by hand (docs/development.md).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runToExit } from "../support/cli.ts";
import { childEnv, REPO_ROOT } from "../support/serve-process.ts";
import { builtBinary } from "../support/stack.ts";

async function bench(...args: string[]) {
  return runToExit([process.execPath, join(REPO_ROOT, "bench/api.ts"), ...args], { env: childEnv({}) });
}

describe("bench/api.ts", () => {
  test("a --replicas that is not a whole number from 1, and an unknown --db, are refused", async () => {
    expect(await bench("--replicas", "1.5")).toEqual({
      code: 2,
      stdout: "",
      stderr: "bench: --replicas needs a whole number from 1\n",
      timedOut: false,
    });
    expect(await bench("--db", "mysql")).toEqual({
      code: 2,
      stdout: "",
      stderr: 'bench: --db must be sqlite, postgres or both, not "mysql"\n',
      timedOut: false,
    });
  });

  test("--replicas 2 on PostgreSQL runs both replicas, then one against both, and reports their figures without errors", async () => {
    await builtBinary();
    const run = await bench("--db", "postgres", "--replicas", "2", "--seconds", "1", "--clients", "4");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain("PostgreSQL, 2 replicas");
    expect(run.stdout).toMatch(/creates: POST \/api\/v1\/payments\s+\d+/);
    // The rounds of one replica against both, on the same database.
    expect(run.stdout).toMatch(/median 2 replicas \/ 1: \d+\.\d\dx \(\d of 6 rounds at 1x or more\)/);
    expect(run.stdout).not.toContain("errors, first:");
  }, 120_000);
});
