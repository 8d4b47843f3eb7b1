/**
 * The sign-in throttle over a real SQLite file and PostgreSQL with the clock injected: past 5
 * failures in a day, per email, a wait before each attempt that doubles up to 15 minutes; per
 * client, the same wait for wrong passwords but never for a right one; the same answer and the
 * same work for an unknown email, and no way around the limit by guessing in parallel, through one
 * replica or many.
 */
import { afterAll, afterEach, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { type Db, sql } from "../../src/db/engine.ts";
import { AuthError, TooManyRequestsError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import {
  createUsersService,
  SIGN_IN_FAILURES_KEPT,
  SIGN_IN_FREE_FAILURES,
  SIGN_IN_MAX_WAIT_MS,
  SIGN_IN_WINDOW_MS,
  type UsersService,
} from "../../src/users/service.ts";
import { createUserStore } from "../../src/users/store.ts";
import { LIGHT_HASHING } from "../support/password-hashing.ts";
import { TEST_PAYOUT } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const clock = { at: Date.UTC(2026, 5, 1), now: () => clock.at };
const MINUTE = 60_000;

let store: TestStore;
let db: Db;
let users: UsersService;
/** The users service as another replica on the same database has it: nothing shared but the store. */
let replica: () => UsersService;
let accountId: string;
let n = 0;
const client = () => `198.51.100.${++n}`;
const email = () => `throttle${++n}@shop.example`;

// A test's failures never count against the next one.
afterEach(() => {
  clock.at += SIGN_IN_WINDOW_MS;
});

async function newUser() {
  const address = email();
  const { password } = await users.createUser({ accountId, email: address });
  return { email: address, password };
}

/** What a sign-in ends in: "ok", "refused" (wrong), or the seconds to wait when throttled. */
async function attempt(
  input: { email: string; password: string; client: string },
  using: UsersService = users,
): Promise<string | number> {
  try {
    await using.signIn(input);
    return "ok";
  } catch (error) {
    if (error instanceof TooManyRequestsError) return error.retryAfterSeconds!;
    if (error instanceof AuthError) return "refused";
    throw error;
  }
}

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    const accountStore = createAccountStore(db);
    accountId = (
      await createAccountsService({ store: accountStore, clock, ids: randomIds }).createAccount({
        name: "Throttle Shop",
        payoutAddress: TEST_PAYOUT,
      })
    ).account.id;
    replica = () =>
      createUsersService({
        store: createUserStore(db),
        clock,
        ids: randomIds,
        accountExists: async (id) => (await accountStore.findAccount(id)) !== null,
        passwordHashing: LIGHT_HASHING,
      });
    users = replica();
  });
  afterAll(() => store?.close());

  describe("sign-in throttle", () => {
    test("past 5 wrong passwords for an email, from anywhere, each attempt waits 1 s, 2 s, 4 s... up to 15 minutes, right password or not", async () => {
      const user = await newUser();
      for (let i = 0; i < SIGN_IN_FREE_FAILURES; i++)
        expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      const waits: Array<string | number> = [];
      for (let i = 0; i < 12; i++) {
        // Refused before the check, so the right password is refused too, and the wait does not grow.
        const wait = await attempt({ ...user, client: client() });
        waits.push(wait);
        clock.at += Number(wait) * 1000;
        expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
      expect(SIGN_IN_MAX_WAIT_MS).toBe(900_000);
      clock.at += 10 * MINUTE;
      expect(await attempt({ ...user, client: client() })).toBe(300);
      clock.at += 5 * MINUTE;
      expect(await attempt({ ...user, client: client() })).toBe("ok");
      // The success cleared the count: five more mistakes are free again.
      for (let i = 0; i < SIGN_IN_FREE_FAILURES; i++)
        expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      expect(await attempt({ ...user, client: client() })).toBe(1);
    });

    test("failures older than a day no longer count", async () => {
      const user = await newUser();
      for (let i = 0; i < SIGN_IN_FREE_FAILURES; i++)
        expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      clock.at += SIGN_IN_WINDOW_MS - 1;
      expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      expect(await attempt({ ...user, client: client() })).toBe(2);
      clock.at += 2_000;
      // The first five are over a day old: one failure in the window, no wait.
      expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      expect(await attempt({ ...user, client: client() })).toBe("ok");
    });

    test("5 failures from one client, whatever the emails: its wrong passwords then get a growing wait, its right one still signs in", async () => {
      const user = await newUser();
      const from = client();
      for (let i = 0; i < SIGN_IN_FREE_FAILURES; i++)
        expect(await attempt({ email: email(), password: "wrong password", client: from })).toBe("refused");
      const waits = [];
      for (let i = 0; i < 4; i++)
        waits.push(await attempt({ email: email(), password: "wrong password", client: from }));
      expect(waits).toEqual([2, 4, 8, 16]);
      // Checked all the same: the right password signs in, from that client, at once.
      expect(await attempt({ ...user, client: from })).toBe("ok");
      expect(await attempt({ ...user, client: client() })).toBe("ok");
    });

    test("an unknown email gets the same answers as a wrong password, after the same password check", async () => {
      const verify = spyOn(Bun.password, "verify");
      try {
        const known = await newUser();
        const unknown = email();
        const answers = { known: [] as Array<string | number>, unknown: [] as Array<string | number> };
        for (let i = 0; i < 6; i++) {
          answers.known.push(await attempt({ email: known.email, password: "wrong password", client: client() }));
          answers.unknown.push(await attempt({ email: unknown, password: "wrong password", client: client() }));
        }
        expect(answers.unknown).toEqual(answers.known);
        expect(answers.known).toEqual(["refused", "refused", "refused", "refused", "refused", 1]);
        // One Argon2id verification per attempt that was not throttled, the unknown email's included.
        expect(verify).toHaveBeenCalledTimes(10);
      } finally {
        verify.mockRestore();
      }
    });

    test("guesses sent all at once get no more than 5 password checks", async () => {
      const user = await newUser();
      const verify = spyOn(Bun.password, "verify");
      try {
        const answers = await Promise.all(
          Array.from({ length: 12 }, () =>
            attempt({ email: user.email, password: "wrong password", client: client() }),
          ),
        );
        expect(answers.filter((a) => a === "refused")).toHaveLength(5);
        expect(answers.filter((a) => a === 1)).toHaveLength(7);
        expect(verify).toHaveBeenCalledTimes(5);
      } finally {
        verify.mockRestore();
      }
    });

    test("guesses sent all at once through as many replicas get no more than 5 password checks", async () => {
      const user = await newUser();
      const verify = spyOn(Bun.password, "verify");
      try {
        const answers = await Promise.all(
          Array.from({ length: 12 }, () =>
            attempt({ email: user.email, password: "wrong password", client: client() }, replica()),
          ),
        );
        expect(answers.filter((a) => a === "refused")).toHaveLength(5);
        expect(answers.filter((a) => a === 1)).toHaveLength(7);
        expect(verify).toHaveBeenCalledTimes(5);
      } finally {
        verify.mockRestore();
      }
    });

    test("one client's guesses at many emails, all at once through as many replicas: 5 go free", async () => {
      const from = client();
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          attempt({ email: email(), password: "wrong password", client: from }, replica()),
        ),
      );
      expect(answers.filter((a) => a === "refused")).toHaveLength(5);
      expect(answers.filter((a) => typeof a === "number")).toHaveLength(7);
    });

    test("a successful sign-in clears its email's failures, not its client's", async () => {
      const user = await newUser();
      const from = client();
      for (let i = 0; i < 4; i++)
        expect(await attempt({ email: user.email, password: "wrong password", client: from })).toBe("refused");
      expect(await attempt({ ...user, client: from })).toBe("ok");
      for (let i = 0; i < 4; i++)
        expect(await attempt({ email: user.email, password: "wrong password", client: client() })).toBe("refused");
      expect(await attempt({ ...user, client: client() })).toBe("ok");

      // The client still has its 4: one more is free, the next wrong one waits.
      expect(await attempt({ email: email(), password: "wrong password", client: from })).toBe("refused");
      expect(await attempt({ email: email(), password: "wrong password", client: from })).toBe(2);
    });

    test("one client's password checks run one at a time; different clients' side by side", async () => {
      const verify = Bun.password.verify;
      let running = 0;
      let most = 0;
      const spy = spyOn(Bun.password, "verify").mockImplementation(async (...args) => {
        most = Math.max(most, ++running);
        try {
          // Each check lasts a while: on PostgreSQL the attempts' counting transactions end a
          // little apart, and a light hash checked in a millisecond could end before the next began.
          await Bun.sleep(50);
          return await verify(...args);
        } finally {
          running--;
        }
      });
      try {
        const from = client();
        await Promise.all([1, 2, 3].map(() => attempt({ email: email(), password: "wrong password", client: from })));
        expect(most).toBe(1);
        most = 0;
        await Promise.all(
          [1, 2, 3].map(() => attempt({ email: email(), password: "wrong password", client: client() })),
        );
        expect(most).toBeGreaterThan(1);
      } finally {
        spy.mockRestore();
      }
    });

    test("at most SIGN_IN_FAILURES_KEPT failures are kept per client, enough for the longest wait", async () => {
      const from = client();
      for (let i = 0; i < SIGN_IN_FAILURES_KEPT + 6; i++)
        await attempt({ email: email(), password: "wrong password", client: from });
      const kept = (await db.get<{ n: number }>(
        sql`SELECT count(*) AS n FROM sign_in_failures WHERE key = ${`client:${from}`}`,
      ))!.n;
      expect(Number(kept)).toBe(SIGN_IN_FAILURES_KEPT);
      expect(await attempt({ email: email(), password: "wrong password", client: from })).toBe(900);
    });

    test("failures older than the window are purged as new ones are recorded", async () => {
      const user = await newUser();
      await attempt({ email: user.email, password: "wrong password", client: client() });
      clock.at += SIGN_IN_WINDOW_MS + 1;
      await attempt({ email: user.email, password: "wrong password", client: client() });
      const rows = (await db.get<{ n: number }>(
        sql`SELECT count(*) AS n FROM sign_in_failures WHERE at <= ${clock.at - SIGN_IN_WINDOW_MS}`,
      ))!.n;
      expect(rows).toBe(0);
    });
  });
});
