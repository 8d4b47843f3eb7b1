/**
 * Group commit shares one transaction between the writes queued in the same few turns of the
 * event loop (while each turn adds one). A batch runs without savepoints; when one of its writes
 * throws, the batch is rolled back and run again with a savepoint per write, so the one that threw
 * takes back its own rows and nothing else, and the others are committed and acknowledged once.
 * The batches after a failed one start with savepoints. A write alone in its batch needs none.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { sql } from "../../src/db/engine.ts";
import { createGroupCommit } from "../../src/db/group-commit.ts";
import { type Db, openDb } from "../../src/db/index.ts";
import { countingTransactions } from "../support/counting-db.ts";
import { makeTempDir } from "../support/server.ts";

let dir: string;
let db: Db;

beforeAll(async () => {
  dir = makeTempDir();
  db = openDb(dir);
  await db.exec("CREATE TABLE notes (job TEXT NOT NULL, n INTEGER NOT NULL) STRICT");
});

afterAll(async () => {
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What another connection to the same file sees of `table`: only committed rows. */
function committedRows(table = "notes"): Array<{ job: string; n: number }> {
  const reader = new Database(join(dir, "stablegate.db"), { readonly: true });
  try {
    return reader.query<{ job: string; n: number }, []>(`SELECT job, n FROM ${table} ORDER BY job, n`).all();
  } finally {
    reader.close();
  }
}

test("a job that throws in a batch rolls back its own writes and no other job's", async () => {
  const groupCommit = createGroupCommit(db);
  const insert = (job: string, n: number) => db.run(sql`INSERT INTO notes (job, n) VALUES (${job}, ${n})`);
  // What the last job's batch-mates had committed when it ran: nothing if they share its transaction.
  let committedBeforeLast: unknown[] | undefined;
  const write = (job: string, fail: boolean) =>
    groupCommit.run(async () => {
      if (job === "c") committedBeforeLast = committedRows();
      await insert(job, 1);
      await insert(job, 2);
      if (fail) throw new Error(`job ${job} failed after writing`);
      return job;
    });

  // Queued in the same turn, so they share one transaction.
  const outcomes = await Promise.allSettled([write("a", false), write("b", true), write("c", false)]);

  expect(committedBeforeLast).toEqual([]);
  expect(outcomes).toEqual([
    { status: "fulfilled", value: "a" },
    { status: "rejected", reason: new Error("job b failed after writing") },
    { status: "fulfilled", value: "c" },
  ]);
  expect(committedRows()).toEqual([
    { job: "a", n: 1 },
    { job: "a", n: 2 },
    { job: "c", n: 1 },
    { job: "c", n: 2 },
  ]);
});

test("a job alone runs in the transaction itself, without a savepoint: it commits, or rolls back and is refused", async () => {
  // Every transaction and savepoint goes through db.transaction: count them.
  const { counted, transactions } = countingTransactions(db);
  const groupCommit = createGroupCommit(counted);
  // A table of its own: the other test reads every row of `notes`.
  await db.exec("CREATE TABLE alone_notes (job TEXT NOT NULL, n INTEGER NOT NULL) STRICT");
  const insert = (job: string, n: number) => db.run(sql`INSERT INTO alone_notes (job, n) VALUES (${job}, ${n})`);

  expect(await groupCommit.run(() => insert("alone", 1))).toBe(1);
  expect(transactions()).toBe(1);
  const failed = groupCommit.run(async () => {
    await insert("alone-failed", 1);
    throw new Error("alone and failed");
  });
  await expect(failed).rejects.toThrow("alone and failed");
  expect(transactions()).toBe(2);
  expect(committedRows("alone_notes")).toEqual([{ job: "alone", n: 1 }]);

  // Two in one turn: the shared transaction only, no savepoint for either.
  await Promise.all([groupCommit.run(async () => 1), groupCommit.run(async () => 2)]);
  expect(transactions()).toBe(3);
});

test("a batch whose write throws is run again with a savepoint per write, and so are the batches after it; what a rolled-back run queued for after the commit never runs", async () => {
  const { counted, transactions } = countingTransactions(db);
  const groupCommit = createGroupCommit(counted);
  await db.exec("CREATE TABLE rerun_notes (job TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0) STRICT");
  const runs: string[] = [];
  const committed: string[] = [];
  const write = (job: string, fail = false) =>
    groupCommit.run(async () => {
      runs.push(job);
      await db.run(sql`INSERT INTO rerun_notes (job) VALUES (${job})`);
      db.afterCommit(() => committed.push(job));
      if (fail) throw new Error(`job ${job} failed`);
      return job;
    });

  const outcomes = await Promise.allSettled([write("a"), write("b", true), write("c")]);
  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  // The first run stopped at b's throw; the second ran all three, each in a savepoint.
  expect(runs).toEqual(["a", "b", "a", "b", "c"]);
  expect(transactions()).toBe(1 + 1 + 3);
  expect(committed).toEqual(["a", "c"]);
  expect(committedRows("rerun_notes").map((row) => row.job)).toEqual(["a", "c"]);

  // The next batch starts with savepoints: the shared transaction and one for each write.
  const before = transactions();
  expect(await Promise.all([write("d"), write("e")])).toEqual(["d", "e"]);
  expect(transactions() - before).toBe(3);
});

test("writes queued over consecutive turns of the event loop, as requests arrive, share one transaction", async () => {
  const { counted, transactions } = countingTransactions(db);
  const groupCommit = createGroupCommit(counted);
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const jobs: Array<Promise<number>> = [];
  for (let i = 0; i < 3; i++) {
    jobs.push(groupCommit.run(async () => i));
    await nextTurn();
  }
  expect(await Promise.all(jobs)).toEqual([0, 1, 2]);
  // One shared transaction, not three transactions alone.
  expect(transactions()).toBe(1);
});
