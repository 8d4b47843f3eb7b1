/**
 * Migration 012 on a database that already holds payments and transfers: every existing payment
 * keeps its version 1 deposit address, and every existing transfer is on its payment's chain.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createChainStore } from "../../src/chain/store.ts";
import { sql } from "../../src/db/engine.ts";
import { SQLITE_MIGRATIONS } from "../../src/db/migrations.ts";
import { SqliteDb } from "../../src/db/sqlite.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { makeTempDir } from "../support/server.ts";

const dataDir = makeTempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("012 leaves existing payments on version 1 and puts existing transfers on their payment's chain", async () => {
  // Not openDb, which would apply every migration at once: the file is built up to 011 by hand.
  const db = new SqliteDb(new Database(join(dataDir, "stablegate.db"), { create: true, strict: true }));
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version < 12)) await db.exec(m.sql);
  await db.run(
    sql`INSERT INTO accounts (id, name, payout_address, fee_bps, created_at) VALUES ('acct_old', 'Old', '0x1111111111111111111111111111111111111111', 0, 0)`,
  );
  const payment = (id: string, chainId: number, deposit: string) =>
    db.run(
      sql`INSERT INTO payments (id, account_id, status, amount, amount_received, fee_bps, fee_recipient, payout_address,
            chain_id, token_address, deposit_address, expires_at, created_at, updated_at)
          VALUES (${id}, 'acct_old', 'underpaid', 5000000, 1000000, 0, '0x0', '0x1', ${chainId}, '0x3', ${deposit}, 0, 0, 0)`,
    );
  await payment("p_base", 8453, "0xd1");
  await payment("p_arb", 42161, "0xd2");
  const transfer = (txHash: string, paymentId: string) =>
    db.run(
      sql`INSERT INTO transfers (tx_hash, log_index, payment_id, from_address, amount, block_number, block_hash,
            credited_at, created_at) VALUES (${txHash}, 0, ${paymentId}, '0x9', 1000000, 7, '0xb', 1, 1)`,
    );
  await transfer("0xt1", "p_base");
  await transfer("0xt2", "p_arb");

  // 012 and every later one, as an upgrade runs them: the stores below read their tables too.
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version >= 12)) await db.exec(m.sql);

  const payments = createPaymentStore(db);
  const chain = createChainStore(db);
  for (const id of ["p_base", "p_arb"]) {
    const row = (await payments.findById(id))!;
    expect(row).toMatchObject({ factory_version: 1, settlement_domain: null, token_messenger: null, bridge_fee: 0n });
  }
  expect((await chain.transfersForPayment("p_base")).map((t) => t.chain_id)).toEqual([8453]);
  expect((await chain.transfersForPayment("p_arb")).map((t) => t.chain_id)).toEqual([42161]);
  await db.close();
});
