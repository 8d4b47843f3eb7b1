import type { Db } from "../db/index.ts";
import { inTransaction } from "../db/transaction.ts";

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  created_at: number;
}

export interface SessionRow {
  id: string;
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
}

/** A session with the user it belongs to, as the gate needs it. */
export interface SessionWithUser extends SessionRow {
  email: string;
  account_id: string;
}

export type UserStore = ReturnType<typeof createUserStore>;

/** Dashboard users, their sessions and the failed sign-ins the throttle counts. */
export function createUserStore(db: Db) {
  const insertUser = db.query(
    `INSERT INTO dashboard_users (id, account_id, email, password_hash, created_at)
     VALUES ($id, $account_id, $email, $password_hash, $created_at)`,
  );
  const findUser = db.query<UserRow, [string]>("SELECT * FROM dashboard_users WHERE id = ?");
  const findUserByEmail = db.query<UserRow, [string]>("SELECT * FROM dashboard_users WHERE email = ?");
  const listAllUsers = db.query<UserRow, []>("SELECT * FROM dashboard_users ORDER BY created_at, id");
  const listAccountUsers = db.query<UserRow, [string]>(
    "SELECT * FROM dashboard_users WHERE account_id = ? ORDER BY created_at, id",
  );
  const setPasswordHash = db.query<UserRow, [string, string]>(
    "UPDATE dashboard_users SET password_hash = ? WHERE id = ? RETURNING *",
  );
  const deleteUser = db.query<UserRow, [string]>("DELETE FROM dashboard_users WHERE id = ? RETURNING *");

  const insertSession = db.query(
    `INSERT INTO dashboard_sessions (id, token_hash, user_id, csrf_token, created_at, last_seen_at)
     VALUES ($id, $token_hash, $user_id, $csrf_token, $created_at, $last_seen_at)`,
  );
  const findSession = db.query<SessionWithUser, [string]>(
    `SELECT s.*, u.email, u.account_id FROM dashboard_sessions s
     JOIN dashboard_users u ON u.id = s.user_id WHERE s.token_hash = ?`,
  );
  const touchSession = db.query<null, [number, string]>("UPDATE dashboard_sessions SET last_seen_at = ? WHERE id = ?");
  const deleteSession = db.query<null, [string]>("DELETE FROM dashboard_sessions WHERE id = ?");
  const deleteUserSessions = db.query<null, [string]>("DELETE FROM dashboard_sessions WHERE user_id = ?");
  const deleteExpiredSessions = db.query<null, [number, number]>(
    "DELETE FROM dashboard_sessions WHERE last_seen_at <= ? OR created_at <= ?",
  );

  // RETURNING rather than lastInsertRowid, which only SQLite has; PostgreSQL's table has an explicit rowid.
  const insertFailure = db.query<{ rowid: number }, [string, number]>(
    "INSERT INTO sign_in_failures (key, at) VALUES (?, ?) RETURNING rowid",
  );
  const recentFailures = db.query<{ at: number }, [string, number]>(
    "SELECT at FROM sign_in_failures WHERE key = ? AND at > ? ORDER BY at DESC",
  );
  const clearFailures = db.query<null, [string]>("DELETE FROM sign_in_failures WHERE key = ?");
  const deleteFailure = db.query<null, [number]>("DELETE FROM sign_in_failures WHERE rowid = ?");
  const purgeFailures = db.query<null, [number]>("DELETE FROM sign_in_failures WHERE at <= ?");
  const trimFailures = db.query<null, [string, number]>(
    `DELETE FROM sign_in_failures WHERE key = ?1 AND rowid NOT IN
       (SELECT rowid FROM sign_in_failures WHERE key = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2)`,
  );

  return {
    insertUser: (row: UserRow) => insertUser.run({ ...row }),
    findUser: (id: string) => findUser.get(id),
    findUserByEmail: (email: string) => findUserByEmail.get(email),
    listUsers: (accountId?: string) => (accountId ? listAccountUsers.all(accountId) : listAllUsers.all()),
    setPasswordHash: (id: string, hash: string) => setPasswordHash.get(hash, id),
    /** Its sessions go with it (ON DELETE CASCADE). */
    deleteUser: (id: string) => deleteUser.get(id),

    insertSession: (row: SessionRow) => insertSession.run({ ...row }),
    findSessionByTokenHash: (hash: string) => findSession.get(hash),
    touchSession: (id: string, now: number) => touchSession.run(now, id),
    deleteSession: (id: string) => deleteSession.run(id),
    deleteUserSessions: (userId: string) => deleteUserSessions.run(userId),
    /** Sessions idle since `idleSince` or opened before `openedBefore`. */
    deleteExpiredSessions: (idleSince: number, openedBefore: number) =>
      deleteExpiredSessions.run(idleSince, openedBefore),

    /** Its rowid, by which deleteFailure deletes it. */
    recordFailure: (key: string, at: number): number => insertFailure.get(key, at)!.rowid,
    /** Failure times of `key` after `since`, newest first. */
    failuresSince: (key: string, since: number) => recentFailures.all(key, since).map((r) => r.at),
    clearFailures: (key: string) => clearFailures.run(key),
    /** One failure, by the rowid recordFailure gave. */
    deleteFailure: (rowid: number) => deleteFailure.run(rowid),
    purgeFailuresUpTo: (at: number) => purgeFailures.run(at),
    /** Keeps only the newest `keep` failures of `key`. */
    trimFailures: (key: string, keep: number) => trimFailures.run(key, keep),

    transaction: <T>(fn: () => T): T => inTransaction(db, fn),
  };
}
