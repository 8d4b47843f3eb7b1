-- Version 3 of the deposit contracts: every payment issued from now on. Its deposit address also
-- commits to the CCTP source domains its `bridge` may ask fast finality from: a bitmap (bit d for
-- domain d), kept as a decimal string because it can exceed 64 bits. NULL for versions 1 and 2.
ALTER TABLE payments ADD COLUMN fast_domains TEXT;
-- fee_settled counts what settlements actually paid the fee recipient: a version 3 settlement
-- whose fee transfer failed (FeeSkipped) paid it all to the payout and adds no fee.
