-- A version of everything an API key's authentication reads (the key's revocation, its account's
-- name, payout address, fee and speed), moved on by triggers at every change. The SQLite server
-- caches keys against it (src/accounts/key-cache.ts); on PostgreSQL, where reading it would cost a
-- round trip like reading the key, nothing caches keys, and the table is kept so that both stores
-- have one schema (test/db/postgres-schema.test.ts) and `db copy` finds it on both sides.
CREATE TABLE account_changes (
  id  BIGINT PRIMARY KEY CHECK (id = 1),
  n   BIGINT NOT NULL
);

INSERT INTO account_changes (id, n) VALUES (1, 0);

CREATE FUNCTION account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE account_changes SET n = n + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION account_changed();
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION account_changed();
CREATE TRIGGER accounts_changed AFTER UPDATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION account_changed();
CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION account_changed();
