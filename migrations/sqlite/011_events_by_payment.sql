-- A payment's status history on its dashboard page reads its events; without this index that read
-- scans every event of the account (about a second at three million events, 0.05 ms with it).

CREATE INDEX events_payment_seq ON events(payment_id, seq);
