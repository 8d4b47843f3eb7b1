-- On-chain state: transfers to deposit addresses, the watcher's cursor, settlement
-- transactions, and the event outbox written with every status change.

ALTER TABLE payments ADD COLUMN amount_settled INTEGER NOT NULL DEFAULT 0;  -- swept to the merchant so far
ALTER TABLE payments ADD COLUMN settle_attempts INTEGER NOT NULL DEFAULT 0; -- failed settlements in a row
ALTER TABLE payments ADD COLUMN settle_retry_at INTEGER;                    -- when a failed settlement is retried

-- What the settler looks for every poll (see awaitingSettlement in src/payments/store.ts).
CREATE INDEX payments_funded_open ON payments(seq) WHERE status IN ('pending', 'underpaid', 'expired') AND amount_received >= amount;
CREATE INDEX payments_unswept ON payments(seq) WHERE status = 'confirmed' AND amount_received > amount_settled;

CREATE TABLE transfers (
  tx_hash       TEXT NOT NULL,
  log_index     INTEGER NOT NULL,
  payment_id    TEXT NOT NULL REFERENCES payments(id),
  from_address  TEXT NOT NULL,
  amount        INTEGER NOT NULL,
  block_number  INTEGER NOT NULL,
  block_hash    TEXT NOT NULL,
  credited_at   INTEGER,            -- NULL: seen (through /sync) but not yet confirmed
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (tx_hash, log_index)
) STRICT;

CREATE INDEX transfers_payment ON transfers(payment_id, block_number, log_index);
CREATE INDEX transfers_uncredited ON transfers(block_number) WHERE credited_at IS NULL;

CREATE TABLE chain_cursor (
  chain_id      INTEGER PRIMARY KEY,
  block_number  INTEGER NOT NULL,   -- every block up to here has been scanned and credited
  block_hash    TEXT NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE settlements (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  payment_id    TEXT NOT NULL REFERENCES payments(id),
  nonce         INTEGER NOT NULL,
  state         TEXT NOT NULL,      -- submitted | mined | reverted | dropped
  tx_hash       TEXT NOT NULL,      -- the newest signed transaction for this nonce
  tx_hashes     TEXT NOT NULL,      -- JSON: every hash broadcast for this nonce (replacements)
  raw_tx        TEXT NOT NULL,      -- signed, so a restart can rebroadcast it unchanged
  max_fee       TEXT NOT NULL,
  priority_fee  TEXT NOT NULL,
  amount        INTEGER,            -- swept amount, from the Settled log once mined
  block_number  INTEGER,
  submitted_at  INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX settlements_open ON settlements(state) WHERE state = 'submitted';
CREATE INDEX settlements_payment ON settlements(payment_id);

CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  type        TEXT NOT NULL,
  payment_id  TEXT REFERENCES payments(id),
  payload     TEXT NOT NULL,        -- the whole event JSON, exactly as delivered
  created_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX events_account_seq ON events(account_id, seq);
