/**
 * A create with nothing to write beside its payment is the payment's insert alone
 * (src/payments/service.ts, groupCommit.runStatement): on PostgreSQL one statement, without
 * BEGIN and COMMIT, which would only add two round trips; on SQLite a write of the next group
 * commit as before. Work in the create's transaction (an Idempotency-Key's stored response, the
 * invoice email) still gets one. Counted through the store's `transaction`, on both engines.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Account, createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { withoutBridging } from "../../src/chain/deposit-terms.ts";
import { sql } from "../../src/db/engine.ts";
import { createGroupCommit } from "../../src/db/group-commit.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { type CreatedHook, createPaymentsService } from "../../src/payments/service.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { countingTransactions } from "../support/counting-db.ts";
import { TEST_PAYOUT, TEST_USDC } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

describe.each(ENGINES)("%s", (engine) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(() => store.close());

  async function newAccount(): Promise<Account> {
    const accounts = createAccountsService({ store: createAccountStore(store.db), clock: Date, ids: randomIds });
    const { account } = await accounts.createAccount({ name: "Shop", payoutAddress: TEST_PAYOUT });
    return (await accounts.findAccount(account.id))!;
  }

  /** The payments service over a store that counts the transactions begun through it. */
  function counted(onCreated?: CreatedHook) {
    const { counted: db, transactions } = countingTransactions(store.db);
    const service = createPaymentsService({
      store: createPaymentStore(db),
      groupCommit: createGroupCommit(db),
      clock: { now: () => Date.now() },
      ids: randomIds,
      chainId: 31337,
      usdc: TEST_USDC,
      defaultFeeBps: 0,
      feeRecipient: undefined,
      paymentWindowMs: 60 * 60_000,
      defaultSpeed: "standard",
      depositTerms: withoutBridging(0),
      onCreated,
    });
    return { service, transactions };
  }

  test("a create with nothing beside its payment runs no transaction of its own on PostgreSQL, one on SQLite", async () => {
    const account = await newAccount();
    const { service, transactions } = counted();
    const row = await service.create(account, { amount: "25.00", reference: "order_1" }, null);
    expect(transactions()).toBe(engine === "postgres" ? 0 : 1);
    // Stored whole, and counted by the status triggers as any create is.
    const stored = await store.db.get<{ reference: string; status: string }>(
      sql`SELECT reference, status FROM payments WHERE id = ${row.id}`,
    );
    expect(stored).toEqual({ reference: "order_1", status: "pending" });
    const counts = await store.db.get<{ n: number }>(
      sql`SELECT CAST(sum(n) AS BIGINT) AS n FROM payment_status_deltas WHERE account_id = ${account.id}`,
    );
    expect(Number(counts!.n)).toBe(1);
  });

  test("work in the create's transaction, the caller's or the created hook's, still gets one, and rolls back with it", async () => {
    const account = await newAccount();
    const ran: string[] = [];
    const { service, transactions } = counted({
      applies: (row) => row.invoice_number !== null,
      run: (row) => ran.push(row.invoice_number!),
    });

    await service.create(account, { amount: "1.00", invoice_number: "INV-1" }, null);
    expect(ran).toEqual(["INV-1"]);
    expect(transactions()).toBe(1);
    await service.create(account, { amount: "1.00" }, null, () => {});
    expect(transactions()).toBe(2);
    // A hook that does not apply is not run, and the create is its insert alone again.
    await service.create(account, { amount: "1.00" }, null);
    expect(ran).toEqual(["INV-1"]);
    expect(transactions()).toBe(engine === "postgres" ? 2 : 3);

    const failing = service.create(account, { amount: "2.00", reference: "rolled_back" }, null, () => {
      throw new Error("the caller's work failed");
    });
    await expect(failing).rejects.toThrow("the caller's work failed");
    const left = await store.db.get<{ n: number }>(
      sql`SELECT count(*) AS n FROM payments WHERE account_id = ${account.id} AND reference = 'rolled_back'`,
    );
    expect(Number(left!.n)).toBe(0);
  });
});
