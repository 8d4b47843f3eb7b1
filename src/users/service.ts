import { type Clock, isoMillis } from "../lib/clock.ts";
import { AuthError, NotFoundError, TooManyRequestsError, ValidationError } from "../lib/errors.ts";
import { type IdGenerator, randomBase62 } from "../lib/ids.ts";
import { sha256Hex } from "../lib/secrets.ts";
import type { SessionWithUser, UserRow, UserStore } from "./store.ts";

/** A session ends after this long without a request, and in any case this long after sign-in. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often, so browsing is not a database write per page. */
const TOUCH_EVERY_MS = 60 * 1000;

/**
 * The sign-in throttle, per email and per client: failures are counted over the window; past
 * the free ones, each failure makes the next attempt wait, 1 s after the 6th, doubling with each
 * one after (2 s, 4 s, ...) up to 15 minutes. A success clears its email's count. An email that
 * must wait is refused before its password is checked; a client that must wait still has its
 * password checked, and a right one signs in (the client may be a whole office behind one
 * address), a wrong one is answered 429.
 */
export const SIGN_IN_WINDOW_MS = 24 * 60 * 60 * 1000;
export const SIGN_IN_FREE_FAILURES = 5;
export const SIGN_IN_FIRST_WAIT_MS = 1000;
export const SIGN_IN_MAX_WAIT_MS = 15 * 60 * 1000;
/** Failures kept per email or client: enough to reach the longest wait, which more would not lengthen. */
export const SIGN_IN_FAILURES_KEPT =
  SIGN_IN_FREE_FAILURES + Math.ceil(Math.log2(SIGN_IN_MAX_WAIT_MS / SIGN_IN_FIRST_WAIT_MS)) + 1;

export const PASSWORD_MIN_LENGTH = 12;
/** Long enough for any passphrase, short enough that a request cannot make hashing expensive. */
export const PASSWORD_MAX_LENGTH = 256;
const GENERATED_PASSWORD_LENGTH = 24; // base62: about 143 bits

/** The one message for an unknown email and a wrong password alike. */
export const SIGN_IN_REFUSED = "That email and password do not match a dashboard user.";

export interface UserJson {
  id: string;
  account_id: string;
  email: string;
  created_at: string;
}

/** A live session as the dashboard sees it. */
export interface UserSession {
  sessionId: string;
  userId: string;
  email: string;
  accountId: string;
  csrfToken: string;
}

export interface UsersDeps {
  store: UserStore;
  clock: Clock;
  ids: IdGenerator;
  /** Whether an account exists: a user always belongs to one. */
  accountExists: (accountId: string) => Promise<boolean>;
  /**
   * How new passwords are hashed: PASSWORD_HASHING unless a test of the rules around it (the
   * throttle) asks for less work. A hash names its own cost, so verifying follows it.
   */
  passwordHashing?: PasswordHashing;
}

export type PasswordHashing = Bun.Password.Argon2Algorithm & { algorithm: "argon2id" };

/** argon2id with 64 MiB and 2 passes (OWASP asks for at least 19 MiB and 2): about 0.2 s of one core. */
export const PASSWORD_HASHING: PasswordHashing = { algorithm: "argon2id", memoryCost: 65_536, timeCost: 2 };

