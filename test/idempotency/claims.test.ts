/**
 * Idempotency keys claimed at once, as a double submit spread over replicas sends them: each
 * request goes through an idempotency service of its own (a replica each, nothing shared but the
 * database), and the database alone decides that exactly one of them runs, whether the key is
 * new, was left behind by a request that died, or expired. Each test runs on a real SQLite file
 * and a real PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createIdempotency, IDEMPOTENCY_TTL_MS } from "../../src/idempotency/index.ts";
import { createIdempotencyStore } from "../../src/idempotency/store.ts";
import { ConflictError } from "../../src/lib/errors.ts";
import { createTestClock, type TestClock } from "../support/clock.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";

const ACCOUNT = "acct_claims";
const REQUESTS = 20;

let store: TestStore;
let clock: TestClock;

/**
 * `REQUESTS` requests with one key and body at once, each on a replica of its own. The work that
 * runs waits until every other request has been answered, so none finds it done and replays it.
 */
async function atOnce(key: string) {
  let runs = 0;
  let answered = 0;
  const requests = Array.from({ length: REQUESTS }, () =>
    createIdempotency(store.db, clock)
      .run(ACCOUNT, key, { amount: "1.00" }, async (commit) => {
        const run = ++runs;
        await waitFor(() => answered + runs >= REQUESTS, 10_000, "the other requests' answers", 5);
        await commit(201, `{"run":${run}}`);
        return { status: 201, body: `{"run":${run}}` };
      })
      .finally(() => answered++),
  );
  const answers = await Promise.allSettled(requests);
  const refusals = answers.flatMap((a) => (a.status === "rejected" ? [a.reason] : []));
  return { runs, made: answers.filter((a) => a.status === "fulfilled").length, refusals };
}

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
    clock = createTestClock();
  });
  afterAll(() => store?.close());

  test("a new key sent at once through as many replicas runs once; the others are told it is in progress", async () => {
    const { runs, made, refusals } = await atOnce("double-submit");
    expect(runs).toBe(1);
    expect(made).toBe(1);
    expect(refusals).toHaveLength(REQUESTS - 1);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(ConflictError);
  });

  test("a claim left behind by a request that died is taken over by one of those sent at once", async () => {
    await createIdempotencyStore(store.db).claim(ACCOUNT, "died", "the dead request", clock.now());
    clock.advance(2 * 60_000);
    const { runs, made, refusals } = await atOnce("died");
    expect(runs).toBe(1);
    expect(made).toBe(1);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(ConflictError);
  });

  test("an expired key sent at once runs once more, then replays", async () => {
    expect((await atOnce("expired")).runs).toBe(1);
    clock.advance(IDEMPOTENCY_TTL_MS + 1);
    const { runs, made } = await atOnce("expired");
    expect(runs).toBe(1);
    expect(made).toBe(1);
    const replay = await createIdempotency(store.db, clock).run(ACCOUNT, "expired", { amount: "1.00" }, () => {
      throw new Error("a replay does not run");
    });
    expect(replay).toMatchObject({ status: 201, replayed: true });
  });
});
