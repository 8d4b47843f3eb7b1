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

/** After this many failed sign-ins in the window, per email and per client, sign-in answers 429. */
export const SIGN_IN_MAX_FAILURES = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;

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
  accountExists: (accountId: string) => boolean;
}

export function createUsersService({ store, clock, ids, accountExists }: UsersDeps) {
  // Verified against when the email is unknown, so an unknown email costs the same work as a wrong password.
  let decoyHash: Promise<string> | undefined;
  const decoy = () => (decoyHash ??= hashPassword(randomBase62(GENERATED_PASSWORD_LENGTH)));

  /** A password given (checked) or generated; returned with its hash. */
  async function passwordFor(given: string | undefined) {
    const password = given ?? randomBase62(GENERATED_PASSWORD_LENGTH);
    if (given !== undefined) checkPassword(given);
    return { password, hash: await hashPassword(password) };
  }

  function throttled(keys: string[], now: number): number | null {
    let retryAt = 0;
    for (const key of keys) {
      const failures = store.failuresSince(key, now - SIGN_IN_WINDOW_MS);
      // Sign-in opens again once the oldest failure that keeps the count at the limit leaves the window.
      if (failures.length >= SIGN_IN_MAX_FAILURES)
        retryAt = Math.max(retryAt, failures[SIGN_IN_MAX_FAILURES - 1]! + SIGN_IN_WINDOW_MS);
    }
    return retryAt > 0 ? Math.max(1, Math.ceil((retryAt - now) / 1000)) : null;
  }

  return {
    /** Creates a user of an account; the password (generated unless given) is returned here only. */
    async createUser(input: { accountId: string; email: string; password?: string }) {
      if (!accountExists(input.accountId)) throw new NotFoundError(`no account ${input.accountId}`);
      const email = emailFrom(input.email);
      if (store.findUserByEmail(email))
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
        store.insertUser(row);
      } catch (error) {
        // Two creates of one email at once: the unique index decides.
        if (store.findUserByEmail(email))
          throw new ValidationError(`a dashboard user with email ${email} exists already`);
        throw error;
      }
      return { user: toUserJson(row), password };
    },

    listUsers(accountId?: string): UserJson[] {
      return store.listUsers(accountId).map(toUserJson);
    },

    /** A new password (generated unless given); every session of the user ends with the old one. */
    async resetPassword(userId: string, given?: string) {
      if (!store.findUser(userId)) throw new NotFoundError(`no user ${userId}`);
      const { password, hash } = await passwordFor(given);
      const row = store.transaction(() => {
        const updated = store.setPasswordHash(userId, hash);
        if (updated) store.deleteUserSessions(userId);
        return updated;
      });
      if (!row) throw new NotFoundError(`no user ${userId}`);
      return { user: toUserJson(row), password };
    },

    /** Deletes the user and with it every session. */
    deleteUser(userId: string) {
      const row = store.deleteUser(userId);
      if (!row) throw new NotFoundError(`no user ${userId}`);
      return { id: row.id, deleted: true as const };
    },

    /**
     * Checks an email and password and opens a session, whose token goes into the cookie and is
     * stored only as its hash. Throws TooManyRequestsError while `client` or the email is
     * throttled, and AuthError (SIGN_IN_REFUSED, whatever was wrong) otherwise.
     */
    async signIn(input: { email: string; password: string; client: string }) {
      const now = clock.now();
      const email = input.email.trim().toLowerCase().slice(0, 320);
      const keys = [`email:${email}`, `client:${input.client}`];
      const retryAfter = throttled(keys, now);
      if (retryAfter !== null) {
        throw new TooManyRequestsError("Too many failed sign-ins. Wait a few minutes, then try again.", retryAfter);
      }
      // Counted as failed before the (slow) check, so parallel guesses cannot all slip under the limit.
      const attempt = store.transaction(() => {
        store.purgeFailuresUpTo(now - SIGN_IN_WINDOW_MS);
        return keys.map((key) => store.recordFailure(key, now));
      });
      const user = store.findUserByEmail(email);
      const password = input.password.slice(0, PASSWORD_MAX_LENGTH + 1);
      const valid = await Bun.password.verify(password, user?.password_hash ?? (await decoy()));
      if (!user || !valid) throw new AuthError(SIGN_IN_REFUSED);

      const token = randomToken();
      const session = store.transaction(() => {
        // A reset or deletion that landed during the check wins: the old password opens nothing.
        if (store.findUser(user.id)?.password_hash !== user.password_hash) return null;
        store.clearFailures(keys[0]!);
        store.deleteFailure(attempt[1]!);
        // Sessions that ended without a sign-out are never read again: they go here.
        store.deleteExpiredSessions(now - SESSION_IDLE_MS, now - SESSION_MAX_MS);
        const row = {
          id: ids.prefixed("ses"),
          token_hash: sha256Hex(token),
          user_id: user.id,
          csrf_token: randomToken(),
          created_at: clock.now(),
          last_seen_at: clock.now(),
        };
        store.insertSession(row);
        return row;
      });
      if (!session) throw new AuthError(SIGN_IN_REFUSED);
      return { token, session: toUserSession({ ...session, email: user.email, account_id: user.account_id }) };
    },

    /** The live session a cookie's token names, or null; ends it if it has expired, extends it otherwise. */
    resolveSession(token: string): UserSession | null {
      if (!SESSION_TOKEN.test(token)) return null;
      const row = store.findSessionByTokenHash(sha256Hex(token));
      if (!row) return null;
      const now = clock.now();
      if (now - row.last_seen_at >= SESSION_IDLE_MS || now - row.created_at >= SESSION_MAX_MS) {
        store.deleteSession(row.id);
        return null;
      }
      if (now - row.last_seen_at >= TOUCH_EVERY_MS) store.touchSession(row.id, now);
      return toUserSession(row);
    },

    /** Ends the session a token names (nothing happens for an unknown one). */
    signOut(token: string): void {
      if (!SESSION_TOKEN.test(token)) return;
      const row = store.findSessionByTokenHash(sha256Hex(token));
      if (row) store.deleteSession(row.id);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;

/** 32 random bytes, base64url: session tokens and CSRF tokens. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}
export const SESSION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

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
