/**
 * The asynchronous Db interface (src/db/engine.ts) on both engines: statements as templates,
 * transactions found through the async context, savepoints, and the rule that a statement from
 * outside never lands inside someone else's transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Db, list, raw, sql } from "../../src/db/engine.ts";
import { assertOutsideTransaction } from "../../src/db/transaction-scope.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

describe.each(ENGINES)("%s", (engine) => {
  let store: TestStore;
  let db: Db;
  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    await db.exec("CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT NOT NULL)");
  });
  afterAll(() => store.close());

  const count = async () => (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM things`))!.n;
  const insert = (id: string, n: bigint | number) => db.run(sql`INSERT INTO things (id, n) VALUES (${id}, ${n})`);

  test("a template's values are parameters, nested templates and raw text are spliced in", async () => {
    await insert("a", 2n ** 60n);
    const big = await db.get<{ n: bigint }>(sql`SELECT n FROM things WHERE id = ${"a"}`, { bigints: true });
    expect(big!.n).toBe(2n ** 60n);
    const column = raw("id");
    const ids = list(["a", "b"].map((id) => sql`${id}`));
    const rows = await db.all<{ id: string }>(sql`SELECT ${column} FROM things WHERE id IN (${ids}) ORDER BY id`);
    expect(rows).toEqual([{ id: "a" }]);
    // A value that looks like SQL stays a value.
    expect(await db.get(sql`SELECT id FROM things WHERE id = ${"a' OR '1'='1"}`)).toBeNull();
    expect(await db.run(sql`DELETE FROM things WHERE id = ${"a"}`)).toBe(1);
  });

  test("an undefined parameter is refused", async () => {
    await expect(db.get(sql`SELECT ${undefined} AS x`)).rejects.toThrow("undefined");
  });

  test("statements made anywhere inside a transaction join it, and a throw rolls them all back", async () => {
    const before = await count();
    await expect(
      db.transaction(async () => {
        await insert("t1", 1);
        await (async () => insert("t2", 2))(); // deeper in the call chain
        expect(db.inTransaction()).toBe(true);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await count()).toBe(before);
    expect(db.inTransaction()).toBe(false);
  });

  test("a nested transaction is a savepoint: its failure undoes only its own writes", async () => {
    await db.transaction(async () => {
      await insert("s1", 1);
      await expect(
        db.transaction(async () => {
          await insert("s2", 2);
          throw new Error("inner");
        }),
      ).rejects.toThrow("inner");
      await insert("s3", 3);
    });
    const ids = (await db.all<{ id: string }>(sql`SELECT id FROM things WHERE id LIKE 's%' ORDER BY id`)).map(
      (row) => row.id,
    );
    expect(ids).toEqual(["s1", "s3"]);
  });

  test("concurrent transactions each see their own writes only, and both commit", async () => {
    const seen: number[] = [];
    const work = (id: string) =>
      db.transaction(async () => {
        await insert(id, 1);
        await Promise.resolve();
        seen.push((await db.all(sql`SELECT id FROM things WHERE id LIKE 'c%'`)).length);
        return id;
      });
    expect(await Promise.all([work("c1"), work("c2")])).toEqual(["c1", "c2"]);
    if (engine === "sqlite") expect(seen).toEqual([1, 2]); // one after the other
    expect((await db.all(sql`SELECT id FROM things WHERE id LIKE 'c%'`)).length).toBe(2);
  });

  test("a statement from outside a transaction never lands inside it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = db
      .transaction(async () => {
        await insert("o1", 1);
        await gate;
        throw new Error("rolled back");
      })
      .catch((error: Error) => error.message);
    await Bun.sleep(0);
    // Outside the transaction's async context: this write must survive its rollback.
    const outside = insert("o2", 2);
    release();
    expect(await tx).toBe("rolled back");
    await outside;
    const ids = (await db.all<{ id: string }>(sql`SELECT id FROM things WHERE id LIKE 'o%'`)).map((row) => row.id);
    expect(ids).toEqual(["o2"]);
  });

  test("network calls are refused inside a transaction, allowed outside it and after it", async () => {
    let ended!: () => void;
    const afterwards = new Promise<void>((resolve) => {
      ended = resolve;
    });
    let later: Promise<void> | undefined;
    await db.transaction(async () => {
      expect(() => assertOutsideTransaction("a webhook")).toThrow("inside a database transaction");
      // Work queued inside, run once the transaction has ended: it keeps the async context.
      later = afterwards.then(() => assertOutsideTransaction("later"));
    });
    ended();
    await later;
    expect(() => assertOutsideTransaction("a webhook")).not.toThrow();
  });
});
