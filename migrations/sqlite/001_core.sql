-- Accounts, their API keys, payments, idempotency records and webhook endpoints.
-- Amounts are integer micro-USDC; times are Unix epoch milliseconds.

CREATE TABLE accounts (
  id              TEXT PRIMARY KEY,
  name            TEXT NOT NULL,
  payout_address  TEXT NOT NULL,
  fee_bps         INTEGER,            -- NULL: the server's STABLEGATE_FEE_BPS
  created_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  key_hash    TEXT NOT NULL UNIQUE,   -- SHA-256 of the key; the key itself is never stored
  key_hint    TEXT NOT NULL,          -- last four characters, to tell keys apart in listings
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER
) STRICT;

CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE payments (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,  -- creation order, for stable pagination
  id               TEXT NOT NULL UNIQUE,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  status           TEXT NOT NULL,
  amount           INTEGER NOT NULL,
  amount_received  INTEGER,                            -- NULL until something is credited
  fee_bps          INTEGER NOT NULL,
  fee_recipient    TEXT NOT NULL,                      -- committed into the deposit address
  payout_address   TEXT NOT NULL,                      -- committed into the deposit address
  chain_id         INTEGER NOT NULL,
  token_address    TEXT NOT NULL,
  deposit_address  TEXT NOT NULL UNIQUE,
  description      TEXT,
  reference        TEXT,
  success_url      TEXT,
  customer_email   TEXT,
  customer_name    TEXT,
  invoice_number   TEXT,
  due_at           INTEGER,
  metadata         TEXT,                               -- the merchant's JSON, byte for byte
  line_items       TEXT,                               -- JSON array, amounts in micro-USDC
  expires_at       INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;

CREATE INDEX payments_account_seq ON payments(account_id, seq);
CREATE INDEX payments_status_expires ON payments(status, expires_at);

CREATE TABLE idempotency_keys (
  account_id     TEXT NOT NULL,
  key            TEXT NOT NULL,
  request_hash   TEXT NOT NULL,
  status_code    INTEGER,              -- NULL while the first request is in flight
  response_body  TEXT,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (account_id, key)
) STRICT;

CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE webhook_endpoints (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  url          TEXT NOT NULL,
  secret       TEXT NOT NULL,          -- needed in clear to sign deliveries
  created_at   INTEGER NOT NULL,
  disabled_at  INTEGER,                -- set when a receiver answers 410 Gone
  deleted_at   INTEGER
) STRICT;

CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, created_at);
