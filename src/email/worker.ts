import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { runEvery } from "../lib/loop.ts";
import { createWaker } from "../lib/sleep.ts";
import { emailRetryDelay } from "./schedule.ts";
import type { EmailStore, OutboxRow } from "./store.ts";
import { type OutgoingEmail, type SendEmail, smtpError } from "./transport.ts";

export interface EmailWorkerDeps {
  store: EmailStore;
  send: SendEmail;
  /** This replica, the same across its restarts: its claims are due again at once when it restarts. */
  claimer: string;
  clock: Clock;
  log: Logger;
  /** The email as it goes out, from its outbox row (sender, Reply-To, attachments). */
  outgoing: (row: OutboxRow) => Promise<OutgoingEmail>;
  schedule: readonly number[];
  /** How long a send may take; a claim outlives it, so a crashed replica's rows fall due again. */
  timeoutMs: number;
  pollMs?: number;
  concurrency?: number;
  /** At shutdown, how long sends in flight may take (the whole shutdown keeps to 8 s, src/server.ts). */
  shutdownGraceMs?: number;
}

export type EmailWorker = ReturnType<typeof createEmailWorker>;

/**
 * Sends the outbox: claims due rows (so replicas never send one at once), sends each, and marks
 * it sent, or due again on the schedule, or failed once the schedule runs out or the server
 * refuses it for good. A row is marked only after the server accepted it: a process killed in
 * between sends it again after restart (same Message-ID, which mail clients de-duplicate on).
 */
export function createEmailWorker(deps: EmailWorkerDeps) {
  const { store, clock, log, claimer } = deps;
  const concurrency = deps.concurrency ?? 4;
  const running = new Set<Promise<void>>();
  const waker = createWaker();
  let rounds = 0;

  async function deliver(row: OutboxRow): Promise<void> {
    try {
      await deps.send(await deps.outgoing(row));
      await store.markSent(row.id, clock.now());
    } catch (error) {
      const { message, permanent } = smtpError(error);
      const delay = permanent ? null : emailRetryDelay(deps.schedule, row.attempts + 1);
      const now = clock.now();
      await store.markFailed(row.id, message, delay === null ? null : now + delay, now);
      const fields = { email_id: row.id, kind: row.kind, attempts: row.attempts + 1, error: message };
      if (delay === null) log.warn("email given up", fields);
      else log.info("email attempt failed; will retry", { ...fields, retry_in_ms: delay });
    }
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    const free = concurrency - running.size;
    if (free > 0) {
      for (const row of await store.claimDue(now, free, now + deps.timeoutMs * 3, claimer)) {
        const task = deliver(row)
          .catch((error) => log.error("email send crashed", { email_id: row.id, error }))
          .finally(() => {
            running.delete(task);
            waker.wake();
          });
        running.add(task);
      }
    }
    rounds++;
  }

  return {
    tick,
    wake: waker.wake,
    activity: () => ({ emailRounds: rounds, emailSending: running.size }),
    async run(signal: AbortSignal): Promise<void> {
      // What this replica claimed before it was killed is due now, not when the claims lapse.
      await store.release(claimer, clock.now());
      await runEvery("email worker", deps.pollMs ?? 500, tick, { log, signal, wait: waker.wait });
      // Sends in flight get a grace period; one still going after it is left claimed by this
      // replica, and due again at once when it restarts (the release above).
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all([...running]),
        new Promise((resolve) => (timer = setTimeout(resolve, deps.shutdownGraceMs ?? 5_000))),
      ]);
      clearTimeout(timer);
    },
  };
}
