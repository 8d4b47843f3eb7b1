-- Payment links: reusable URLs (/l/<id>) that create a payment for whoever opens them.
-- A link asks a fixed amount (amount, with line_items when itemised) or lets the payer choose
-- (amount NULL, optionally bounded by min_amount / max_amount). Amounts are integer micro-USDC.

CREATE TABLE payment_links (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,  -- creation order, for stable pagination
  id           TEXT NOT NULL UNIQUE,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  description  TEXT,
  amount       INTEGER,                            -- NULL: the payer chooses
  line_items   TEXT,                               -- JSON array, amounts in micro-USDC
  min_amount   INTEGER,                            -- only when the payer chooses
  max_amount   INTEGER,
  success_url  TEXT,
  metadata     TEXT,                               -- the merchant's JSON, byte for byte; copied to each payment
  active       INTEGER NOT NULL DEFAULT 1,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX payment_links_account_seq ON payment_links(account_id, seq);

-- The link a payment was created through; NULL for payments made through the API. The index
-- serves a link's own payments, newest first (the dashboard's link page), and holds link payments only.
ALTER TABLE payments ADD COLUMN payment_link TEXT REFERENCES payment_links(id);
CREATE INDEX payments_link_seq ON payments(payment_link, seq) WHERE payment_link IS NOT NULL;
