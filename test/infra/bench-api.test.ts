/**
 * bench/api.ts refuses what it cannot measure before it starts anything: the figures are run by
 * hand (README, Development), the refusals are checked here.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { childEnv, REPO_ROOT } from "../support/serve-process.ts";

async function bench(...args: string[]) {
  const proc = Bun.spawn([process.execPath, join(REPO_ROOT, "bench/api.ts"), ...args], {
    env: childEnv({}),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

describe("bench/api.ts flags", () => {
  test("--replicas 2 is refused with the reason, before anything runs", async () => {
    const run = await bench("--replicas", "2", "--db", "postgres");
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "bench: --replicas 2: several replicas on one database need the leases of issue 13, not built yet; only --replicas 1 runs\n",
    });
  });

  test("a --replicas that is not a whole number, and an unknown --db, are refused", async () => {
    expect(await bench("--replicas", "1.5")).toEqual({
      code: 2,
      stdout: "",
      stderr: "bench: --replicas needs a whole number\n",
    });
    expect(await bench("--db", "mysql")).toEqual({
      code: 2,
      stdout: "",
      stderr: 'bench: --db must be sqlite, postgres or both, not "mysql"\n',
    });
  });
});
