/**
 * The refunds service and store over a real SQLite file and PostgreSQL, without HTTP: the cap
 * taken in one statement, the state machine's compare-and-sets, events written in the same
 * transaction as each change, the claim token kept only as a hash, and what the watcher calls
 * (see, forget, succeed) counting a refund once; the cap on refunds per payment, cancels and claims
 * when they come at once, answered as if one came after the other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import type { Account } from "../../src/accounts/service.ts";
import { type Db, sql } from "../../src/db/engine.ts";
import { createEventStore } from "../../src/events/store.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import type { PaymentStore } from "../../src/payments/store.ts";
import { createClaimTokens } from "../../src/refunds/claim-token.ts";
import { createRefundsService, REFUNDS_PER_PAYMENT_MAX, type RefundsService } from "../../src/refunds/service.ts";
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
    await insertAccount(db, account.id);
    await insertAccount(db, stranger.id);
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
  async function paid(received: bigint | null = 25_000_000n): Promise<string> {
    const row = await insertPayment(payments, paymentRow(account.id, clock.now(), { amount_received: received }));
    return row.id;
  }

  const eventsOf = async (paymentId: string) =>
    (await createEventStore(db, randomIds).listForPayment(paymentId)).map((e) => e.type);

  test("the cap is taken in one statement: what may be refunded never goes below zero", async () => {
    const id = await paid(10_000_000n);
    const store = createRefundStore(db);
    expect(await store.reserve(id, 6_000_000n, clock.now())).toBe(true);
    expect(await store.reserve(id, 4_000_001n, clock.now())).toBe(false);
    expect(await store.reserve(id, 4_000_000n, clock.now())).toBe(true);
    expect((await payments.findById(id))!.refund_reserved).toBe(10_000_000n);
  });

  test("create: exact amounts, the rest by default, nothing on a payment that received nothing", async () => {
    const id = await paid(25_000_001n);
    const part = await refunds.create(account, id, { amount: "0.000001" }, null);
    expect(part.amount).toBe(1n);
    const rest = await refunds.create(account, id, {}, null);
    expect(rest.amount).toBe(25_000_000n);
    await expect(refunds.create(account, id, {}, null)).rejects.toThrow(ValidationError);
    await expect(refunds.create(account, await paid(null), {}, null)).rejects.toThrow("has received nothing to refund");
    await expect(refunds.create(stranger, id, {}, null)).rejects.toThrow(NotFoundError);
    expect(await eventsOf(id)).toEqual(["refund.created", "refund.created"]);
  });

  test("a refusal inside the transaction leaves no refund, no reservation and no event", async () => {
    const id = await paid();
    await expect(
      refunds.create(account, id, { amount: "1.00" }, null, () => {
        throw new Error("the idempotency record could not be written");
      }),
    ).rejects.toThrow("idempotency record");
    expect((await payments.findById(id))!.refund_reserved).toBe(0n);
    expect((await refunds.list(account, { limit: 10, paymentId: id })).rows).toEqual([]);
    expect(await eventsOf(id)).toEqual([]);
  });

  test("the claim token is not stored; the link finds the refund, a wrong one nothing", async () => {
    const id = await paid();
    const row = await refunds.create(account, id, {}, null);
    const token = createClaimTokens(KEY).tokenFor(row.id);
    const stored = (await db.get<{ h: string }>(sql`SELECT claim_token_hash AS h FROM refunds WHERE id = ${row.id}`))!;
    expect(stored.h).not.toContain(token);
    expect(stored.h).toMatch(/^[0-9a-f]{64}$/);
    expect((await refunds.findByClaimToken(token))?.id).toBe(row.id);
    expect(await refunds.findByClaimToken(createClaimTokens("22".repeat(32)).tokenFor(row.id))).toBeNull();
    expect(await refunds.findByClaimToken(`${token}x`)).toBeNull();
  });

  test("claim: the address is fixed once given, with the watcher's cursor as its lower bound", async () => {
    const id = await paid();
    const row = await refunds.create(account, id, {}, null);
    const token = createClaimTokens(KEY).tokenFor(row.id);
    await expect(refunds.claim(token, "0x0000000000000000000000000000000000000000")).rejects.toThrow("zero address");
    await expect(refunds.claim(token, TEST_USDC)).rejects.toThrow("USDC contract");
    const deposit = (await payments.findById(id))!.deposit_address;
    await expect(refunds.claim(token, deposit)).rejects.toThrow("deposit address");
    await expect(refunds.claim(token, PAYER.replace("8ba1", "8BA1"))).rejects.toThrow("EIP-55");
    expect((await refunds.retrieve(account, row.id)).status).toBe("awaiting_address");
    cursor = 1234;
    const claimed = await refunds.claim(token, PAYER.toLowerCase());
    expect(claimed).toMatchObject({ status: "awaiting_payment", refund_address: PAYER, payable_after_block: 1234 });
    await expect(refunds.claim(token, PAYER)).rejects.toThrow(ConflictError);
    expect(await eventsOf(id)).toEqual(["refund.created", "refund.payable"]);
  });

  test("see, forget, succeed: one transfer counted once, amount_refunded grows once", async () => {
    const id = await paid();
    const row = await refunds.create(account, id, { amount: "5.00", refund_address: PAYER }, null);
    const transfer = {
      txHash: `0x${"ab".repeat(32)}`,
      logIndex: 3,
      blockNumber: 1300,
      blockHash: `0x${"cd".repeat(32)}`,
    };
    await db.transaction(async () => expect(await refunds.see(row, transfer)).toBe(true));
    // A refund with a transfer on chain is not canceled: the money may be on its way.
    await expect(refunds.cancel(account, row.id)).rejects.toThrow("is on chain");
    await db.transaction(async () => expect(await refunds.forget(row)).toBe(true));
    expect(await refunds.retrieve(account, row.id)).toMatchObject({ status: "awaiting_payment", tx_hash: null });
    await db.transaction(() => refunds.see(row, transfer));
    // A second refund cannot be paid by the same transfer.
    const twin = await refunds.create(account, id, { amount: "5.00", refund_address: PAYER }, null);
    await db.transaction(async () => expect(await refunds.see(twin, transfer)).toBe(false));
    const seen = await refunds.retrieve(account, row.id);
    await db.transaction(async () => expect(await refunds.succeed(seen)).toBe(true));
    await db.transaction(async () => expect(await refunds.succeed(seen)).toBe(false));
    expect(await refunds.retrieve(account, row.id)).toMatchObject({ status: "succeeded", tx_hash: transfer.txHash });
    expect((await payments.findById(id))!.amount_refunded).toBe(5_000_000n);
    expect((await payments.findById(id))!.status).toBe("pending");
    expect(await eventsOf(id)).toEqual([
      "refund.created",
      "refund.payable",
      "refund.created",
      "refund.payable",
      "refund.succeeded",
    ]);
    await expect(refunds.cancel(account, row.id)).rejects.toThrow("has succeeded already");
  });

  test("cancel gives the amount back to what may be refunded, once", async () => {
    const id = await paid(3_000_000n);
    const row = await refunds.create(account, id, {}, null);
    expect((await payments.findById(id))!.refund_reserved).toBe(3_000_000n);
    expect((await refunds.cancel(account, row.id)).status).toBe("canceled");
    expect((await payments.findById(id))!.refund_reserved).toBe(0n);
    await expect(refunds.cancel(account, row.id)).rejects.toThrow("has been canceled already");
    expect((await payments.findById(id))!.refund_reserved).toBe(0n);
    await expect(refunds.cancel(stranger, row.id)).rejects.toThrow(NotFoundError);
    expect(await eventsOf(id)).toEqual(["refund.created", "refund.canceled"]);
  });

  /** What each of `attempts` ended in: "ok", or the message it was refused with. */
  const outcomes = async (attempts: Array<Promise<unknown>>) =>
    (await Promise.allSettled(attempts)).map((o) => (o.status === "fulfilled" ? "ok" : (o.reason as Error).message));

  test(`refunds asked at once of a payment with one of its ${REFUNDS_PER_PAYMENT_MAX} left: one is made`, async () => {
    const id = await paid();
    for (let i = 1; i < REFUNDS_PER_PAYMENT_MAX; i++) await refunds.create(account, id, { amount: "0.000001" }, null);
    const answers = await outcomes(
      Array.from({ length: 20 }, () => refunds.create(account, id, { amount: "0.000001" }, null)),
    );
    expect(answers.filter((a) => a === "ok")).toHaveLength(1);
    expect(new Set(answers.filter((a) => a !== "ok"))).toEqual(
      new Set([`payment ${id} already has ${REFUNDS_PER_PAYMENT_MAX} refunds`]),
    );
    expect(await createRefundStore(db).countForPayment(id)).toBe(REFUNDS_PER_PAYMENT_MAX);
    expect((await payments.findById(id))!.refund_reserved).toBe(BigInt(REFUNDS_PER_PAYMENT_MAX));
  });

  test("cancels at once: one cancels, the others are told it was canceled already, as one after another", async () => {
    const id = await paid(3_000_000n);
    const row = await refunds.create(account, id, {}, null);
    const answers = await outcomes(Array.from({ length: 20 }, () => refunds.cancel(account, row.id)));
    expect(answers.filter((a) => a === "ok")).toHaveLength(1);
    expect(new Set(answers.filter((a) => a !== "ok"))).toEqual(new Set([`refund ${row.id} has been canceled already`]));
    expect((await payments.findById(id))!.refund_reserved).toBe(0n);
    expect(await eventsOf(id)).toEqual(["refund.created", "refund.canceled"]);
  });

  test("claims at once: one address is taken, the others are told it was given already, as one after another", async () => {
    const id = await paid();
    const row = await refunds.create(account, id, {}, null);
    const token = createClaimTokens(KEY).tokenFor(row.id);
    const answers = await outcomes(Array.from({ length: 20 }, () => refunds.claim(token, PAYER)));
    expect(answers.filter((a) => a === "ok")).toHaveLength(1);
    expect(new Set(answers.filter((a) => a !== "ok"))).toEqual(new Set(["this refund's address was given already"]));
    expect(await eventsOf(id)).toEqual(["refund.created", "refund.payable"]);
  });

  test("a claim and a cancel at once: answered as in one order or the other, never as a lost race", async () => {
    const id = await paid(20_000_000n);
    const rows = [];
    for (let i = 0; i < 10; i++) rows.push(await refunds.create(account, id, { amount: "1.00" }, null));
    const raced = await Promise.all(
      rows.map(async (row) => {
        const token = createClaimTokens(KEY).tokenFor(row.id);
        const [claim, cancel] = (await outcomes([refunds.claim(token, PAYER), refunds.cancel(account, row.id)])) as [
          string,
          string,
        ];
        return { claim, cancel, status: (await refunds.retrieve(account, row.id)).status };
      }),
    );
    for (const { claim, cancel, status } of raced) {
      // A claim first leaves it payable, and a payable refund with no transfer yet may be canceled.
      expect(cancel).toBe("ok");
      expect(["ok", "this refund was canceled"]).toContain(claim);
      expect(status).toBe("canceled");
    }
    // Each gave back what it held, once.
    expect((await payments.findById(id))!.refund_reserved).toBe(0n);
  });
});
