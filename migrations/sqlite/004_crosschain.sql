-- CCTP burns a payer made on another chain for a payment, followed until the mint lands on the
-- payment's deposit address (where the watcher credits it like any transfer).

CREATE TABLE crosschain_burns (
  id              TEXT PRIMARY KEY,
  payment_id      TEXT NOT NULL REFERENCES payments(id),
  source_chain    TEXT NOT NULL,
  source_domain   INTEGER NOT NULL,
  tx_hash         TEXT NOT NULL,
  state           TEXT NOT NULL,     -- attesting | redeeming | redeemed | failed
  amount          INTEGER,           -- burned amount, once read from the source chain
  message         TEXT,              -- attested message and attestation, from the attestation service
  attestation     TEXT,
  message_nonce   TEXT,
  redeem_tx_hash  TEXT,
  redeem_nonce    INTEGER,           -- the relayer nonce of the redemption, signed before it is sent
  redeem_raw_tx   TEXT,              -- so a restart or an evicted transaction is sent again unchanged
  redeem_sent_at  INTEGER,
  error           TEXT,              -- why it failed, or the last transient problem
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (source_domain, tx_hash)
) STRICT;

CREATE INDEX crosschain_burns_payment ON crosschain_burns(payment_id);
CREATE INDEX crosschain_burns_due ON crosschain_burns(next_attempt_at) WHERE state IN ('attesting', 'redeeming');
