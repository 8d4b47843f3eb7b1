/**
 * Migration 012 on a database that already holds payments and transfers: every existing payment
 * keeps its version 1 deposit address, and every existing transfer is on its payment's chain.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createChainStore } from "../../src/chain/store.ts";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { makeTempDir } from "../support/server.ts";

const dataDir = makeTempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("012 leaves existing payments on version 1 and puts existing transfers on their payment's chain", () => {
  const db = new Database(join(dataDir, "stablegate.db"), { create: true, strict: true });
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version < 12)) db.run(m.sql);
  db.run(
    "INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_old', 'Old', '0x1111111111111111111111111111111111111111', 0, 0)",
  );
  const payment = db.query(
    `INSERT INTO payments (id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address,
       chain_id, token_address, deposit_address, expires_at, created_at, updated_at)
     VALUES (?, 'acct_old', 'underpaid', 5000000, 1000000, 0, '0x0', '0x1', ?, '0x3', ?, 0, 0, 0)`,
  );
  payment.run("p_base", 8453, "0xd1");
  payment.run("p_arb", 42161, "0xd2");
  const transfer = db.query(
    `INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash,
       credited_at, created_at) VALUES (?, 0, ?, '0x9', 1000000, 7, '0xb', 1, 1)`,
  );
  transfer.run("0xt1", "p_base");
  transfer.run("0xt2", "p_arb");

  // 012 and every later one, as an upgrade runs them: the stores below read their tables too.
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version >= 12)) db.run(m.sql);

  const payments = createPaymentStore(db);
  const chain = createChainStore(db);
  for (const id of ["p_base", "p_arb"]) {
    const row = payments.findById(id)!;
    expect(row).toMatchObject({ factory_version: 1, settlement_domain: null, token_messenger: null, bridge_fee: 0n });
  }
  expect(chain.transfersForPayment("p_base").map((t) => t.chain_id)).toEqual([8453]);
  expect(chain.transfersForPayment("p_arb").map((t) => t.chain_id)).toEqual([42161]);
  db.close();
});
