import { type Db, isPostgres, sql, sqlFor } from "../db/engine.ts";

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
  return {
    insertUser: (row: UserRow) =>
      db.run(
        sql`INSERT INTO dashboard_users (id, account_id, email, password_hash, created_at)
             VALUES (${row.id}, ${row.account_id}, ${row.email}, ${row.password_hash}, ${row.created_at})`,
      ),
    findUser: (id: string) => db.get<UserRow>(sql`SELECT * FROM dashboard_users WHERE id = ${id}`),
    /**
     * findUser for a session about to be opened with the password it had: on PostgreSQL the row is
     * held (FOR SHARE) until the transaction ends, so a password reset or a deletion made meanwhile
     * waits for the session to be written and then ends it with the others, and one made before is
     * seen here. SQLite runs one transaction at a time already.
     */
    findUserToSignIn: (id: string) =>
      db.get<UserRow>(
        sqlFor(
          db,
          sql`SELECT * FROM dashboard_users WHERE id = ${id}`,
          sql`SELECT * FROM dashboard_users WHERE id = ${id} FOR SHARE`,
        ),
      ),
    findUserByEmail: (email: string) => db.get<UserRow>(sql`SELECT * FROM dashboard_users WHERE email = ${email}`),
    listUsers: (accountId?: string) =>
      accountId
        ? db.all<UserRow>(sql`SELECT * FROM dashboard_users WHERE account_id = ${accountId} ORDER BY created_at, id`)
        : db.all<UserRow>(sql`SELECT * FROM dashboard_users ORDER BY created_at, id`),
    setPasswordHash: (id: string, hash: string) =>
      db.get<UserRow>(sql`UPDATE dashboard_users SET password_hash = ${hash} WHERE id = ${id} RETURNING *`),
    /** Its sessions go with it (ON DELETE CASCADE). */
    deleteUser: (id: string) => db.get<UserRow>(sql`DELETE FROM dashboard_users WHERE id = ${id} RETURNING *`),

    insertSession: (row: SessionRow) =>
      db.run(
        sql`INSERT INTO dashboard_sessions (id, token_hash, user_id, csrf_token, created_at, last_seen_at)
             VALUES (${row.id}, ${row.token_hash}, ${row.user_id}, ${row.csrf_token}, ${row.created_at},
             ${row.last_seen_at})`,
      ),
    findSessionByTokenHash: (hash: string) =>
      db.get<SessionWithUser>(
        sql`SELECT s.*, u.email, u.account_id FROM dashboard_sessions s
             JOIN dashboard_users u ON u.id = s.user_id WHERE s.token_hash = ${hash}`,
      ),
    touchSession: (id: string, now: number) =>
      db.run(sql`UPDATE dashboard_sessions SET last_seen_at = ${now} WHERE id = ${id}`),
    deleteSession: (id: string) => db.run(sql`DELETE FROM dashboard_sessions WHERE id = ${id}`),
    deleteUserSessions: (userId: string) => db.run(sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId}`),
    /** Sessions idle since `idleSince` or opened before `openedBefore`. */
    deleteExpiredSessions: (idleSince: number, openedBefore: number) =>
      db.run(sql`DELETE FROM dashboard_sessions WHERE last_seen_at <= ${idleSince} OR created_at <= ${openedBefore}`),

    /**
     * Its rowid, by which deleteFailure deletes it. RETURNING rather than lastInsertRowid, which
     * only SQLite has; PostgreSQL's table has an explicit rowid.
     */
    recordFailure: async (key: string, at: number): Promise<number> =>
      (await db.get<{ rowid: number }>(
        sql`INSERT INTO sign_in_failures (key, at) VALUES (${key}, ${at}) RETURNING rowid`,
      ))!.rowid,
    /**
     * Holds other sign-in attempts counted under `key` back until the caller's transaction ends, on
     * PostgreSQL, whose transactions run side by side (in one process and across replicas): the
     * next one to count finds this one's failure. A transaction-scoped advisory lock, as a key
     * (an email nobody may have, a client's address) has no row of its own to lock. Taken in the
     * same order by every attempt (email, then client), so two never wait for each other. SQLite
     * runs one transaction at a time already.
     */
    async lockFailures(key: string): Promise<void> {
      if (isPostgres(db)) await db.get(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0)) AS locked`);
    },
    /** Failure times of `key` after `since`, newest first. */
    failuresSince: async (key: string, since: number) =>
      (
        await db.all<{ at: number }>(
          sql`SELECT at FROM sign_in_failures WHERE key = ${key} AND at > ${since} ORDER BY at DESC`,
        )
      ).map((r) => r.at),
    clearFailures: (key: string) => db.run(sql`DELETE FROM sign_in_failures WHERE key = ${key}`),
    /** One failure, by the rowid recordFailure gave. */
    deleteFailure: (rowid: number) => db.run(sql`DELETE FROM sign_in_failures WHERE rowid = ${rowid}`),
    purgeFailuresUpTo: (at: number) => db.run(sql`DELETE FROM sign_in_failures WHERE at <= ${at}`),
    /** Keeps only the newest `keep` failures of `key`. */
    trimFailures: (key: string, keep: number) =>
      db.run(
        sql`DELETE FROM sign_in_failures WHERE key = ${key} AND rowid NOT IN
              (SELECT rowid FROM sign_in_failures WHERE key = ${key} ORDER BY at DESC, rowid DESC LIMIT ${keep})`,
      ),

    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}
