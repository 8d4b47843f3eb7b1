-- Refunds (docs/refunds.md): the merchant pays them from their own wallet; Stablegate keeps the
-- record, collects the payer's address through a claim link, and watches the chain for the transfer.
CREATE TABLE refunds (
  seq               INTEGER PRIMARY KEY AUTOINCREMENT,
  id                TEXT NOT NULL UNIQUE,
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  payment_id        TEXT NOT NULL REFERENCES payments(id),
  amount            INTEGER NOT NULL CHECK (amount > 0),
  status            TEXT NOT NULL
    CHECK (status IN ('awaiting_address', 'awaiting_payment', 'succeeded', 'canceled')),
  reason            TEXT,
  metadata          TEXT,                  -- the merchant's JSON text, returned byte for byte
  claim_token_hash  TEXT NOT NULL UNIQUE,  -- SHA-256 of the claim link's token; the token is never stored
  chain_id          INTEGER NOT NULL,      -- where the refund is paid: the payment's settlement chain
  refund_address    TEXT,                  -- EIP-55; NULL until the payer (or the merchant) names it
  -- The watcher's cursor when the address became known: only a transfer in a later block can pay it.
  payable_after_block INTEGER,
  -- The transfer that pays it, once seen (it succeeds when the payment's speed policy counts its block).
  tx_hash           TEXT,
  log_index         INTEGER,
  block_number      INTEGER,
  block_hash        TEXT,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  payable_at        INTEGER,
  succeeded_at      INTEGER,
  canceled_at       INTEGER
) STRICT;
CREATE INDEX refunds_account_seq ON refunds(account_id, seq);
CREATE INDEX refunds_payment ON refunds(payment_id, seq);
-- What the watcher looks for: refunds with an address and no settled transfer yet.
CREATE INDEX refunds_payable ON refunds(chain_id, refund_address) WHERE status = 'awaiting_payment';
-- One transfer pays at most one refund.
CREATE UNIQUE INDEX refunds_transfer ON refunds(chain_id, tx_hash, log_index) WHERE tx_hash IS NOT NULL;

-- What every refund not canceled adds up to (the cap: never more than amount_received), and what
-- the succeeded ones paid back (`amount_refunded` on the payment object). Both move in the same
-- transaction as the refund's status.
ALTER TABLE payments ADD COLUMN refund_reserved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN amount_refunded INTEGER NOT NULL DEFAULT 0;
