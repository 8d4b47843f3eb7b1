import { sleep } from "../lib/sleep.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../lib/log.ts";
import type { Lifecycle } from "./lifecycle.ts";

/** Expires pending payments on time; needs no chain, so it runs even while the RPC is down. */
export async function runExpiry(deps: { db: Db; lifecycle: Lifecycle; log: Logger; intervalMs: number }, signal: AbortSignal): Promise<void> {
  const expire = deps.db.transaction(() => deps.lifecycle.expireDue());
  while (!signal.aborted) {
    try {
      const count = expire.immediate();
      if (count > 0) deps.log.info("payments expired", { count });
    } catch (error) {
      deps.log.error("expiry failed", { error });
    }
    await sleep(deps.intervalMs, signal);
  }
}
