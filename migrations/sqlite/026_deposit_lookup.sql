-- The watcher now looks deposit addresses up in their stored, checksummed form, through the unique
-- index on deposit_address (src/payments/store.ts: depositAddressesAmong). This index of their
-- lower-case form cost every create a write to a page chosen at random, for nothing it still answers.
DROP INDEX payments_deposit_lower;
