import type { Logger } from "./log.ts";
import { sleep } from "./sleep.ts";

/** Runs `work` every `intervalMs` until `signal` aborts; a failure is logged and the loop goes on. */
export async function runEvery(name: string, intervalMs: number, work: () => void, deps: { log: Logger; signal: AbortSignal }): Promise<void> {
  while (!deps.signal.aborted) {
    try {
      work();
    } catch (error) {
      deps.log.error(`${name} failed`, { error });
    }
    await sleep(intervalMs, deps.signal);
  }
}
