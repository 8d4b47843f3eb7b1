-- Payments per account and status, without a row that every create must lock: each insert,
-- status change and delete appends its +1 / -1 here, and a reader adds these deltas to the
-- folded counts in payment_status_counts. The fold (src/payments/status-count-store.ts) moves deltas
-- into the counts every minute, so there are only ever a minute's worth to add up. On
-- PostgreSQL the old triggers made every create of an account wait for the one row of its
-- 'pending' count, held until commit; appending takes no lock that another create waits for.
CREATE TABLE payment_status_deltas (
  id          INTEGER PRIMARY KEY,
  account_id  TEXT NOT NULL,
  status      TEXT NOT NULL,
  n           INTEGER NOT NULL
) STRICT;

CREATE INDEX payment_status_deltas_account ON payment_status_deltas(account_id, status);

DROP TRIGGER payments_counted;
DROP TRIGGER payments_recounted;
DROP TRIGGER payments_uncounted;

CREATE TRIGGER payments_counted AFTER INSERT ON payments BEGIN
  INSERT INTO payment_status_deltas (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1);
END;

CREATE TRIGGER payments_recounted AFTER UPDATE OF status ON payments WHEN OLD.status != NEW.status BEGIN
  INSERT INTO payment_status_deltas (account_id, status, n)
  VALUES (OLD.account_id, OLD.status, -1), (NEW.account_id, NEW.status, 1);
END;

CREATE TRIGGER payments_uncounted AFTER DELETE ON payments BEGIN
  INSERT INTO payment_status_deltas (account_id, status, n) VALUES (OLD.account_id, OLD.status, -1);
END;
