-- Outgoing email (docs/email.md). The outbox: each email is written, rendered, in the transaction
-- of the event that causes it; the email worker claims, sends and marks it. `dedupe_key` names
-- what it is about and for whom (`evt_...:payment.confirmed:customer`, `summary:2026-11-27:usr_...`),
-- so the same email is never queued twice.
CREATE TABLE email_outbox (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,          -- eml_...; also the Message-ID's left part
  dedupe_key      TEXT NOT NULL UNIQUE,
  account_id      TEXT REFERENCES accounts(id),  -- NULL for the operator's own (relayer gas, test)
  payment_id      TEXT,                          -- what attachments are drawn from, at send time
  kind            TEXT NOT NULL,                 -- invoice, receipt, underpaid, refund_claim, ...
  recipient       TEXT NOT NULL,
  subject         TEXT NOT NULL,
  text_body       TEXT NOT NULL,
  html_body       TEXT NOT NULL,
  unsubscribe_url TEXT,                          -- List-Unsubscribe, for the merchant's notices
  state           TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  claimed_by      TEXT,                          -- the replica sending it now (see webhook claims, 015)
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  sent_at         INTEGER
) STRICT;
CREATE INDEX email_outbox_due ON email_outbox(next_attempt_at) WHERE state = 'pending';
CREATE INDEX email_outbox_account ON email_outbox(account_id, seq);

-- Customer emails (invoice, receipt, underpayment, refund claim) are on unless the account turns
-- them off; no row means on.
CREATE TABLE email_account_settings (
  account_id      TEXT PRIMARY KEY REFERENCES accounts(id),
  customer_emails INTEGER NOT NULL CHECK (customer_emails IN (0, 1)),
  updated_at      INTEGER NOT NULL
) STRICT;

-- What a dashboard user is told of confirmed payments: each one, a daily summary, or nothing
-- (payments needing attention and the other alerts are always sent). No row means `each`.
CREATE TABLE email_user_settings (
  user_id         TEXT PRIMARY KEY REFERENCES dashboard_users(id) ON DELETE CASCADE,
  payments        TEXT NOT NULL CHECK (payments IN ('each', 'daily', 'none')),
  updated_at      INTEGER NOT NULL
) STRICT;
