import type { Db } from "./index.ts";
import { inTransaction } from "./transaction.ts";

export type GroupCommit = ReturnType<typeof createGroupCommit>;

/**
 * Group commit: writes queued within one turn of the event loop share a single transaction,
 * so a burst of concurrent requests pays for one fsync instead of one each. Each write of a
 * batch of several runs in its own savepoint, so one that throws is rolled back alone; every caller's promise settles
 * only after the shared COMMIT, so nothing is acknowledged before it is durable.
 */
export function createGroupCommit(db: Db) {
  type Job = { work: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };
  let queue: Job[] = [];

  const flush = () => {
    const jobs = queue;
    queue = [];
    if (jobs.length === 1) {
      // Alone in its transaction, a job needs no savepoint: a throw rolls back only its own work.
      const job = jobs[0]!;
      try {
        job.resolve(inTransaction(db, job.work));
      } catch (error) {
        job.reject(error);
      }
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      inTransaction(db, () => {
        for (const job of jobs) {
          try {
            outcomes.push({ ok: true, value: inTransaction(db, job.work) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  };

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      });
    },
  };
}
