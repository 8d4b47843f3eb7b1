/**
 * The payment links service and store over a real SQLite file and PostgreSQL, without HTTP: what
 * is stored, scoping, the one-payment-per-form rule (in turn, at once, and after a crash-free
 * restart of the service), forms only this server issued, the payer's amount bounds, the most
 * payments waiting for money a link may hold (payers at once included), and which of a link's payments
 * are announced.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { withoutBridging } from "../../src/chain/deposit-terms.ts";
import { createChainStore } from "../../src/chain/store.ts";
import { type Db, raw, sql } from "../../src/db/engine.ts";
import { createGroupCommit } from "../../src/db/group-commit.ts";
import { createEventStore } from "../../src/events/store.ts";
import { createIdempotency } from "../../src/idempotency/index.ts";
import { NotFoundError, TooManyRequestsError, UnprocessableError, ValidationError } from "../../src/lib/errors.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { FORM_TOKEN_TTL_MS } from "../../src/payment-links/form-token.ts";
import { createPaymentLinksService, FORM_EXPIRED, LINK_OPEN_PAYMENTS_MAX } from "../../src/payment-links/service.ts";
import { createPaymentLinkStore } from "../../src/payment-links/store.ts";
import { createLifecycle } from "../../src/payments/lifecycle.ts";
import { createPaymentsService } from "../../src/payments/service.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
import { TEST_PAYOUT, TEST_USDC } from "../support/server.ts";
import { ENGINES, openTestStore, type TestStore } from "../support/store-engines.ts";

const WINDOW_MS = 60 * 60_000;
const clock = { at: Date.UTC(2031, 0, 10, 9), now: () => clock.at };

let opened: TestStore;
let db: Db;
let accounts: ReturnType<typeof createAccountsService>;
let payments: ReturnType<typeof createPaymentStore>;
let events: ReturnType<typeof createEventStore>;

/** The payments service as server.ts builds it (what the API creates payments with). */
function paymentsService(groupCommit = createGroupCommit(db)) {
  return createPaymentsService({
    store: payments,
    groupCommit,
    clock,
    ids: randomIds,
    chainId: 31337,
    usdc: TEST_USDC,
    defaultFeeBps: 0,
    feeRecipient: undefined,
    paymentWindowMs: WINDOW_MS,
    // Neither the column's default nor anything an account sets below, so the tests can tell them apart.
    defaultSpeed: "final",
    depositTerms: withoutBridging(0),
  });
}

/** The service as server.ts builds it; a second one built on the same file behaves as a restart. */
function linksService() {
  const groupCommit = createGroupCommit(db);
  return createPaymentLinksService({
    store: createPaymentLinkStore(db),
    payments: paymentsService(groupCommit),
    findAccount: accounts.findAccount,
    idempotency: createIdempotency(db, clock),
    groupCommit,
    clock,
    ids: randomIds,
  });
}
let links: Awaited<ReturnType<typeof linksService>>;

/** The lifecycle as server.ts builds it: what credits transfers and expires payments. */
function lifecycleFor() {
  return createLifecycle({
    payments,
    chain: createChainStore(db),
    events,
    clock,
    ids: randomIds,
    view: { baseUrl: "https://pay.example.test", chainName: "custom" },
  });
}

const eventsOf = async (paymentId: string) =>
  (await db.all<{ type: string }>(sql`SELECT type FROM events WHERE payment_id = ${paymentId} ORDER BY seq`)).map(
    (r) => r.type,
  );

async function newAccount(name: string) {
  return (await accounts.findAccount((await accounts.createAccount({ name, payoutAddress: TEST_PAYOUT })).account.id))!;
}

const paymentsOf = async (linkId: string) =>
  (await db.all<{ id: string }>(sql`SELECT id FROM payments WHERE payment_link = ${linkId} ORDER BY seq`)).map(
    (r) => r.id,
  );

/** The token a rendering of `linkId`'s page carries. */
const nonce = (linkId: string) => links.formToken(linkId);

