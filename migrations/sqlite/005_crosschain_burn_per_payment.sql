-- A burn is recorded per payment that posted it: the first payment to post a burn's hash no
-- longer owns it. Which payment a burn funds is decided by its mint recipient on the source
-- chain, and a record for the wrong payment fails there without blocking the right one's.
-- SQLite cannot change a table's constraints in place, so the table is rebuilt with its rows.

CREATE TABLE crosschain_burns_005 (
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
  UNIQUE (source_domain, tx_hash, payment_id)
) STRICT;

INSERT INTO crosschain_burns_005 (id, payment_id, source_chain, source_domain, tx_hash, state, amount, message, attestation,
  message_nonce, redeem_tx_hash, redeem_nonce, redeem_raw_tx, redeem_sent_at, error, attempts, next_attempt_at, created_at, updated_at)
SELECT id, payment_id, source_chain, source_domain, tx_hash, state, amount, message, attestation,
  message_nonce, redeem_tx_hash, redeem_nonce, redeem_raw_tx, redeem_sent_at, error, attempts, next_attempt_at, created_at, updated_at
FROM crosschain_burns;

DROP TABLE crosschain_burns;
ALTER TABLE crosschain_burns_005 RENAME TO crosschain_burns;

CREATE INDEX crosschain_burns_payment ON crosschain_burns(payment_id);
CREATE INDEX crosschain_burns_due ON crosschain_burns(next_attempt_at) WHERE state IN ('attesting', 'redeeming');
