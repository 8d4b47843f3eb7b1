/** The health endpoints' one question to the database, asked of a real SQLite file and a real PostgreSQL database. */
import { describe, expect, test } from "bun:test";
import { createOpsStore } from "../../src/ops/store.ts";
import { ENGINES, openTestStore } from "../support/store-engines.ts";

describe.each(ENGINES)("%s", (engine) => {
  test("the database is reachable while open and unreachable once closed, without throwing", async () => {
    const { db, close } = await openTestStore(engine);
    const store = createOpsStore(db);
    expect(await store.reachable()).toBe(true);
    await close();
    expect(await store.reachable()).toBe(false);
  });
});
