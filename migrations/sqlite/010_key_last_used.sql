-- When each API key last authenticated a request, to the minute: the dashboard's keys page and
-- `stablegate key list` show it so a merchant can tell a key in use from one safe to revoke.

ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;  -- NULL: never used
