-- Speed policies (docs/speed.md): how deep a transfer and a settlement must be before they count.
-- An account's policy; NULL follows the operator's STABLEGATE_SPEED.
ALTER TABLE accounts ADD COLUMN speed TEXT CHECK (speed IN ('fast', 'standard', 'final'));
-- The policy in effect for a payment, fixed when it is created (the request's, else the account's,
-- else the operator's): payments made before policies existed ran at today's standard depth.
ALTER TABLE payments ADD COLUMN speed TEXT NOT NULL DEFAULT 'standard'
  CHECK (speed IN ('fast', 'standard', 'final'));

-- Transfers that a reorg removed from the chain, credited or only seen: moved out of `transfers`
-- (so nothing that sums credited funds counts them, and the same transaction may land again under
-- its key) and kept here, so the payment's record still shows them.
CREATE TABLE reversed_transfers (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  chain_id      INTEGER NOT NULL,
  tx_hash       TEXT NOT NULL,
  log_index     INTEGER NOT NULL,
  payment_id    TEXT NOT NULL REFERENCES payments(id),
  from_address  TEXT NOT NULL,
  amount        INTEGER NOT NULL,
  block_number  INTEGER NOT NULL,
  block_hash    TEXT NOT NULL,
  credited_at   INTEGER,                -- NULL: seen, never credited, then gone
  created_at    INTEGER NOT NULL,
  reversed_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX reversed_transfers_payment ON reversed_transfers(payment_id);
-- The watcher scans to the chain's head and checks what it recorded in each range it scans again.
CREATE INDEX transfers_chain_block ON transfers(chain_id, block_number);

-- The fee a mined settlement paid (its Settled event), so a reorg that removes it can take back
-- exactly what it added; and the mined settlements still young enough to be watched for a reorg.
ALTER TABLE settlements ADD COLUMN fee INTEGER;
CREATE INDEX settlements_mined ON settlements(block_number) WHERE state = 'mined';
