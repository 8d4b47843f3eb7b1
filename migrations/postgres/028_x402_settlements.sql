-- Settlements Stablegate's x402 facilitator made for an account (src/x402/), one per EIP-3009
-- authorization (the core's record, `auth_...`). To a deposit address the payment is known from
-- the start; to the payout address it is made, pending, settling and confirmed in one
-- transaction once the transfer is mined (`payment_id` set then), so a settlement that fails
-- leaves no payment behind. `state`: 'pending' until the authorization succeeds or fails.
CREATE TABLE x402_settlements (
  authorization_id  TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  payment_id        TEXT REFERENCES payments(id),
  pay_to            TEXT NOT NULL,
  payer             TEXT NOT NULL,
  amount            BIGINT NOT NULL,
  resource          TEXT,
  description       TEXT,
  state             TEXT NOT NULL CHECK (state IN ('pending', 'recorded', 'failed')),
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL
);

CREATE INDEX x402_settlements_pending ON x402_settlements (created_at) WHERE state = 'pending';
