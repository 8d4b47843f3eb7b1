-- Dashboard users, their sign-in sessions and the failed sign-ins the throttle counts.

CREATE TABLE dashboard_users (
  id             TEXT PRIMARY KEY,                 -- usr_...
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  email          TEXT NOT NULL,                    -- stored lower case: one user per address, whatever its case
  password_hash  TEXT NOT NULL,                    -- Argon2id (PHC string)
  created_at     INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX dashboard_users_email ON dashboard_users(email);
CREATE INDEX dashboard_users_account ON dashboard_users(account_id, created_at);

CREATE TABLE dashboard_sessions (
  id            TEXT PRIMARY KEY,                  -- ses_...
  token_hash    TEXT NOT NULL UNIQUE,              -- SHA-256 of the cookie's token; the token itself is never stored
  user_id       TEXT NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
  csrf_token    TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX dashboard_sessions_user ON dashboard_sessions(user_id);

-- One row per failed sign-in per key ("email:<address>" and "client:<ip>"), kept for the window.
CREATE TABLE sign_in_failures (
  key  TEXT NOT NULL,
  at   INTEGER NOT NULL
) STRICT;

CREATE INDEX sign_in_failures_key ON sign_in_failures(key, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures(at);
