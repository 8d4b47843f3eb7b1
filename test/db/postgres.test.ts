/**
 * PgDb against the test suite's real PostgreSQL: the Db interface the stores use, with
 * bun:sqlite's results (integers as number or bigint, booleans as 0/1), transactions that roll
 * back as SQLite's do, and a connection lost inside a transaction failing that transaction
 * instead of letting its remaining statements run outside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { sql } from "../../src/db/engine.ts";
import { PgDb, PostgresError } from "../../src/db/postgres.ts";
import { ConfigError, DatabaseUnavailableError } from "../../src/lib/errors.ts";
import { createTestDatabase } from "../support/postgres.ts";

let url: string;
let db: PgDb;

beforeAll(async () => {
  url = await createTestDatabase();
  db = await PgDb.open(url);
  await db.exec("CREATE TABLE t (id BIGINT PRIMARY KEY, label TEXT, amount BIGINT, at BIGINT)");
});
afterAll(() => db.close());

const insert = (id: number, label: string, amount: bigint | number, at: number, on: PgDb = db) =>
  on.run(sql`INSERT INTO t (id, label, amount, at) VALUES (${id}, ${label}, ${amount}, ${at})`);
const ids = async () => (await db.all<{ id: number }>(sql`SELECT id FROM t ORDER BY id`)).map((row) => row.id);
const backendPid = async (on: PgDb) => (await on.get<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`))!.pid;

describe("results as bun:sqlite gives them", () => {
  test("integers are numbers, or exact bigints when asked for; booleans are 0 and 1", async () => {
    const big = 2n ** 62n + 1n;
    await insert(1, "a", big, Date.now());
    const row = await db.get<{ id: number; amount: number }>(sql`SELECT id, amount FROM t WHERE id = ${1}`);
    expect(row!.id).toBe(1);
    expect(typeof row!.amount).toBe("number");
    const exact = await db.get<{ amount: bigint; n: bigint; yes: bigint }>(
      sql`SELECT amount, count(*) OVER () AS n, amount > 0 AS yes FROM t WHERE id = ${1}`,
      { bigints: true },
    );
    expect(exact).toEqual({ amount: big, n: 1n, yes: 1n });
    expect(await db.get<{ no: number }>(sql`SELECT 1 > 2 AS no`)).toEqual({ no: 0 });
  });

  test("values bind where they are written; get answers null when there is no row; run counts changes", async () => {
    await insert(2, "it's", 5n, 1_700_000_000_000);
    expect(await db.get<{ label: string }>(sql`SELECT label FROM t WHERE label = ${"it's"}`)).toEqual({
      label: "it's",
    });
    expect(await db.get(sql`SELECT * FROM t WHERE id = ${999}`)).toBeNull();
    await insert(3, "three", 0, 0);
    expect(await db.run(sql`UPDATE t SET label = 'x' WHERE id IN (2, 3)`)).toBe(2);
  });

  test("an error carries PostgreSQL's SQLSTATE, and the store goes on working", async () => {
    await insert(40, "first", 0, 0);
    let error: unknown;
    try {
      await insert(40, "dup", 0, 0);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("23505");
    expect(await ids()).toContain(40);
    await insert(41, "after the error", 0, 0);
    expect(await ids()).toContain(41);
  });
});

describe("transactions", () => {
  test("a throw rolls back the whole transaction; a nested one rolls back alone", async () => {
    await expect(
      db.transaction(async () => {
        await insert(10, "in", 0, 0);
        throw new Error("abandon");
      }),
    ).rejects.toThrow("abandon");
    expect(await ids()).not.toContain(10);

    await db.transaction(async () => {
      await insert(11, "outer", 0, 0);
      await expect(
        db.transaction(async () => {
          await insert(12, "inner", 0, 0);
          await insert(11, "dup", 0, 0); // fails: the savepoint is rolled back, the outer goes on
        }),
      ).rejects.toThrow(PostgresError);
    });
    expect(await ids()).toContain(11);
    expect(await ids()).not.toContain(12);
  });

  test("a connection killed inside a transaction fails it: nothing runs outside it, and the store recovers", async () => {
    let afterKill: unknown;
    await expect(
      db.transaction(async () => {
        await insert(20, "before", 0, 0);
        terminateFromElsewhere(await backendPid(db));
        try {
          await insert(21, "after", 0, 0);
        } catch (error) {
          afterKill = error;
        }
        // Were the connection silently replaced, this would commit on its own.
        await insert(22, "after, caught", 0, 0);
      }),
    ).rejects.toThrow(DatabaseUnavailableError);
    expect(afterKill).toBeInstanceOf(DatabaseUnavailableError);
    const admin = new SQL(url, { max: 1 });
    try {
      expect([...(await admin.unsafe("SELECT id FROM t WHERE id IN (20, 21, 22)"))]).toEqual([]);
    } finally {
      await admin.close();
    }
    // A new connection serves the next statements, and the next transaction.
    await insert(23, "later", 0, 0);
    await db.transaction(() => insert(24, "a later transaction", 0, 0));
    expect(await ids()).toContain(23);
    expect(await ids()).toContain(24);
  });
});

/** Ends backend `pid` from another process, as an administrator or a failover would, and waits for it. */
function terminateFromElsewhere(pid: number): void {
  const script = `const sql = new Bun.SQL(process.env.URL, { max: 1 });
    const [row] = await sql\`SELECT pg_terminate_backend(\${Number(process.env.PID)}) AS done\`;
    await sql.close();
    process.exit(row.done ? 0 : 1);`;
  const done = Bun.spawnSync([process.execPath, "-e", script], { env: { ...process.env, URL: url, PID: String(pid) } });
  if (done.exitCode !== 0) throw new Error(`could not terminate backend ${pid}: ${done.stderr.toString()}`);
}

