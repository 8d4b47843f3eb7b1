/**
 * Dashboard users and sessions over a real SQLite file with the clock injected: what is stored
 * (only hashes), when a session ends (idle, absolute, sign-out, password reset, deletion), and on
 * PostgreSQL a reset racing a sign-in's session.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { type Db, sql } from "../../src/db/engine.ts";
import { AuthError, NotFoundError, ValidationError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { sha256Hex } from "../../src/lib/secrets.ts";
import {
  createUsersService,
  type PasswordHashing,
  SESSION_IDLE_MS,
  SESSION_MAX_MS,
  SIGN_IN_REFUSED,
  type UsersService,
} from "../../src/users/service.ts";
import { createUserStore } from "../../src/users/store.ts";
import { settledOrBlocked } from "../support/lock-waits.ts";
import { LIGHT_HASHING } from "../support/password-hashing.ts";
import { TEST_PAYOUT } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const clock = { at: Date.UTC(2026, 5, 1), now: () => clock.at };
const HOUR = 3_600_000;

let store: TestStore;
let db: Db;
let users: UsersService;
/** The service with that hashing; undefined is the real cost. */
let usersWith: (passwordHashing: PasswordHashing | undefined) => UsersService;
let accountId: string;
let n = 0;
// Each test signs in from a client of its own, so the throttle of one never touches another.
const client = () => `192.0.2.${++n}`;
const email = () => `owner${++n}@shop.example`;
const sessionCount = async (userId: string) =>
  (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM dashboard_sessions WHERE user_id = ${userId}`))!.n;

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    store = await openTestStore(engine);
    db = store.db;
    const accountStore = createAccountStore(db);
    const accounts = createAccountsService({ store: accountStore, clock, ids: randomIds });
    accountId = (await accounts.createAccount({ name: "Users Shop", payoutAddress: TEST_PAYOUT })).account.id;
    usersWith = (passwordHashing) =>
      createUsersService({
        store: createUserStore(db),
        clock,
        ids: randomIds,
        accountExists: async (id) => (await accountStore.findAccount(id)) !== null,
        passwordHashing,
      });
    users = usersWith(LIGHT_HASHING);
  });
  afterAll(() => store?.close());

  describe("users", () => {
    test("createUser stores an Argon2id hash (64 MiB, 2 passes) of a generated password, never the password", async () => {
      const { user, password } = await usersWith(undefined).createUser({ accountId, email: email() });
      expect(user.id).toMatch(/^usr_[0-9A-Za-z]{24}$/);
      expect(user.account_id).toBe(accountId);
      expect(password.length).toBeGreaterThanOrEqual(20);
      const row = (await db.get<{ password_hash: string }>(sql`SELECT * FROM dashboard_users WHERE id = ${user.id}`))!;
      expect(row.password_hash).toStartWith("$argon2id$v=19$m=65536,t=2,p=1$");
      expect(JSON.stringify(row)).not.toContain(password);
      expect(await Bun.password.verify(password, row.password_hash)).toBe(true);
    });

    test("an email is one user whatever its case", async () => {
      const address = email();
      const { user } = await users.createUser({ accountId, email: `  ${address.toUpperCase()} ` });
      expect(user.email).toBe(address);
      await expect(users.createUser({ accountId, email: address })).rejects.toThrow(ValidationError);
    });

    test("an unknown account, a malformed email or a short password is refused and stores nothing", async () => {
      const before = (await users.listUsers()).length;
      await expect(users.createUser({ accountId: "acct_unknown", email: email() })).rejects.toThrow(NotFoundError);
      await expect(users.createUser({ accountId, email: "not-an-email" })).rejects.toThrow("email must be");
      await expect(users.createUser({ accountId, email: email(), password: "short" })).rejects.toThrow(
        "password must be at least 12 characters",
      );
      expect((await users.listUsers()).length).toBe(before);
    });

    test("listUsers narrows to one account; an account may have several users", async () => {
      const a = await users.createUser({ accountId, email: email() });
      const b = await users.createUser({ accountId, email: email() });
      const ids = (await users.listUsers(accountId)).map((u) => u.id);
      expect(ids).toContain(a.user.id);
      expect(ids).toContain(b.user.id);
      expect(await users.listUsers("acct_other")).toEqual([]);
    });
  });

  describe("sessions", () => {
    async function signedIn() {
      const address = email();
      const { user, password } = await users.createUser({ accountId, email: address });
      const { token, session } = await users.signIn({ email: address, password, client: client() });
      return { user, password, token, session, address };
    }

    test("signIn opens a session stored only as the token's hash, with its own CSRF token", async () => {
      const { token, session, user } = await signedIn();
      expect(session.sessionId).toMatch(/^ses_/);
      expect(session.userId).toBe(user.id);
      expect(session.accountId).toBe(accountId);
      const row = (await db.get<Record<string, unknown>>(
        sql`SELECT * FROM dashboard_sessions WHERE id = ${session.sessionId}`,
      ))!;
      expect(row.token_hash).toBe(sha256Hex(token));
      expect(JSON.stringify(row)).not.toContain(token);
      expect(session.csrfToken).not.toBe(token);
      expect(await users.resolveSession(token)).toEqual(session);
    });

    test("a wrong password and an unknown email are refused with the same words", async () => {
      const { address } = await signedIn();
      await expect(users.signIn({ email: address, password: "wrong password!", client: client() })).rejects.toThrow(
        new AuthError(SIGN_IN_REFUSED),
      );
      await expect(users.signIn({ email: email(), password: "wrong password!", client: client() })).rejects.toThrow(
        new AuthError(SIGN_IN_REFUSED),
      );
    });

    test("a session ends after 12 idle hours, and a request before then extends it", async () => {
      const { token } = await signedIn();
      clock.at += SESSION_IDLE_MS - HOUR;
      expect(await users.resolveSession(token)).not.toBeNull();
      clock.at += SESSION_IDLE_MS - HOUR; // idle again just under the limit since the last request
      expect(await users.resolveSession(token)).not.toBeNull();
      clock.at += SESSION_IDLE_MS;
      expect(await users.resolveSession(token)).toBeNull();
      expect(await users.resolveSession(token)).toBeNull();
    });

    test("a session ends 7 days after sign-in however busy it is", async () => {
      const { token, user } = await signedIn();
      const signedInAt = clock.at;
      while (clock.at + SESSION_IDLE_MS / 2 < signedInAt + SESSION_MAX_MS) {
        clock.at += SESSION_IDLE_MS / 2;
        expect(await users.resolveSession(token)).not.toBeNull();
      }
      clock.at = signedInAt + SESSION_MAX_MS;
      expect(await users.resolveSession(token)).toBeNull();
      expect(await sessionCount(user.id)).toBe(0);
    });

    test("signOut ends that session only", async () => {
      const { token, address, password, user } = await signedIn();
      const other = await users.signIn({ email: address, password, client: client() });
      await users.signOut(token);
      expect(await users.resolveSession(token)).toBeNull();
      expect((await users.resolveSession(other.token))?.userId).toBe(user.id);
    });

    test("a password reset ends every session of the user; the new password signs in, the old does not", async () => {
      const { token, address, password, user } = await signedIn();
      const other = await users.signIn({ email: address, password, client: client() });
      const reset = await users.resetPassword(user.id);
      expect(reset.password).not.toBe(password);
      expect(await users.resolveSession(token)).toBeNull();
      expect(await users.resolveSession(other.token)).toBeNull();
      await expect(users.signIn({ email: address, password, client: client() })).rejects.toThrow(AuthError);
      const fresh = await users.signIn({ email: address, password: reset.password, client: client() });
      expect((await users.resolveSession(fresh.token))?.userId).toBe(user.id);
    });

    test("a reset to a given password checks its length and changes nothing when refused", async () => {
      const { token, user } = await signedIn();
      await expect(users.resetPassword(user.id, "short")).rejects.toThrow(ValidationError);
      expect(await users.resolveSession(token)).not.toBeNull();
      await expect(users.resetPassword("usr_unknown")).rejects.toThrow(NotFoundError);
    });

    test("a reset or deletion that lands while a sign-in is being checked leaves that sign-in without a session", async () => {
      for (const change of ["reset", "delete"] as const) {
        const address = email();
        const { user, password } = await users.createUser({ accountId, email: address });
        const verify = Bun.password.verify;
        // The real check, with the operator's command landing between it and the session being opened.
        const spy = spyOn(Bun.password, "verify").mockImplementation(async (...args) => {
          const valid = await verify(...args);
          if (change === "reset") await users.resetPassword(user.id);
          else await users.deleteUser(user.id);
          return valid;
        });
        try {
          await expect(users.signIn({ email: address, password, client: client() })).rejects.toThrow(SIGN_IN_REFUSED);
        } finally {
          spy.mockRestore();
        }
        expect(await sessionCount(user.id)).toBe(0);
      }
    });

    // PostgreSQL only: SQLite runs one transaction at a time, so these cannot interleave there.
    if (engine === "postgres")
      test("a reset that lands while a sign-in writes its session waits for it, then ends that session too", async () => {
        const address = email();
        const { user, password } = await users.createUser({ accountId, email: address });
        const plain = createUserStore(db);
        let writing = () => {};
        const written = new Promise<void>((resolve) => (writing = resolve));
        let release = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        // A replica whose sign-in stops in its session's transaction, before the session is written.
        const held = createUsersService({
          store: {
            ...plain,
            insertSession: async (row) => {
              writing();
              await gate;
              return plain.insertSession(row);
            },
          },
          clock,
          ids: randomIds,
          accountExists: async () => true,
          passwordHashing: LIGHT_HASHING,
        });
        const signingIn = held.signIn({ email: address, password, client: client() });
        await written;
        const reset = users.resetPassword(user.id);
        await settledOrBlocked(db, reset);
        release();
        const { token } = await signingIn;
        await reset;
        expect(await users.resolveSession(token)).toBeNull();
        expect(await sessionCount(user.id)).toBe(0);
      });

    test("deleting a user ends their sessions", async () => {
      const { token, user } = await signedIn();
      expect(await users.deleteUser(user.id)).toEqual({ id: user.id, deleted: true });
      expect(await users.resolveSession(token)).toBeNull();
      expect(await sessionCount(user.id)).toBe(0);
      await expect(users.deleteUser(user.id)).rejects.toThrow(NotFoundError);
    });

    test("sessions that ended unread are deleted at the next sign-in", async () => {
      const idle = await signedIn();
      clock.at += SESSION_IDLE_MS;
      await signedIn();
      expect(await sessionCount(idle.user.id)).toBe(0);
    });

    test("a malformed or unknown token resolves to nothing", async () => {
      expect(await users.resolveSession("")).toBeNull();
      expect(await users.resolveSession("x".repeat(43))).toBeNull();
      expect(await users.resolveSession("' OR 1=1 --")).toBeNull();
    });
  });
});
