-- What the retention purge looks for on every run (src/ops/retention.ts): events past the
-- retention window, oldest first, and finished deliveries by when they finished. Without these
-- each batch would scan the whole table while holding the write lock.

CREATE INDEX events_created ON events(created_at);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(updated_at) WHERE state != 'pending';
