/**
 * The refunds service and store over a real SQLite file and PostgreSQL, without HTTP: the cap
 * taken in one statement, the state machine's compare-and-sets, events written in the same
 * transaction as each change, the claim token kept only as a hash, and what the watcher calls
 * (see, forget, succeed) counting a refund once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import type { Account } from "../../src/accounts/service.ts";
import type { Db } from "../../src/db/engine.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { createEventStore } from "../../src/events/store.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import type { PaymentStore } from "../../src/payments/store.ts";
import { createClaimTokens } from "../../src/refunds/claim-token.ts";
import { createRefundsService, type RefundsService } from "../../src/refunds/service.ts";
import { createRefundStore } from "../../src/refunds/store.ts";
import { createPaymentStore, insertAccount, insertPayment, paymentRow } from "../support/payment-rows.ts";
import { TEST_USDC } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const PAYER = getAddress("0x8ba1f109551bd432803012645ac136ddd64dba72");
const clock = { at: Date.UTC(2031, 0, 10, 9), now: () => clock.at };
const KEY = "11".repeat(32);

describe.each(ENGINES)("%s", (engine) => {
  let opened: TestStore;
  let db: Db;
  let payments: PaymentStore;
  let refunds: RefundsService;
  let cursor: number | null = 100;
  const account = { id: "acct_refunds" } as Account;
  const stranger = { id: "acct_stranger" } as Account;

  beforeAll(async () => {
    opened = await openTestStore(engine);
    db = opened.db;
    insertAccount(db, account.id);
    insertAccount(db, stranger.id);
    payments = createPaymentStore(db);
    const claimTokens = createClaimTokens(KEY);
    refunds = createRefundsService({
      db,
      store: createRefundStore(db),
      payments,
      events: createEventStore(db, randomIds),
      clock,
      ids: randomIds,
      claimTokens,
      view: {
        baseUrl: "https://pay.example.test",
        chainName: "base",
        usdc: TEST_USDC,
        claimToken: claimTokens.tokenFor,
      },
      watchedUpTo: () => cursor,
    });
  });
  afterAll(() => opened.close());

  /** A payment of the account that received `received` micro-USDC. */
  function paid(received: bigint | null = 25_000_000n): string {
    const row = insertPayment(payments, paymentRow(account.id, clock.now(), { amount_received: received }));
    return row.id;
  }

  const eventsOf = (paymentId: string) =>
    createEventStore(db, randomIds)
      .listForPayment(paymentId)
      .map((e) => e.type);

  test("the cap is taken in one statement: what may be refunded never goes below zero", () => {
    const id = paid(10_000_000n);
    const store = createRefundStore(db);
    expect(store.reserve(id, 6_000_000n, clock.now())).toBe(true);
    expect(store.reserve(id, 4_000_001n, clock.now())).toBe(false);
    expect(store.reserve(id, 4_000_000n, clock.now())).toBe(true);
    expect(payments.findById(id)!.refund_reserved).toBe(10_000_000n);
  });

  test("create: exact amounts, the rest by default, nothing on a payment that received nothing", () => {
    const id = paid(25_000_001n);
    const part = refunds.create(account, id, { amount: "0.000001" }, null);
    expect(part.amount).toBe(1n);
    const rest = refunds.create(account, id, {}, null);
    expect(rest.amount).toBe(25_000_000n);
    expect(() => refunds.create(account, id, {}, null)).toThrow(ValidationError);
    expect(() => refunds.create(account, paid(null), {}, null)).toThrow("has received nothing to refund");
    expect(() => refunds.create(stranger, id, {}, null)).toThrow(NotFoundError);
    expect(eventsOf(id)).toEqual(["refund.created", "refund.created"]);
  });

  test("a refusal inside the transaction leaves no refund, no reservation and no event", () => {
    const id = paid();
    expect(() =>
      refunds.create(account, id, { amount: "1.00" }, null, () => {
        throw new Error("the idempotency record could not be written");
      }),
    ).toThrow("idempotency record");
    expect(payments.findById(id)!.refund_reserved).toBe(0n);
    expect(refunds.list(account, { limit: 10, paymentId: id }).rows).toEqual([]);
    expect(eventsOf(id)).toEqual([]);
  });

  test("the claim token is not stored; the link finds the refund, a wrong one nothing", () => {
    const id = paid();
    const row = refunds.create(account, id, {}, null);
    const token = createClaimTokens(KEY).tokenFor(row.id);
    const stored = db
      .query<{ h: string }, [string]>("SELECT claim_token_hash AS h FROM refunds WHERE id = ?")
      .get(row.id)!;
    expect(stored.h).not.toContain(token);
    expect(stored.h).toMatch(/^[0-9a-f]{64}$/);
    expect(refunds.findByClaimToken(token)?.id).toBe(row.id);
    expect(refunds.findByClaimToken(createClaimTokens("22".repeat(32)).tokenFor(row.id))).toBeNull();
    expect(refunds.findByClaimToken(`${token}x`)).toBeNull();
  });

  test("claim: the address is fixed once given, with the watcher's cursor as its lower bound", () => {
    const id = paid();
    const row = refunds.create(account, id, {}, null);
    const token = createClaimTokens(KEY).tokenFor(row.id);
    expect(() => refunds.claim(token, "0x0000000000000000000000000000000000000000")).toThrow("zero address");
    expect(() => refunds.claim(token, TEST_USDC)).toThrow("USDC contract");
    const deposit = payments.findById(id)!.deposit_address;
    expect(() => refunds.claim(token, deposit)).toThrow("deposit address");
    expect(() => refunds.claim(token, PAYER.replace("8ba1", "8BA1"))).toThrow("EIP-55");
    expect(refunds.retrieve(account, row.id).status).toBe("awaiting_address");
    cursor = 1234;
    const claimed = refunds.claim(token, PAYER.toLowerCase());
    expect(claimed).toMatchObject({ status: "awaiting_payment", refund_address: PAYER, payable_after_block: 1234 });
    expect(() => refunds.claim(token, PAYER)).toThrow(ConflictError);
    expect(eventsOf(id)).toEqual(["refund.created", "refund.payable"]);
  });

  test("see, forget, succeed: one transfer counted once, amount_refunded grows once", () => {
    const id = paid();
    const row = refunds.create(account, id, { amount: "5.00", refund_address: PAYER }, null);
    const transfer = {
      txHash: `0x${"ab".repeat(32)}`,
      logIndex: 3,
      blockNumber: 1300,
      blockHash: `0x${"cd".repeat(32)}`,
    };
    inTransaction(db, () => expect(refunds.see(row, transfer)).toBe(true));
    // A refund with a transfer on chain is not canceled: the money may be on its way.
    expect(() => refunds.cancel(account, row.id)).toThrow("is on chain");
    inTransaction(db, () => expect(refunds.forget(row)).toBe(true));
    expect(refunds.retrieve(account, row.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });
    inTransaction(db, () => refunds.see(row, transfer));
    // A second refund cannot be paid by the same transfer.
    const twin = refunds.create(account, id, { amount: "5.00", refund_address: PAYER }, null);
    inTransaction(db, () => expect(refunds.see(twin, transfer)).toBe(false));
    const seen = refunds.retrieve(account, row.id);
    inTransaction(db, () => expect(refunds.succeed(seen)).toBe(true));
    inTransaction(db, () => expect(refunds.succeed(seen)).toBe(false));
    expect(refunds.retrieve(account, row.id)).toMatchObject({ status: "succeeded", tx_hash: transfer.txHash });
    expect(payments.findById(id)!.amount_refunded).toBe(5_000_000n);
    expect(payments.findById(id)!.status).toBe("pending");
    expect(eventsOf(id)).toEqual([
      "refund.created",
      "refund.payable",
      "refund.created",
      "refund.payable",
      "refund.succeeded",
    ]);
    expect(() => refunds.cancel(account, row.id)).toThrow("has succeeded already");
  });

  test("cancel gives the amount back to what may be refunded, once", () => {
    const id = paid(3_000_000n);
    const row = refunds.create(account, id, {}, null);
    expect(payments.findById(id)!.refund_reserved).toBe(3_000_000n);
    expect(refunds.cancel(account, row.id).status).toBe("canceled");
    expect(payments.findById(id)!.refund_reserved).toBe(0n);
    expect(() => refunds.cancel(account, row.id)).toThrow("has been canceled already");
    expect(payments.findById(id)!.refund_reserved).toBe(0n);
    expect(() => refunds.cancel(stranger, row.id)).toThrow(NotFoundError);
    expect(eventsOf(id)).toEqual(["refund.created", "refund.canceled"]);
  });
});
