-- One deposit address on every enabled chain (version 2 of the deposit contracts).
-- A payment records which factory made its deposit address and, for version 2, the rest of
-- what the address's salt commits to, so a later change of configuration never changes the
-- terms of a payment already issued.
ALTER TABLE payments ADD COLUMN factory_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE payments ADD COLUMN settlement_domain INTEGER;   -- CCTP domain the address bridges to (version 2)
ALTER TABLE payments ADD COLUMN token_messenger TEXT;        -- CCTP TokenMessengerV2 it burns through (version 2)
ALTER TABLE payments ADD COLUMN max_bridge_fee_bps INTEGER;  -- bound on a bridge's fee (version 2)
ALTER TABLE payments ADD COLUMN bridge_fee INTEGER NOT NULL DEFAULT 0; -- CCTP fees its bridges paid: the merchant's cost

-- The chain each transfer was made on: the settlement chain's id for every row before this one.
ALTER TABLE transfers ADD COLUMN chain_id INTEGER NOT NULL DEFAULT 0;
UPDATE transfers SET chain_id = (SELECT chain_id FROM payments WHERE payments.id = transfers.payment_id);
DROP INDEX transfers_uncredited;
CREATE INDEX transfers_uncredited ON transfers(chain_id, block_number) WHERE credited_at IS NULL;
