-- Replicas sharing one PostgreSQL database deliver webhooks in parallel: a worker claims each due
-- delivery by moving its next_attempt_at past the send (so no other worker finds it due) and
-- naming itself here, until it records the attempt. A claim left by a replica that died falls
-- due again when that time passes, or at once when the same replica restarts.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;
