-- Work that one replica at a time may do (the chain side: watchers, settlements, bridging,
-- redemptions) is held through a lease. A new holder gets a larger token (fencing), and every
-- cursor move and every relayer transaction is recorded only in a transaction that finds its
-- token still current, so a replica that lost the lease can neither move a cursor nor send.
CREATE TABLE leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,                          -- the replica: host, pid and a random part
  token       INTEGER NOT NULL,                       -- one more with every new holder
  expires_at  INTEGER NOT NULL                        -- ms since the epoch, by the database's clock
) STRICT;

-- Watchers look up a range's transfer recipients (lower-case, as log topics hold them) among
-- the deposit addresses, whichever replica issued them.
CREATE INDEX payments_deposit_lower ON payments(lower(deposit_address));