describe("a statement that takes too long", () => {
  test("is cancelled by PostgreSQL after statement_timeout, and the connection goes on", async () => {
    // One connection, so the statement after the cancelled one shows which connection it ran on.
    const quick = await PgDb.open(url, { statementTimeoutMs: 200, answerWithinMs: 10_000, poolSize: 1 });
    try {
      const pid = await backendPid(quick);
      let error: unknown;
      try {
        await quick.run(sql`SELECT pg_sleep(5)`);
      } catch (caught) {
        error = caught;
      }
      expect((error as PostgresError).code).toBe("57014"); // query_canceled
      expect(await backendPid(quick)).toBe(pid);
    } finally {
      await quick.close();
    }
  });

  test("unanswered, fails its transaction and is left behind: a new connection serves what follows", async () => {
    const impatient = await PgDb.open(url, { statementTimeoutMs: 0, answerWithinMs: 300 });
    try {
      let pid = 0;
      let afterTimeout: unknown;
      await expect(
        impatient.transaction(async () => {
          pid = await backendPid(impatient);
          await insert(30, "lost", 0, 0, impatient);
          try {
            await impatient.run(sql`SELECT pg_sleep(3)`);
          } catch (error) {
            afterTimeout = error;
          }
          await insert(31, "after", 0, 0, impatient);
        }),
      ).rejects.toThrow("the database did not answer within 0.3 s");
      expect(afterTimeout).toBeInstanceOf(DatabaseUnavailableError);
      expect((afterTimeout as Error).message).toBe("the database did not answer within 0.3 s; try again shortly");
      const next = await backendPid(impatient);
      expect(next).not.toBe(pid);
      expect(await impatient.all(sql`SELECT id FROM t WHERE id IN (30, 31)`)).toEqual([]);
    } finally {
      await impatient.close();
    }
  });
});

describe("opening", () => {
  test("a wrong password or an unreachable server fails with the variable named and the password never shown", async () => {
    const wrong = new URL(url);
    wrong.password = "not-the-Secret-pw";
    await expect(PgDb.open(wrong.href)).rejects.toThrow(ConfigError);
    try {
      await PgDb.open(wrong.href);
    } catch (error) {
      expect((error as Error).message).toStartWith("STABLEGATE_DATABASE_URL: cannot connect:");
      expect((error as Error).message).not.toContain("not-the-Secret-pw");
    }
    const closed = new URL(url);
    closed.port = "1";
    await expect(PgDb.open(closed.href)).rejects.toThrow("STABLEGATE_DATABASE_URL: cannot connect");
  });
});
