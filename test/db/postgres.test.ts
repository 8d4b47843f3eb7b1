/**
 * PgDb against the test suite's real PostgreSQL: the synchronous API the stores use, with
 * bun:sqlite's results (integers as number or bigint, booleans as 0/1), transactions that roll
 * back as SQLite's do, and a connection lost inside a transaction failing that transaction
 * instead of letting its remaining statements run outside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PgDb, PostgresError } from "../../src/db/postgres.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { ConfigError } from "../../src/lib/errors.ts";
import { createTestDatabase } from "../support/postgres.ts";

let url: string;
let db: PgDb;

beforeAll(async () => {
  url = await createTestDatabase();
  db = PgDb.open(url);
  db.run("CREATE TABLE t (id BIGINT PRIMARY KEY, label TEXT, amount BIGINT, at BIGINT)");
});
afterAll(() => db.close());

const insert = () => db.query("INSERT INTO t (id, label, amount, at) VALUES (?, ?, ?, ?)");
const ids = () =>
  db
    .query<{ id: number }, []>("SELECT id FROM t ORDER BY id")
    .all()
    .map((row) => row.id);

describe("results as bun:sqlite gives them", () => {
  test("integers are numbers, or exact bigints on a safeIntegers statement; booleans are 0 and 1", () => {
    const big = 2n ** 62n + 1n;
    insert().run(1, "a", big, Date.now());
    const row = db.query<{ id: number; amount: number }, [number]>("SELECT id, amount FROM t WHERE id = ?").get(1);
    expect(row!.id).toBe(1);
    expect(typeof row!.amount).toBe("number");
    const exact = db
      .query<{ amount: bigint; n: bigint; yes: bigint }, [number]>(
        "SELECT amount, count(*) OVER () AS n, amount > 0 AS yes FROM t WHERE id = ?",
      )
      .safeIntegers(true)
      .get(1);
    expect(exact).toEqual({ amount: big, n: 1n, yes: 1n });
    expect(db.query<{ no: number }, []>("SELECT 1 > 2 AS no").get()).toEqual({ no: 0 });
  });

  test("named parameters bind by name; get answers null when there is no row; run counts changes", () => {
    db.query("INSERT INTO t (id, label, amount, at) VALUES ($id, $label, $amount, $at)").run({
      id: 2,
      label: "it's",
      amount: 5n,
      at: 1_700_000_000_000,
    });
    expect(db.query<{ label: string }, [string]>("SELECT label FROM t WHERE label = ?").get("it's")).toEqual({
      label: "it's",
    });
    expect(db.query("SELECT * FROM t WHERE id = ?").get(999)).toBeNull();
    insert().run(3, "three", 0, 0);
    expect(db.query("UPDATE t SET label = 'x' WHERE id IN (2, 3)").run().changes).toBe(2);
  });

  test("an error carries PostgreSQL's SQLSTATE, and the store goes on working", () => {
    insert().run(40, "first", 0, 0);
    let error: unknown;
    try {
      insert().run(40, "dup", 0, 0);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PostgresError);
    expect((error as PostgresError).code).toBe("23505");
    expect(ids()).toContain(40);
    insert().run(41, "after the error", 0, 0);
    expect(ids()).toContain(41);
  });
});

describe("transactions", () => {
  test("a throw rolls back the whole transaction; a nested one rolls back alone", () => {
    expect(() =>
      inTransaction(db, () => {
        insert().run(10, "in", 0, 0);
        throw new Error("abandon");
      }),
    ).toThrow("abandon");
    expect(ids()).not.toContain(10);

    inTransaction(db, () => {
      insert().run(11, "outer", 0, 0);
      expect(() =>
        inTransaction(db, () => {
          insert().run(12, "inner", 0, 0);
          insert().run(11, "dup", 0, 0); // fails: the savepoint is rolled back, the outer goes on
        }),
      ).toThrow(PostgresError);
    });
    expect(ids()).toContain(11);
    expect(ids()).not.toContain(12);
  });

  test("a connection killed inside a transaction fails it: nothing runs outside it, and the store recovers", async () => {
    let afterKill: unknown;
    expect(() =>
      inTransaction(db, () => {
        insert().run(20, "before", 0, 0);
        const pid = db.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!.pid;
        terminateFromElsewhere(pid);
        try {
          insert().run(21, "after", 0, 0);
        } catch (error) {
          afterKill = error;
        }
        // Were the connection silently replaced, this would commit on its own.
        insert().run(22, "after, caught", 0, 0);
      }),
    ).toThrow("lost inside a transaction");
    expect(afterKill).toBeInstanceOf(PostgresError);
    const admin = new SQL(url, { max: 1 });
    try {
      expect([...(await admin.unsafe("SELECT id FROM t WHERE id IN (20, 21, 22)"))]).toEqual([]);
    } finally {
      await admin.close();
    }
    // A new connection serves the next statements.
    insert().run(23, "later", 0, 0);
    expect(ids()).toContain(23);
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
  test("is cancelled by PostgreSQL after statement_timeout, and the connection goes on", () => {
    const quick = PgDb.open(url, { statementTimeoutMs: 200, answerWithinMs: 10_000 });
    try {
      const pid = quick.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!.pid;
      let error: unknown;
      try {
        quick.run("SELECT pg_sleep(5)");
      } catch (caught) {
        error = caught;
      }
      expect((error as PostgresError).code).toBe("57014"); // query_canceled
      expect(quick.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!.pid).toBe(pid);
    } finally {
      quick.close();
    }
  });

  test("unanswered, fails its transaction and is left behind: a new connection serves what follows", () => {
    const impatient = PgDb.open(url, { statementTimeoutMs: 0, answerWithinMs: 300 });
    try {
      const pid = impatient.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!.pid;
      let afterTimeout: unknown;
      expect(() =>
        inTransaction(impatient, () => {
          impatient.query("INSERT INTO t (id, label, amount, at) VALUES (?, ?, ?, ?)").run(30, "lost", 0, 0);
          try {
            impatient.run("SELECT pg_sleep(3)");
          } catch (error) {
            afterTimeout = error;
          }
          impatient.query("INSERT INTO t (id, label, amount, at) VALUES (?, ?, ?, ?)").run(31, "after", 0, 0);
        }),
      ).toThrow("lost inside a transaction");
      expect((afterTimeout as Error).message).toBe("no answer from PostgreSQL within 0.3 s");
      const next = impatient.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!.pid;
      expect(next).not.toBe(pid);
      expect(impatient.query("SELECT id FROM t WHERE id IN (30, 31)").all()).toEqual([]);
    } finally {
      impatient.close();
    }
  });
});

describe("opening", () => {
  test("a wrong password or an unreachable server fails with the variable named and the password never shown", () => {
    const wrong = new URL(url);
    wrong.password = "not-the-Secret-pw";
    expect(() => PgDb.open(wrong.href)).toThrow(ConfigError);
    try {
      PgDb.open(wrong.href);
    } catch (error) {
      expect((error as Error).message).toStartWith("STABLEGATE_DATABASE_URL: cannot connect:");
      expect((error as Error).message).not.toContain("not-the-Secret-pw");
    }
    const closed = new URL(url);
    closed.port = "1";
    expect(() => PgDb.open(closed.href)).toThrow("STABLEGATE_DATABASE_URL: cannot connect");
  });
});
