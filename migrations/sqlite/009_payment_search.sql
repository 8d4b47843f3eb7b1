-- The dashboard's payment list, search and home figures, each answered from an index.
-- Lists run newest first by (created_at, seq) and page by keyset, so no page reads the rows
-- before it; a search is an exact match on one of these columns, never a LIKE.

CREATE INDEX payments_account_created ON payments(account_id, created_at, seq);
CREATE INDEX payments_account_status ON payments(account_id, status, created_at, seq);
CREATE INDEX payments_account_reference ON payments(account_id, reference, created_at, seq)
  WHERE reference IS NOT NULL;
CREATE INDEX payments_account_invoice ON payments(account_id, invoice_number, created_at, seq)
  WHERE invoice_number IS NOT NULL;
CREATE INDEX payments_account_email ON payments(account_id, customer_email COLLATE NOCASE, created_at, seq)
  WHERE customer_email IS NOT NULL;

-- The platform fee taken by the settlements recorded in amount_settled: each settlement's own
-- floor(amount * fee_bps / 10000), as the forwarder computes it on chain.
ALTER TABLE payments ADD COLUMN fee_settled INTEGER NOT NULL DEFAULT 0;

-- Settled money per account and UTC day (days since 1970-01-01), added to in the transaction
-- that records each settlement, so the home page reads a month in 30 rows.
CREATE TABLE settled_daily (
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  day         INTEGER NOT NULL,
  gross       INTEGER NOT NULL,   -- settled from deposit addresses, fee included
  fee         INTEGER NOT NULL,   -- of which went to the fee recipient
  PRIMARY KEY (account_id, day)
) STRICT, WITHOUT ROWID;

-- Settlements recorded before this migration count as one sweep each, on the day the payment
-- last changed. The fee is floor(a * bps / 10000) split so that no product passes 2^63.
UPDATE payments
   SET fee_settled = (amount_settled / 10000) * fee_bps + ((amount_settled % 10000) * fee_bps) / 10000
 WHERE amount_settled > 0;

INSERT INTO settled_daily (account_id, day, gross, fee)
SELECT account_id, updated_at / 86400000, amount_settled, fee_settled FROM payments WHERE amount_settled > 0
ON CONFLICT (account_id, day) DO UPDATE
   SET gross = CASE WHEN excluded.gross > 9223372036854775807 - gross THEN 9223372036854775807 ELSE gross + excluded.gross END,
       fee = CASE WHEN excluded.fee > 9223372036854775807 - fee THEN 9223372036854775807 ELSE fee + excluded.fee END;

-- Payments per account and status, for the home page: counting an account's rows in an index
-- takes time in proportion to them (a fifth of a second at a million). Triggers keep it exact
-- in the transaction of every insert and status change, whichever code path makes them.
CREATE TABLE payment_status_counts (
  account_id  TEXT NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL,
  PRIMARY KEY (account_id, status)
) STRICT, WITHOUT ROWID;

INSERT INTO payment_status_counts (account_id, status, n)
SELECT account_id, status, count(*) FROM payments GROUP BY account_id, status;

CREATE TRIGGER payments_counted AFTER INSERT ON payments BEGIN
  INSERT INTO payment_status_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
  ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER payments_recounted AFTER UPDATE OF status ON payments WHEN OLD.status != NEW.status BEGIN
  UPDATE payment_status_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
  INSERT INTO payment_status_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
  ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER payments_uncounted AFTER DELETE ON payments BEGIN
  UPDATE payment_status_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
END;
