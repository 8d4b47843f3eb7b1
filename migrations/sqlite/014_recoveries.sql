-- Tokens or native coin sent to a deposit address by mistake, returned to the payout address on
-- the chain where they sit by the factory's `recover`. One row per request, followed from the
-- signed transaction (stored before it is broadcast) to its confirmed outcome.
CREATE TABLE recoveries (
  id              TEXT PRIMARY KEY,                   -- rcv_...
  payment_id      TEXT NOT NULL REFERENCES payments(id),
  chain_id        INTEGER NOT NULL,                   -- where the funds sit and the transaction is sent
  token           TEXT,                               -- ERC-20 address; NULL for the native coin
  decimals        INTEGER,                            -- the token's, when it says (18 for native coin)
  payout_address  TEXT NOT NULL,                      -- where the contract sends them: the payment's payout
  state           TEXT NOT NULL,                      -- pending | submitted | succeeded | failed
  amount_units    TEXT,                               -- the Recovered event's amount, in the token's units
  nonce           INTEGER,                            -- the relayer nonce on chain_id, signed before sent
  raw_tx          TEXT,                               -- so a restart sends the same transaction again
  tx_hash         TEXT,                               -- the newest signed transaction
  tx_hashes       TEXT,                               -- JSON list: every fee bump, oldest first
  sent_at         INTEGER,
  block_number    INTEGER,
  error           TEXT,                               -- why it failed, or the last transient problem
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX recoveries_payment ON recoveries(payment_id, created_at);
CREATE INDEX recoveries_open ON recoveries(next_attempt_at) WHERE state IN ('pending', 'submitted');
