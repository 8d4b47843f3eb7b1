-- A version of everything an API key's authentication reads (the key's revocation, its account's
-- name, payout address, fee and speed), moved on by triggers at every change, whichever replica
-- or code path makes it, and announced with NOTIFY stablegate_account_changes, which PostgreSQL
-- delivers to every replica when the change commits. A replica caches keys it resolved and drops
-- them all on each notification, and caches nothing while it is not listening
-- (src/accounts/key-cache.ts).
CREATE TABLE account_changes (
  id  BIGINT PRIMARY KEY CHECK (id = 1),
  n   BIGINT NOT NULL
);

INSERT INTO account_changes (id, n) VALUES (1, 0);

CREATE FUNCTION account_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE account_changes SET n = n + 1;
  PERFORM pg_notify('stablegate_account_changes', '');
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
