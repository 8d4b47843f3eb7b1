-- Settlements Stablegate's x402 facilitator made for an account (src/x402/), one per EIP-3009
-- authorization (the core's record, `auth_...`). To a deposit address the payment is known from
-- the start; to the payout address it is made, pending and settling in one transaction once the
-- transfer is mined (`payment_id` and `tx_hash` set then), so a settlement that fails leaves no
-- payment behind, and it is confirmed once the payment's speed policy counts the transfer's block.
-- `state`: 'pending' until the authorization succeeds or fails; then 'failed', or 'recorded'
-- (a deposit address's, whose payment the watcher credits), or for the payout address's
-- 'settling' (its payment made, the transfer not deep enough yet) and then 'recorded' (confirmed).
CREATE TABLE x402_settlements (
  authorization_id  TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  payment_id        TEXT REFERENCES payments(id),
  pay_to            TEXT NOT NULL,
  payer             TEXT NOT NULL,
  amount            INTEGER NOT NULL,
  tx_hash           TEXT,
  resource          TEXT,
  description       TEXT,
  state             TEXT NOT NULL CHECK (state IN ('pending', 'settling', 'recorded', 'failed')),
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
) STRICT;

CREATE INDEX x402_settlements_pending ON x402_settlements (created_at) WHERE state = 'pending';

-- The settler leaves a settling payment with such a settlement alone (its funds are already at
-- the payout address), and the facilitator's follower reads these until they are deep enough.
CREATE INDEX x402_settlements_settling ON x402_settlements (payment_id) WHERE state = 'settling';
