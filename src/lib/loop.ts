import type { Logger } from "./log.ts";
import { sleep } from "./sleep.ts";

export interface LoopDeps {
  log: Logger;
  signal: AbortSignal;
  /** The pause between rounds; a waker's `wait` lets other code cut it short. */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Runs `work` every `intervalMs` until `signal` aborts; a failure is logged and the loop goes on. */
export async function runEvery(name: string, intervalMs: number, work: () => unknown, deps: LoopDeps): Promise<void> {
  const wait = deps.wait ?? sleep;
  while (!deps.signal.aborted) {
    try {
      await work();
    } catch (error) {
      deps.log.error(`${name} failed`, { error });
    }
    await wait(intervalMs, deps.signal);
  }
}