export function createUsersService({
  store,
  clock,
  ids,
  accountExists,
  passwordHashing = PASSWORD_HASHING,
}: UsersDeps) {
  const hashPassword = (password: string) => Bun.password.hash(password, passwordHashing);
  // Verified against when the email is unknown, so an unknown email costs the same work as a wrong password.
  let decoyHash: Promise<string> | undefined;
  const decoy = () => (decoyHash ??= hashPassword(randomBase62(GENERATED_PASSWORD_LENGTH)));

  /** A password given (checked) or generated; returned with its hash. */
  async function passwordFor(given: string | undefined) {
    const password = given ?? randomBase62(GENERATED_PASSWORD_LENGTH);
    if (given !== undefined) checkPassword(given);
    return { password, hash: await hashPassword(password) };
  }

  /** How long `key` must wait before its next attempt, in ms; 0 when it need not. */
  async function waitOf(key: string, now: number): Promise<number> {
    const failures = await store.failuresSince(key, now - SIGN_IN_WINDOW_MS);
    if (failures.length < SIGN_IN_FREE_FAILURES) return 0;
    const doublings = failures.length - SIGN_IN_FREE_FAILURES;
    const wait = Math.min(SIGN_IN_MAX_WAIT_MS, SIGN_IN_FIRST_WAIT_MS * 2 ** doublings);
    return Math.max(0, failures[0]! + wait - now);
  }

  // Password checks of one client run one after another: its guesses queue instead of taking
  // every core (and Argon2id's memory) at once. Another client's checks never wait for them.
  const checking = new Map<string, Promise<unknown>>();
  function oneAtATime<T>(client: string, check: () => Promise<T>): Promise<T> {
    const run = (checking.get(client) ?? Promise.resolve()).then(check, check);
    const settled = run.then(
      () => {},
      () => {},
    );
    checking.set(client, settled);
    void settled.then(() => checking.get(client) === settled && checking.delete(client));
    return run;
  }

  // What makes attempts that share an email or a client count one after another is the database's
  // lock (UserStore.lockFailures), on every replica alike. This queue only keeps one process's
  // attempts waiting for one another here rather than each holding a pooled connection while it
  // waits for that lock: guesses sent all at once cannot take the connections every other request
  // needs. Attempts that share neither are counted side by side.
  const counting = new Map<string, Promise<unknown>>();
  function countedInTurn<T>(keys: readonly string[], count: () => Promise<T>): Promise<T> {
    const run = Promise.all(keys.map((key) => counting.get(key))).then(count);
    const settled = run.then(
      () => {},
      () => {},
    );
    for (const key of keys) counting.set(key, settled);
    void settled.then(() => {
      for (const key of keys) if (counting.get(key) === settled) counting.delete(key);
    });
    return run;
  }

  return {
    /** Creates a user of an account; the password (generated unless given) is returned here only. */
    async createUser(input: { accountId: string; email: string; password?: string }) {
      if (!(await accountExists(input.accountId))) throw new NotFoundError(`no account ${input.accountId}`);
      const email = emailFrom(input.email);
      if (await store.findUserByEmail(email))
        throw new ValidationError(`a dashboard user with email ${email} exists already`);
      const { password, hash } = await passwordFor(input.password);
      const row: UserRow = {
        id: ids.prefixed("usr"),
        account_id: input.accountId,
        email,
        password_hash: hash,
        created_at: clock.now(),
      };
      try {
        await store.insertUser(row);
      } catch (error) {
        // Two creates of one email at once: the unique index decides.
        if (await store.findUserByEmail(email))
          throw new ValidationError(`a dashboard user with email ${email} exists already`);
        throw error;
      }
      return { user: toUserJson(row), password };
    },

    async listUsers(accountId?: string): Promise<UserJson[]> {
      return (await store.listUsers(accountId)).map(toUserJson);
    },

    /** A new password (generated unless given); every session of the user ends with the old one. */
    async resetPassword(userId: string, given?: string) {
      if (!(await store.findUser(userId))) throw new NotFoundError(`no user ${userId}`);
      const { password, hash } = await passwordFor(given);
      const row = await store.transaction(async () => {
        const updated = await store.setPasswordHash(userId, hash);
        if (updated) await store.deleteUserSessions(userId);
        return updated;
      });
      if (!row) throw new NotFoundError(`no user ${userId}`);
      return { user: toUserJson(row), password };
    },

    /** Deletes the user and with it every session. */
    async deleteUser(userId: string) {
      const row = await store.deleteUser(userId);
      if (!row) throw new NotFoundError(`no user ${userId}`);
      return { id: row.id, deleted: true as const };
    },

    /**
     * Checks an email and password and opens a session, whose token goes into the cookie and is
     * stored only as its hash. Throws TooManyRequestsError while the email must wait (see
     * SIGN_IN_WINDOW_MS), or for a wrong password while `client` must; AuthError
     * (SIGN_IN_REFUSED, whatever was wrong) otherwise. A right password is never refused for
     * what `client` did.
     */
    async signIn(input: { email: string; password: string; client: string }) {
      const now = clock.now();
      const email = input.email.trim().toLowerCase().slice(0, 320);
      const keys = [`email:${email}`, `client:${input.client}`] as const;
      // Counted as failed before the (slow) check, so parallel guesses cannot all slip under the limit.
      const attempt = await countedInTurn(keys, () =>
        store.transaction(async () => {
          for (const key of keys) await store.lockFailures(key);
          const emailWait = await waitOf(keys[0], now);
          if (emailWait > 0) return { emailWait };
          const clientWaited = (await waitOf(keys[1], now)) > 0;
          await store.purgeFailuresUpTo(now - SIGN_IN_WINDOW_MS);
          const rowids: number[] = [];
          for (const key of keys) {
            rowids.push(await store.recordFailure(key, now));
            await store.trimFailures(key, SIGN_IN_FAILURES_KEPT);
          }
          return { emailWait: 0, clientWaited, rowids };
        }),
      );
      if (!attempt.rowids) {
        const seconds = waitSeconds(attempt.emailWait);
        throw new TooManyRequestsError(
          `Too many failed sign-ins for this email. Try again in ${inWords(seconds)}.`,
          seconds,
        );
      }
      const user = await store.findUserByEmail(email);
      const password = input.password.slice(0, PASSWORD_MAX_LENGTH + 1);
      const valid = await oneAtATime(input.client, async () =>
        Bun.password.verify(password, user?.password_hash ?? (await decoy())),
      );
      if (!user || !valid) {
        if (!attempt.clientWaited) throw new AuthError(SIGN_IN_REFUSED);
        const seconds = waitSeconds(await waitOf(keys[1], clock.now()));
        throw new TooManyRequestsError(
          `${SIGN_IN_REFUSED} Many sign-ins from your network have failed: ` +
            `wait ${inWords(seconds)} before trying again.`,
          seconds,
        );
      }

      const token = randomToken();
      const session = await store.transaction(async () => {
        // A reset or deletion that landed during the check wins: the old password opens nothing.
        if ((await store.findUserToSignIn(user.id))?.password_hash !== user.password_hash) return null;
        await store.clearFailures(keys[0]);
        await store.deleteFailure(attempt.rowids[1]!);
        // Sessions that ended without a sign-out are never read again: they go here.
        await store.deleteExpiredSessions(now - SESSION_IDLE_MS, now - SESSION_MAX_MS);
        const row = {
          id: ids.prefixed("ses"),
          token_hash: sha256Hex(token),
          user_id: user.id,
          csrf_token: randomToken(),
          created_at: clock.now(),
          last_seen_at: clock.now(),
        };
        await store.insertSession(row);
        return row;
      });
      if (!session) throw new AuthError(SIGN_IN_REFUSED);
      return { token, session: toUserSession({ ...session, email: user.email, account_id: user.account_id }) };
    },

    /** The live session a cookie's token names, or null; ends it if it has expired, extends it otherwise. */
    async resolveSession(token: string): Promise<UserSession | null> {
      if (!SESSION_TOKEN.test(token)) return null;
      const row = await store.findSessionByTokenHash(sha256Hex(token));
      if (!row) return null;
      const now = clock.now();
      if (now - row.last_seen_at >= SESSION_IDLE_MS || now - row.created_at >= SESSION_MAX_MS) {
        await store.deleteSession(row.id);
        return null;
      }
      if (now - row.last_seen_at >= TOUCH_EVERY_MS) await store.touchSession(row.id, now);
      return toUserSession(row);
    },

    /** Ends the session a token names (nothing happens for an unknown one). */
    async signOut(token: string): Promise<void> {
      if (!SESSION_TOKEN.test(token)) return;
      const row = await store.findSessionByTokenHash(sha256Hex(token));
      if (row) await store.deleteSession(row.id);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;

/** Whole seconds, at least 1, as Retry-After gives them. */
const waitSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** "1 second", "40 seconds", "3 minutes". */
function inWords(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? "1 second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

/** 32 random bytes, base64url: session tokens and CSRF tokens. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}
export const SESSION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH)
    throw new ValidationError(`password must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if (password.length > PASSWORD_MAX_LENGTH)
    throw new ValidationError(`password must be at most ${PASSWORD_MAX_LENGTH} characters`);
}

/** Lower case, so one address is one user whatever case it is typed in. */
function emailFrom(text: string): string {
  const email = text.trim().toLowerCase();
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new ValidationError("email must be an address such as owner@example.com");
  return email;
}

function toUserJson(row: UserRow): UserJson {
  return { id: row.id, account_id: row.account_id, email: row.email, created_at: isoMillis(row.created_at) };
}

function toUserSession(row: SessionWithUser): UserSession {
  return {
    sessionId: row.id,
    userId: row.user_id,
    email: row.email,
    accountId: row.account_id,
    csrfToken: row.csrf_token,
  };
}
