/**
 * Leases on both engines: one holder at a time, a larger token for every new holder, renewal
 * only by the unexpired holder, and fencing: a holder that lost its lease writes nothing, in
 * the very transaction that would have written. On PostgreSQL, connections racing for a free
 * lease get it once, and a takeover waits for a fenced write in progress.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { type Db, sql } from "../../src/db/engine.ts";
import { PgDb } from "../../src/db/postgres.ts";
import { createLease, LeaseLostError } from "../../src/leases/lease.ts";
import { createLeaseStore } from "../../src/leases/store.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";

const HOUR = 3_600_000;
const PAUSED_HOLDER = resolve(import.meta.dir, "../support/paused-holder.ts");

describe.each(ENGINES)("leases on %s", (engine) => {
  let store: TestStore;
  let db: Db;
  let leases: ReturnType<typeof createLeaseStore>;
  let n = 0;
  /** A lease name of its own for each test, so tests pass in any order. */
  const fresh = () => `lease-${++n}`;
  const expire = (name: string) => db.run(sql`UPDATE leases SET expires_at = 0 WHERE name = ${name}`);

  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    leases = createLeaseStore(db);
  });
  afterAll(() => store.close());

  test("the first taker holds it; another is refused until it expires, then gets the next token", async () => {
    const name = fresh();
    expect(await leases.take(name, "a", HOUR)).toBe(1);
    expect(await leases.take(name, "b", HOUR)).toBeNull();
    expect(await leases.holds(name, "a", 1)).toBe(true);
    await expire(name);
    expect(await leases.holds(name, "a", 1)).toBe(false);
    expect(await leases.take(name, "b", HOUR)).toBe(2);
    expect((await leases.all()).find((row) => row.name === name)).toMatchObject({ holder: "b", token: 2 });
  });

  test("a holder taking its own unexpired lease again (restarted) gets it at once, with a new token", async () => {
    const name = fresh();
    expect(await leases.take(name, "a", HOUR)).toBe(1);
    expect(await leases.take(name, "a", HOUR)).toBe(2);
    expect(await leases.holds(name, "a", 1)).toBe(false);
    expect(await leases.holds(name, "a", 2)).toBe(true);
    expect(await leases.take(name, "b", HOUR)).toBeNull();
  });

  test("only the unexpired holder renews; after a takeover the old token holds nothing", async () => {
    const name = fresh();
    const token = (await leases.take(name, "a", HOUR))!;
    expect(await leases.renew(name, "a", token, HOUR)).toBe(true);
    expect(await leases.renew(name, "b", token, HOUR)).toBe(false);
    await expire(name);
    expect(await leases.renew(name, "a", token, HOUR)).toBe(false); // lapsed: free to take, so not renewed
    const next = (await leases.take(name, "b", HOUR))!;
    expect(next).toBe(token + 1);
    expect(await leases.renew(name, "a", token, HOUR)).toBe(false);
    expect(await leases.holds(name, "a", token)).toBe(false);
    expect(await leases.holds(name, "b", next)).toBe(true);
  });

  test("release lets another take it at once; a stale release changes nothing", async () => {
    const name = fresh();
    const token = (await leases.take(name, "a", HOUR))!;
    await leases.release(name, "a", token);
    const next = (await leases.take(name, "b", HOUR))!;
    await leases.release(name, "a", token);
    expect(await leases.holds(name, "b", next)).toBe(true);
  });

  test("a lost lease stops its work, fences its writes, and is taken again once free", async () => {
    const name = fresh();
    await db.exec("CREATE TABLE IF NOT EXISTS fenced_writes (lease TEXT NOT NULL, n BIGINT NOT NULL)");
    let started = 0;
    let stopped = 0;
    const lease = createLease({
      store: leases,
      name,
      holder: "a",
      log: silentLogger,
      ttlMs: 2_000,
      renewEveryMs: 100,
      takeEveryMs: 20,
      work: (signal) =>
        new Promise<void>((resolve) => {
          started++;
          signal.addEventListener("abort", () => {
            stopped++;
            resolve();
          });
        }),
    });
    const write = (value: number) =>
      db.transaction(async () => {
        await lease.assertHeld();
        await db.run(sql`INSERT INTO fenced_writes (lease, n) VALUES (${name}, ${value})`);
      });
    const written = async () =>
      (await db.all<{ n: number }>(sql`SELECT n FROM fenced_writes WHERE lease = ${name} ORDER BY n`)).map(
        (row) => row.n,
      );
    const abort = new AbortController();
    const running = lease.run(abort.signal);
    try {
      await waitFor(() => lease.status().held, 10_000, "the lease to be taken");
      expect(lease.status()).toMatchObject({ held: true, token: 1, terms: 1 });
      await write(1);
      // It lapses (as a paused holder's would) and another replica takes it: before a even
      // notices, its writes are refused, in the transaction that would have made them. The lapse
      // and the takeover are one transaction: a's renewal (every 100 ms) finding the lease lapsed
      // in between would take it back first, as it did on a loaded machine.
      const takeover = db.transaction(async () => {
        await expire(name);
        return leases.take(name, "b", HOUR);
      });
      expect(await takeover).toBe(2);
      await expect(write(2)).rejects.toThrow(LeaseLostError);
      expect(await written()).toEqual([1]);
      // Its next renewal is refused: the work stops, and a waits while b holds the lease.
      await waitFor(() => stopped === 1 && !lease.status().held, 10_000, "a's work to stop");
      // Released by b, it goes back to a, with a larger token, and the work starts again.
      await leases.release(name, "b", 2);
      await waitFor(() => lease.status().held, 10_000, "a's second term");
      expect(lease.status()).toMatchObject({ held: true, token: 3, terms: 2 });
      expect(started).toBe(2);
      await write(3);
    } finally {
      abort.abort();
      await running;
    }
    expect(stopped).toBe(2);
    expect(lease.status()).toMatchObject({ held: false, token: null });
    await expect(write(4)).rejects.toThrow(LeaseLostError);
    expect(await written()).toEqual([1, 3]);
    // Stopping released it: another takes it at once.
    expect(await leases.take(name, "c", HOUR)).toBe(4);
  });

  if (engine === "postgres") {
    test("connections racing for a free lease: exactly one gets it", async () => {
      const others = await Promise.all(Array.from({ length: 4 }, () => PgDb.open(store.databaseUrl!)));
      try {
        for (let round = 0; round < 5; round++) {
          const name = fresh();
          const tokens = await Promise.all(
            others.map((other, i) => Promise.resolve().then(() => createLeaseStore(other).take(name, `r${i}`, HOUR))),
          );
          expect(tokens.filter((t) => t !== null)).toEqual([1]);
        }
      } finally {
        for (const other of others) await other.close();
      }
    });

    test("a takeover waits for the holder's fenced write in progress, which then commits", async () => {
      const name = fresh();
      const token = (await leases.take(name, "a", HOUR))!;
      const other = await PgDb.open(store.databaseUrl!, { statementTimeoutMs: 300, answerWithinMs: 5_000 });
      try {
        await db.transaction(async () => {
          expect(await leases.holds(name, "a", token)).toBe(true);
          // The check locked the row (FOR SHARE) until this transaction ends: another replica can
          // neither expire the lease nor take it meanwhile; its statement waits until cancelled.
          await expect(other.run(sql`UPDATE leases SET expires_at = 0 WHERE name = ${name}`)).rejects.toThrow(
            "statement timeout",
          );
        });
        await other.run(sql`UPDATE leases SET expires_at = 0 WHERE name = ${name}`);
        expect(await createLeaseStore(other).take(name, "b", HOUR)).toBe(token + 1);
      } finally {
        await other.close();
      }
    });

    test("a holder frozen inside a fenced write (SIGSTOP) loses its session: the lease is taken, its write fails", async () => {
      const name = fresh();
      const paused = Bun.spawn([process.execPath, PAUSED_HOLDER, store.databaseUrl!, name, "1000"], {
        stdout: "pipe",
        stderr: "inherit",
      });
      try {
        const stdout = paused.stdout.getReader();
        const said = new TextDecoder().decode((await stdout.read()).value);
        expect(said).toContain("in transaction");
        await waitFor(
          async () => (await leases.all()).find((row) => row.name === name)!.remaining_ms <= 0,
          5_000,
          "it to expire",
        );
        // Without PostgreSQL ending the frozen session, this would wait on its row lock until
        // cancelled (25 s): every other replica's database work held up by one paused process.
        expect(await leases.take(name, "b", HOUR)).toBe(2);
        expect(await leases.holds(name, "b", 2)).toBe(true);
        // Woken, it finds its session gone: the write it was about to make fails, and nothing changed.
        paused.kill("SIGCONT");
        let rest = "";
        for (let chunk = await stdout.read(); !chunk.done; chunk = await stdout.read())
          rest += new TextDecoder().decode(chunk.value);
        expect(rest).toStartWith("failed: ");
        expect((await leases.all()).find((row) => row.name === name)).toMatchObject({ holder: "b", token: 2 });
      } finally {
        paused.kill("SIGKILL");
        await paused.exited;
      }
    }, 20_000);
  }
});
