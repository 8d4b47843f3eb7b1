-- Funds paid to a version 2 deposit address on a source chain, moved to the same address on
-- the settlement chain through CCTP by the address itself (DepositFactoryV2.bridge): one row
-- per burn, followed from the credited transfer to the settlement that sweeps the mint.
CREATE TABLE bridges (
  id                TEXT PRIMARY KEY,         -- brg_...
  payment_id        TEXT NOT NULL REFERENCES payments(id),
  chain_id          INTEGER NOT NULL,         -- the source chain it burns on
  state             TEXT NOT NULL,            -- credited | burned | attested | minted | settled
  amount            INTEGER,                  -- burned (the Bridged event's amount), once mined
  max_fee           INTEGER,                  -- of the burn last signed
  min_finality      INTEGER,                  -- 1000 fast, 2000 standard
  fee               INTEGER,                  -- feeExecuted, once attested: the merchant's cost
  nonce             INTEGER,                  -- the relayer's nonce on the source chain, signed before it is sent
  raw_tx            TEXT,                     -- so a restart or an evicted transaction is sent again unchanged
  tx_hash           TEXT,                     -- the newest signed bridge() transaction
  tx_hashes         TEXT,                     -- JSON list of every one signed on this nonce (fee bumps)
  sent_at           INTEGER,
  block_number      INTEGER,                  -- of the mined burn, on the source chain
  burn_tx_hash      TEXT,                     -- the mined one of tx_hashes
  burn_id           TEXT,                     -- the crosschain_burns row the redeemer follows
  message_nonce     TEXT,                     -- CCTP's nonce of the attested message
  mint_tx_hash      TEXT,
  mint_block_number INTEGER,                  -- on the settlement chain, with the mint's log index
  mint_log_index    INTEGER,
  error             TEXT,                     -- the last problem (a revert, no gas), cleared on progress
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   INTEGER NOT NULL,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
) STRICT;

CREATE INDEX bridges_payment ON bridges(payment_id);
CREATE INDEX bridges_open ON bridges(chain_id, next_attempt_at) WHERE state = 'credited';
CREATE INDEX bridges_message ON bridges(message_nonce) WHERE message_nonce IS NOT NULL;

-- The bridge that carries a credited source-chain transfer (null on the settlement chain, and
-- until a bridge takes it).
ALTER TABLE transfers ADD COLUMN bridge_id TEXT REFERENCES bridges(id);
CREATE INDEX transfers_unbridged ON transfers(chain_id, payment_id) WHERE bridge_id IS NULL AND credited_at IS NOT NULL;

-- A deposit address's own burn, followed by the redeemer like a payer's.
ALTER TABLE crosschain_burns ADD COLUMN bridge_id TEXT;

-- What is owed to the merchant leaves out the CCTP fees the bridges paid.
DROP INDEX payments_unswept;
CREATE INDEX payments_unswept ON payments(seq) WHERE status = 'confirmed' AND amount_received > amount_settled + bridge_fee;
