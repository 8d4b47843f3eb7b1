/**
 * Processes a test run left behind. `bun run test` gives bun test a marker in its environment,
 * unique to the run; every process the tests start inherits it (chains, servers, browsers), so
 * whatever still carries it once bun test has exited was started by the tests and never stopped.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable that marks a test run's processes. */
export const TEST_RUN_MARKER = "TEST_RUN_MARKER";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  command: string;
}

/** Every live process on the machine this user may read but this one (zombies are dead). */
export function liveProcesses(): Array<ProcessInfo & { environ: string }> {
  const found: Array<ProcessInfo & { environ: string }> = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z" || state === "X") continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      found.push({ pid, ppid: Number(ppid), command, environ: readFileSync(`/proc/${pid}/environ`, "latin1") });
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return found;
}

/**
 * The cluster_name of the PostgreSQL a test process starts (test/support/postgres.ts). Its
 * postmaster keeps the marker in its environment, but the processes it forks write their titles
 * over theirs ("postgres: <cluster_name>: checkpointer"): those are known by the title. A digest
 * of the marker, as PostgreSQL cuts a cluster_name at 63 bytes.
 */
export const postgresClusterName = (marker: string | undefined): string =>
  marker ? `stablegate-test-${createHash("sha256").update(marker).digest("hex").slice(0, 16)}` : "stablegate-test";

/** Live processes whose environment holds TEST_RUN_MARKER=`marker`, and the run's PostgreSQL. */
export function markedProcesses(marker: string): ProcessInfo[] {
  const needle = `\0${TEST_RUN_MARKER}=${marker}\0`;
  const title = `postgres: ${postgresClusterName(marker)}: `;
  return liveProcesses()
    .filter((p) => `\0${p.environ}`.includes(needle) || p.command.startsWith(title))
    .map(({ pid, ppid, command }) => ({ pid, ppid, command }));
}

/** SIGKILL each of `processes`; one already gone is no error. */
export function killProcesses(processes: ProcessInfo[]): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * The run's processes still alive after a grace period: a process signalled just before bun
 * test exited may still be on its way out, and a PostgreSQL watchdog may still be removing a
 * data directory of many databases on a slow disk. Polls until none is left or the grace is over.
 */
export async function leftoverProcesses(marker: string, graceMs = 20_000): Promise<ProcessInfo[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = markedProcesses(marker);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await Bun.sleep(100);
  }
}
