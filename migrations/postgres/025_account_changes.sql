-- A version of everything an API key's authentication reads (the key's revocation, its account's
-- name, payout address, fee and speed), moved on by triggers at every change. Every read of a key
-- reads it too (src/accounts/key-cache.ts): the SQLite server checks its cached keys against it on
-- every request; on PostgreSQL a payment create's INSERT stores the payment only while it is still
-- the version its key was read at (src/payments/insert-store.ts).
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
