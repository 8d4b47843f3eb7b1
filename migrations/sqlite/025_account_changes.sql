-- A version of everything an API key's authentication reads (the key's revocation, its account's
-- name, payout address, fee and speed), moved on by triggers at every change, whichever process
-- or code path makes it. A server caches keys it resolved, each with the version it was read at,
-- and trusts an entry only while the version is unchanged (src/accounts/key-cache.ts): a
-- revocation is seen by the next request. Reading it is one row; resolving a key is a join.
CREATE TABLE account_changes (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  n   INTEGER NOT NULL
) STRICT;

INSERT INTO account_changes (id, n) VALUES (1, 0);

CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys BEGIN
  UPDATE account_changes SET n = n + 1;
END;

CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys BEGIN
  UPDATE account_changes SET n = n + 1;
END;

CREATE TRIGGER accounts_changed AFTER UPDATE ON accounts BEGIN
  UPDATE account_changes SET n = n + 1;
END;

CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts BEGIN
  UPDATE account_changes SET n = n + 1;
END;
