import type { Db } from "./engine.ts";

export type GroupCommit = ReturnType<typeof createGroupCommit>;

/**
 * Group commit, where it pays: SQLite's commit waits for its own fsync, so writes queued within
 * the same few turns of the event loop (GATHER_MS) share a single transaction and a burst of concurrent requests pays
 * for one fsync instead of one each. Every caller's promise settles only after the shared COMMIT,
 * so nothing is acknowledged before it is durable. PostgreSQL shares WAL flushes between
 * sessions already, and a shared transaction would hold every row it wrote across the others'
 * round trips: there each write is a transaction of its own.
 *
 * A write that throws must fail alone. A savepoint around each write would see to it, but SQLite
 * copies every page a savepoint changes aside first (about 13 for a payment's insert, a tenth of a
 * create's cost); so a batch runs without them, and only when one of its writes throws is the
 * whole batch rolled back and run again, each write in a savepoint, and the next batches too for
 * a while (CAREFUL_BATCHES), so that requests that fail on purpose cannot make every batch run
 * twice. A write may therefore run more than once: it must touch nothing but the database, and
 * leave what should happen after the commit to `db.afterCommit` (a rolled-back run's is dropped).
 */
/**
 * How long a batch may keep gathering after its first write, at most. Requests come in over
 * several turns of the event loop (each poll reads what the sockets hold by then), so a batch
 * flushed at the first turn takes whoever happened to be parsed by then and leaves the rest to pay
 * for a commit of their own: while a turn still adds writes, the batch waits for the next one.
 */
const GATHER_MS = 2;

/** How many batches after a failed one run with savepoints from the start. */
const CAREFUL_BATCHES = 64;

export function createGroupCommit(db: Db) {
  if (db.engine === "postgres") {
    return {
      run: <T>(work: () => Promise<T>): Promise<T> => db.transaction(work),
      // One statement is atomic by itself: BEGIN and COMMIT would only add two round trips.
      runStatement: <T>(statement: () => Promise<T>): Promise<T> => statement(),
    };
  }

  type Job = { work: () => Promise<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void };
  let queue: Job[] = [];
  /** Batches still to run with a savepoint per write, after one whose write threw. */
  let careful = 0;

  const flush = async () => {
    const jobs = queue;
    queue = [];
    if (jobs.length === 1) {
      // Alone in its transaction, a job needs no savepoint: a throw rolls back only its own work.
      const job = jobs[0]!;
      db.transaction(job.work).then(job.resolve, job.reject);
      return;
    }
    if (careful === 0) {
      if (await runTogether(jobs)) return;
      careful = CAREFUL_BATCHES;
    } else careful--;
    await runEachInSavepoint(jobs);
  };

  /** The jobs one after another in one transaction; false, with nothing settled, if any threw. */
  const runTogether = async (jobs: Job[]): Promise<boolean> => {
    const values: unknown[] = [];
    try {
      await db.transaction(async () => {
        for (const job of jobs) values.push(await job.work());
      });
    } catch {
      return false;
    }
    for (const [i, job] of jobs.entries()) job.resolve(values[i]);
    return true;
  };

  /** The jobs in one transaction, each in a savepoint of its own: one that throws fails alone. */
  const runEachInSavepoint = async (jobs: Job[]): Promise<void> => {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await db.transaction(async () => {
        for (const job of jobs) {
          try {
            outcomes.push({ ok: true, value: await db.transaction(job.work) });
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

  /** Flushes at the first turn that adds no write to the batch (or once GATHER_MS have passed). */
  const gather = (since: number, seen: number) =>
    setImmediate(() => {
      if (queue.length > seen && performance.now() - since < GATHER_MS) gather(since, queue.length);
      else flush();
    });

  function run<T>(work: () => Promise<T>): Promise<T> {
    // Inside a transaction already, the write is a savepoint of it, not the next batch's.
    if (db.inTransaction()) return db.transaction(work);
    return new Promise<T>((resolve, reject) => {
      if (queue.length === 0) gather(performance.now(), 0);
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  return {
    run,
    /**
     * Work of exactly one statement. On SQLite it joins a batch as any write does (the shared
     * fsync is the point); on PostgreSQL it runs as that one statement, without a transaction.
     */
    runStatement: run,
  };
}
