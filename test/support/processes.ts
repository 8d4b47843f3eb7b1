/** What a piece of test setup starts: the child processes of this test process, watched from /proc. */
import { liveProcesses, type ProcessInfo } from "../../scripts/test-leftovers.ts";

const children = () => liveProcesses().filter((p) => p.ppid === process.pid);

/**
 * Runs `fn`, sampling every 20 ms which child processes it starts (its error alone would not
 * show them); `alive` is those of them still running once it has settled (then killed).
 */
export async function childrenDuring(
  fn: () => Promise<unknown>,
): Promise<{ error: unknown; started: ProcessInfo[]; alive: string[] }> {
  const before = new Set(children().map((p) => p.pid));
  const started = new Map<number, ProcessInfo>();
  const sample = () => {
    for (const p of children()) if (!before.has(p.pid)) started.set(p.pid, p);
  };
  const timer = setInterval(sample, 20);
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  } finally {
    clearInterval(timer);
  }
  const alive = children().filter((p) => started.has(p.pid));
  // Killed once recorded, so that a test that finds leftovers does not leave them running.
  for (const { pid } of alive) process.kill(pid, "SIGKILL");
  return { error, started: [...started.values()], alive: alive.map((p) => `${p.pid} ${p.command}`) };
}
