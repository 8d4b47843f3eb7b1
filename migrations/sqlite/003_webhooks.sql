-- Webhook deliveries: one per (event, endpoint), created in the transaction that writes the
-- event, and every attempt made for it.

CREATE TABLE webhook_deliveries (
  id               TEXT PRIMARY KEY,
  event_id         TEXT NOT NULL REFERENCES events(id),
  endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints(id),
  account_id       TEXT NOT NULL,
  state            TEXT NOT NULL,     -- pending | succeeded | failed | canceled
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER,           -- NULL once nothing more will be tried
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  UNIQUE (event_id, endpoint_id)
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at);

CREATE TABLE webhook_attempts (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id      TEXT NOT NULL REFERENCES webhook_deliveries(id),
  attempted_at     INTEGER NOT NULL,
  response_status  INTEGER,           -- NULL when no HTTP answer came
  error            TEXT,
  duration_ms      INTEGER NOT NULL,
  next_retry_at    INTEGER            -- NULL when this attempt was the last
) STRICT;

CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id);