describe.each(ENGINES)("%s", (engine) => {
  beforeAll(async () => {
    opened = await openTestStore(engine);
    db = opened.db;
    accounts = createAccountsService({ store: createAccountStore(db), clock, ids: randomIds });
    payments = createPaymentStore(db);
    events = createEventStore(db, randomIds);
    links = await linksService();
  });
  afterAll(() => opened?.close());

  describe("store and create", () => {
    test("stores amounts as integer micro-USDC, the metadata as sent minus whitespace, active as a boolean", async () => {
      const account = await newAccount("Store Shop");
      const text = '{ "b": "2",  "a": "\\u00e9" }';
      const link = await links.create(account, { amount: "1234.56", metadata: JSON.parse(text) }, text);
      expect(link.amount).toBe(1_234_560_000n);
      expect(link.metadata).toBe('{"b":"2","a":"\\u00e9"}');
      expect(link.active).toBe(true);
      // How the stored value is typed, asked each engine its own way: an integer, never text or a float.
      const typeOf = engine === "sqlite" ? "typeof(amount)" : "pg_typeof(amount)::text";
      const stored = (await db.get<{ amount: number; active: number; typeof_amount: string }>(
        sql`SELECT amount, active, ${raw(typeOf)} AS typeof_amount FROM payment_links WHERE id = ${link.id}`,
      ))!;
      expect(stored).toEqual({
        amount: 1_234_560_000,
        active: 1,
        typeof_amount: engine === "sqlite" ? "integer" : "bigint",
      });
    });

    test("a payer-chosen link keeps its bounds; a fixed one has none", async () => {
      const account = await newAccount("Bounds Shop");
      const open = await links.create(account, { min_amount: "0.50", max_amount: "1000000000.00" }, null);
      expect([open.amount, open.min_amount, open.max_amount]).toEqual([null, 500_000n, 1_000_000_000_000_000n]);
      const items = await links.create(
        account,
        { line_items: [{ description: "A", unit_amount: "2.25", quantity: 4 }] },
        null,
      );
      expect([items.amount, items.min_amount, items.max_amount]).toEqual([9_000_000n, null, null]);
      expect(JSON.parse(items.line_items!)).toEqual([{ description: "A", unit_amount: "2250000", quantity: 4 }]);
    });

    test("a rule broken stores nothing", async () => {
      const account = await newAccount("Refused Shop");
      const count = async () => (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payment_links`))!.n;
      const before = await count();
      for (const input of [
        { min_amount: "3.00", max_amount: "2.00" },
        { amount: "1.00", max_amount: "2.00" },
        { amount: "0.00" },
        { success_url: "ftp://x.example" },
      ]) {
        await expect(links.create(account, input, null)).rejects.toBeInstanceOf(ValidationError);
      }
      expect(await count()).toBe(before);
    });

    test("retrieve, list and setActive are scoped to the account", async () => {
      const owner = await newAccount("Owner");
      const stranger = await newAccount("Stranger");
      const link = await links.create(owner, { amount: "5.00" }, null);
      await expect(links.retrieve(stranger, link.id)).rejects.toThrow(NotFoundError);
      await expect(links.setActive(stranger, link.id, false)).rejects.toBeInstanceOf(NotFoundError);
      expect((await links.retrieve(owner, link.id)).active).toBe(true);
      expect((await links.list(stranger, { limit: 100 })).rows).toEqual([]);
      await expect(links.list(stranger, { limit: 10, startingAfter: link.id })).rejects.toThrow(ValidationError);
      clock.at += 1_000;
      const off = await links.setActive(owner, link.id, false);
      expect(off.active).toBe(false);
      expect(off.updated_at).toBe(clock.at);
      expect(await links.findActive(link.id)).toBeNull();
    });
  });

  describe("pay", () => {
    test("creates the payment: link's amount, description, success_url, metadata text, payment_link; payer's email", async () => {
      const account = await newAccount("Pay Shop");
      const text = '{"order":"A-1","note":"caf\\u00e9"}';
      const link = await links.create(
        account,
        { amount: "19.99", description: "Class", success_url: "https://shop.example/ok", metadata: JSON.parse(text) },
        text,
      );
      const id = await links.pay(link.id, { nonce: nonce(link.id), email: "p@example.org" });
      const row = (await payments.findById(id))!;
      expect(row).toMatchObject({
        account_id: account.id,
        amount: 19_990_000n,
        description: "Class",
        success_url: "https://shop.example/ok",
        customer_email: "p@example.org",
        metadata: text,
        payment_link: link.id,
        status: "pending",
      });
    });

    test("a link's payment runs under its account's speed policy when it is paid, else the server's default", async () => {
      const account = await newAccount("Speed Link Shop");
      const link = await links.create(account, { amount: "6.00" }, null);
      const before = await links.pay(link.id, { nonce: nonce(link.id) });
      await accounts.setSpeed(account.id, "fast");
      const after = await links.pay(link.id, { nonce: nonce(link.id) });
      expect([(await payments.findById(before))!.speed, (await payments.findById(after))!.speed]).toEqual([
        "final",
        "fast",
      ]);
    });

    test("one payment per nonce: sent again, sent at once, and after the service is built anew", async () => {
      const link = await links.create(await newAccount("Nonce Shop"), { amount: "3.00" }, null);
      const n = nonce(link.id);
      const first = await links.pay(link.id, { nonce: n });
      expect(await links.pay(link.id, { nonce: n })).toBe(first);
      const together = await Promise.all([1, 2, 3].map(() => links.pay(link.id, { nonce: n })));
      expect(together).toEqual([first, first, first]);
      const racing = nonce(link.id);
      const raced = await Promise.all([1, 2, 3].map(() => links.pay(link.id, { nonce: racing })));
      expect(new Set(raced).size).toBe(1);
      // Built anew on the same database (a restart, or another replica): the same key, so the
      // same form finds its payment, and a form either renders is good on the other.
      const anew = await linksService();
      expect(await anew.pay(link.id, { nonce: n })).toBe(first);
      expect(await links.pay(link.id, { nonce: anew.formToken(link.id) })).not.toBe(first);
      expect(await paymentsOf(link.id)).toHaveLength(3);
      expect((await paymentsOf(link.id)).slice(0, 2)).toEqual([first, raced[0]!]);
    });

    test("the same form with other details is refused; one link's form is refused by another", async () => {
      const account = await newAccount("Reuse Shop");
      const tips = await links.create(account, {}, null);
      const other = await links.create(account, {}, null);
      const n = nonce(tips.id);
      const paid = await links.pay(tips.id, { nonce: n, amount: "2.00" });
      await expect(links.pay(tips.id, { nonce: n, amount: "3.00" })).rejects.toBeInstanceOf(UnprocessableError);
      await expect(links.pay(other.id, { nonce: n, amount: "3.00" })).rejects.toThrow(FORM_EXPIRED);
      expect(await paymentsOf(tips.id)).toEqual([paid]);
      expect(await paymentsOf(other.id)).toEqual([]);
    });

    test("the payer's amount must be given and within the link's bounds; a fixed link takes none", async () => {
      const account = await newAccount("Range Shop");
      const ranged = await links.create(account, { min_amount: "5.00", max_amount: "10.00" }, null);
      const fixed = await links.create(account, { amount: "7.00" }, null);
      const refused: Array<[string, string | undefined, string]> = [
        [ranged.id, undefined, "amount is required: enter how much to pay"],
        [ranged.id, "4.99", "amount must be at least 5.00 USDC"],
        [ranged.id, "10.01", "amount must be at most 10.00 USDC"],
        [ranged.id, "0.00", "amount must be greater than 0.00 USDC"],
        [fixed.id, "7.00", "amount is fixed by this link and cannot be chosen"],
      ];
      for (const [id, amount, message] of refused) {
        await expect(links.pay(id, { nonce: nonce(id), amount })).rejects.toThrow(message);
      }
      expect([...(await paymentsOf(ranged.id)), ...(await paymentsOf(fixed.id))]).toEqual([]);
      for (const [edge, micro] of [
        ["10.00", 10_000_000n],
        ["5.00", 5_000_000n],
      ] as const) {
        const id = await links.pay(ranged.id, { nonce: nonce(ranged.id), amount: edge });
        expect((await payments.findById(id))!.amount).toBe(micro);
      }
    });

    test("without bounds the payer may ask up to the largest amount a payment may, and no more", async () => {
      const open = await links.create(await newAccount("Open Shop"), {}, null);
      for (const amount of ["1000000000.01", "99999999999999.00"]) {
        await expect(links.pay(open.id, { nonce: nonce(open.id), amount })).rejects.toThrow(
          "amount must be at most 1000000000.00 USDC",
        );
      }
      const largest = await links.pay(open.id, { nonce: nonce(open.id), amount: "1000000000.00" });
      expect((await payments.findById(largest))!.amount).toBe(1_000_000_000_000_000n);
    });

    test("min_amount may equal max_amount: the payer can pay just that", async () => {
      const account = await newAccount("Exact Shop");
      const exact = await links.create(account, { min_amount: "5.00", max_amount: "5.00" }, null);
      expect([exact.min_amount, exact.max_amount]).toEqual([5_000_000n, 5_000_000n]);
      await expect(links.pay(exact.id, { nonce: nonce(exact.id), amount: "5.01" })).rejects.toThrow(ValidationError);
      const id = await links.pay(exact.id, { nonce: nonce(exact.id), amount: "5.00" });
      expect((await payments.findById(id))!.amount).toBe(5_000_000n);
    });

    test("a deactivated, unknown or malformed link creates nothing", async () => {
      const account = await newAccount("Off Shop");
      const link = await links.create(account, { amount: "1.00" }, null);
      await links.setActive(account, link.id, false);
      for (const id of [link.id, "plink_000000000000000000000000", "nope"]) {
        await expect(links.pay(id, { nonce: nonce(id) })).rejects.toBeInstanceOf(NotFoundError);
      }
      expect(await paymentsOf(link.id)).toEqual([]);
    });
  });

  describe("forms", () => {
    test("a token this server did not issue, or issued over a day ago, is refused and creates nothing", async () => {
      const link = await links.create(await newAccount("Token Shop"), { amount: "1.00" }, null);
      const good = nonce(link.id);
      const refused = [
        `${good.slice(0, 24)}${"0".repeat(32)}`, // the MAC made up
        `${good.slice(0, 8)}${"A".repeat(16)}${good.slice(24)}`, // another random part under the same MAC
        `${(Number.parseInt(good.slice(0, 8), 36) + 60).toString(36).padStart(8, "0")}${good.slice(8)}`, // issued "later"
        "a".repeat(24), // the old page's shape
      ];
      for (const token of refused) await expect(links.pay(link.id, { nonce: token })).rejects.toThrow(FORM_EXPIRED);
      expect(await paymentsOf(link.id)).toEqual([]);

      const old = nonce(link.id);
      clock.at += FORM_TOKEN_TTL_MS;
      await expect(links.pay(link.id, { nonce: old })).rejects.toThrow(FORM_EXPIRED);
      clock.at -= 1;
      expect(await links.pay(link.id, { nonce: old })).toStartWith("0x");
      clock.at += 1;
    });

    test("admit is asked only before a new payment: a resend costs nothing, a refusal creates nothing", async () => {
      const link = await links.create(await newAccount("Admit Shop"), { amount: "1.00" }, null);
      let asked = 0;
      const admit = () => void asked++;
      const n = nonce(link.id);
      const first = await links.pay(link.id, { nonce: n }, admit);
      expect(await links.pay(link.id, { nonce: n }, admit)).toBe(first);
      expect(asked).toBe(1);

      const refusing = () => {
        throw new TooManyRequestsError("slow down", 60);
      };
      const later = nonce(link.id);
      await expect(links.pay(link.id, { nonce: later }, refusing)).rejects.toThrow("slow down");
      expect(await paymentsOf(link.id)).toEqual([first]);
      // The refused form was not used up: sent again once allowed, it makes its payment.
      expect(await links.pay(link.id, { nonce: later }, admit)).not.toBe(first);
    });

    test(`a link holds at most ${LINK_OPEN_PAYMENTS_MAX} payments waiting for money; each paid or expired one frees a place`, async () => {
      const account = await newAccount("Full Shop");
      const link = await links.create(account, { amount: "1.00" }, null);
      const other = await links.create(account, { amount: "1.00" }, null);
      const started = clock.at;
      const ids: string[] = [];
      for (let i = 0; i < LINK_OPEN_PAYMENTS_MAX; i++) {
        ids.push(await links.pay(link.id, { nonce: nonce(link.id) }));
        clock.at += 1_000;
      }
      const form = nonce(link.id);
      const full = await links.pay(link.id, { nonce: form }).catch((error) => error);
      expect(full).toBeInstanceOf(TooManyRequestsError);
      expect(full.message).toBe(
        "too many payments started from this link are still waiting to be paid; one frees up within 59 minutes",
      );
      // Until the first of them expires: 60 minutes after it was started.
      expect(full.retryAfterSeconds).toBe((started + WINDOW_MS - clock.at) / 1000);
      expect(await paymentsOf(link.id)).toHaveLength(LINK_OPEN_PAYMENTS_MAX);
      // Another link of the same account is not affected.
      expect(await links.pay(other.id, { nonce: nonce(other.id) })).toStartWith("0x");

      // Money arrives for one: it no longer waits, and the refused form now goes through.
      await db.transaction(() => lifecycleFor().credit(ids[0]!, 400_000n));
      const paid = await links.pay(link.id, { nonce: form });
      expect(await paymentsOf(link.id)).toHaveLength(LINK_OPEN_PAYMENTS_MAX + 1);
      await expect(links.pay(link.id, { nonce: nonce(link.id) })).rejects.toBeInstanceOf(TooManyRequestsError);

      // The oldest unpaid one's window closes: its place is free, whether or not it was marked expired yet.
      clock.at = started + 1_000 + WINDOW_MS;
      expect(await links.pay(link.id, { nonce: nonce(link.id) })).not.toBe(paid);
      await expect(links.pay(link.id, { nonce: nonce(link.id) })).rejects.toBeInstanceOf(TooManyRequestsError);
    });

    test("payers at once on a link with one place left, through as many replicas: one payment is made", async () => {
      const account = await newAccount("Last Place Shop");
      const link = await links.create(account, { amount: "1.00" }, null);
      for (let i = 0; i < LINK_OPEN_PAYMENTS_MAX - 1; i++) await links.pay(link.id, { nonce: nonce(link.id) });
      const replicas = await Promise.all(Array.from({ length: 20 }, () => linksService()));
      const outcomes = await Promise.allSettled(
        replicas.map((replica) => replica.pay(link.id, { nonce: nonce(link.id) })),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      for (const outcome of outcomes)
        if (outcome.status === "rejected") expect(outcome.reason).toBeInstanceOf(TooManyRequestsError);
      expect(await paymentsOf(link.id)).toHaveLength(LINK_OPEN_PAYMENTS_MAX);
    });
  });

  describe("events", () => {
    test("a link's payment that expires with nothing received is not announced; an API payment's is", async () => {
      const account = await newAccount("Quiet Shop");
      const link = await links.create(account, { amount: "2.00" }, null);
      const viaLink = await links.pay(link.id, { nonce: nonce(link.id) });
      const viaApi = (await paymentsService().create(account, { amount: "2.00" }, null)).id;
      clock.at += WINDOW_MS; // both windows close with nothing received
      await db.transaction(() => lifecycleFor().expireDue());
      expect((await payments.findById(viaLink))!.status).toBe("expired");
      expect((await payments.findById(viaApi))!.status).toBe("expired");
      expect(await eventsOf(viaLink)).toEqual([]);
      expect(await eventsOf(viaApi)).toEqual(["payment.expired"]);
    });

    test("once money arrives, a link's payment is announced, payment_link in the merchant payment object", async () => {
      const link = await links.create(await newAccount("Event Shop"), { amount: "2.00" }, null);
      const id = await links.pay(link.id, { nonce: nonce(link.id) });
      clock.at += WINDOW_MS;
      await db.transaction(() => lifecycleFor().expireDue());
      // A late payment to the address still counts, and is announced as for any payment.
      await db.transaction(() => lifecycleFor().credit(id, 1_000_000n));
      expect(await eventsOf(id)).toEqual(["payment.underpaid"]);
      const payload = (await db.get<{ payload: string }>(
        sql`SELECT payload FROM events WHERE payment_id = ${id} AND type = 'payment.underpaid'`,
      ))!.payload;
      expect(JSON.parse(payload).data.payment).toMatchObject({ id, payment_link: link.id, status: "underpaid" });
    });
  });
});
