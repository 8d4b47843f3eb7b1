-- EIP-3009 transferWithAuthorization payments the relayer submits (docs/gasless.md): one row per
-- signed authorization accepted, followed from the signed transaction (stored before it is
-- broadcast) to its outcome. (chain_id, token, from_address, nonce) is the token's own key for an
-- authorization: the same one accepted twice is the same row.
CREATE TABLE authorizations (
  id              TEXT PRIMARY KEY,                   -- auth_...
  payment_id      TEXT REFERENCES payments(id),       -- NULL only for a facilitator settlement before its payment
  account_id      TEXT NOT NULL REFERENCES accounts(id),
  chain_id        BIGINT NOT NULL,
  token           TEXT NOT NULL,                      -- EIP-55
  from_address    TEXT NOT NULL,                      -- EIP-55: the payer, who signed
  to_address      TEXT NOT NULL,                      -- EIP-55
  value           TEXT NOT NULL,                      -- micro-USDC as signed, decimal (a uint256)
  valid_after     TEXT NOT NULL,                      -- unix seconds as signed, decimal (a uint256)
  valid_before    TEXT NOT NULL,
  nonce           TEXT NOT NULL,                      -- bytes32, lower-case hex, as signed
  signature       TEXT NOT NULL,
  source          TEXT NOT NULL CHECK (source IN ('checkout', 'x402', 'facilitator')),
  client          TEXT NOT NULL,                      -- who asked, for the per-client limit
  resource        TEXT,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'submitted', 'succeeded', 'failed')),
  relayer_nonce   BIGINT,                            -- the relayer's nonce, signed before sent
  raw_tx          TEXT,                               -- so a restart sends the same transaction again
  tx_hashes       TEXT,                               -- JSON list: every fee bump, oldest first
  tx_hash         TEXT,                               -- ours while sent; once done, the one that moved the funds
  sent_at         BIGINT,
  from_block      BIGINT NOT NULL,                   -- the head when accepted: where its use is looked for
  failure_code    TEXT,
  failure_message TEXT,                               -- in words a payer understands
  last_error      TEXT,                               -- the last transient problem, for operators
  attempts        BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);

CREATE UNIQUE INDEX authorizations_once ON authorizations(chain_id, token, from_address, nonce);
CREATE INDEX authorizations_payment ON authorizations(payment_id, created_at);
CREATE INDEX authorizations_client ON authorizations(client, created_at);
CREATE INDEX authorizations_account ON authorizations(account_id, created_at);
-- The submitter's work (src/chain/authorizations/store.ts due): a record it is done with waits until never.
CREATE INDEX authorizations_due ON authorizations(next_attempt_at);
