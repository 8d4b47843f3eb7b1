import type { Account } from "../accounts/service.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Idempotency } from "../idempotency/index.ts";
import type { Clock } from "../lib/clock.ts";
import { NotFoundError, TooManyRequestsError, ValidationError } from "../lib/errors.ts";
import { type IdGenerator, prefixedIdPattern, randomHex } from "../lib/ids.ts";
import { formatAmount, MAX_AMOUNT, parseAmount } from "../lib/money.ts";
import type { CreatePaymentInput } from "../payments/schema.ts";
import {
  type PaymentsService,
  requireHttps,
  resolveAmount,
  storedLineItems,
  storedMetadata,
} from "../payments/service.ts";
import { lineItemsView } from "../payments/view.ts";
import { createFormTokens } from "./form-token.ts";
import type { CreatePaymentLinkInput, PayThroughLinkInput } from "./schema.ts";
import type { NewPaymentLinkRow, PaymentLinkRow, PaymentLinkStore } from "./store.ts";

export const PAYMENT_LINK_ID = new RegExp(prefixedIdPattern("plink"));

/**
 * The most payments a link may hold that wait for money with their window open. Anyone may start
 * one; this bounds what strangers can make the server store and watch per link (with the default
 * 60-minute window, 2,400 a day), while a link of a small shop rarely has more than a few payers
 * at once. Once a payment is paid or its window closes, its place is free again.
 */
export const LINK_OPEN_PAYMENTS_MAX = 100;

/** What a payer is told when the form they sent was not one this server rendered in the last day. */
export const FORM_EXPIRED = "this form has expired; check the details and press Pay again";

export interface PaymentLinksDeps {
  store: PaymentLinkStore;
  payments: PaymentsService;
  /** The link's owner, whose payout address and fee its payments commit to. */
  findAccount: (id: string) => Promise<Account | null> | Account | null;
  /** Keeps each page's one-time token, so a form sent twice creates one payment. */
  idempotency: Idempotency;
  groupCommit: GroupCommit;
  clock: Clock;
  ids: IdGenerator;
}

export type PaymentLinksService = Awaited<ReturnType<typeof createPaymentLinksService>>;

export async function createPaymentLinksService(deps: PaymentLinksDeps) {
  const { store, clock, ids } = deps;
  /** Payments being created per link and nonce: a second submit while the first runs waits for it. */
  const inFlight = new Map<string, Promise<string>>();
  // One key for every replica on the database: a form one renders, another accepts.
  const tokens = createFormTokens(await store.secret("payment_link_forms", randomHex(32), clock.now()), clock);

  /** Refuses a new payment (in its insert's transaction) that would take the link past LINK_OPEN_PAYMENTS_MAX. */
  async function ensureRoom(linkId: string): Promise<void> {
    // Counted one payment after another (PaymentLinkStore.lock), on every replica alike.
    await store.lock(linkId);
    const now = clock.now();
    const { open, soonest } = await store.openPayments(linkId, now);
    if (open <= LINK_OPEN_PAYMENTS_MAX) return;
    const seconds = Math.max(1, Math.ceil(((soonest ?? now) - now) / 1000));
    const minutes = Math.ceil(seconds / 60);
    throw new TooManyRequestsError(
      "too many payments started from this link are still waiting to be paid; " +
        `one frees up within ${minutes === 1 ? "a minute" : `${minutes} minutes`}`,
      seconds,
    );
  }

  async function findActive(id: string): Promise<PaymentLinkRow | null> {
    const row = PAYMENT_LINK_ID.test(id) ? await store.findById(id) : null;
    return row?.active ? row : null;
  }

  /** What the payer owes through `link`: its fixed amount, or the one they chose within its bounds. */
  function amountToPay(link: PaymentLinkRow, chosen: string | null | undefined): bigint {
    if (link.amount !== null) {
      if (chosen != null) throw new ValidationError("amount is fixed by this link and cannot be chosen");
      return link.amount;
    }
    if (chosen == null) throw new ValidationError("amount is required: enter how much to pay");
    const amount = parseAmount(chosen);
    if (amount === null || amount > MAX_AMOUNT) throw new ValidationError("amount must be at most 1000000000.00 USDC");
    if (amount <= 0n) throw new ValidationError("amount must be greater than 0.00 USDC");
    if (link.min_amount !== null && amount < link.min_amount)
      throw new ValidationError(`amount must be at least ${formatAmount(link.min_amount)} USDC`);
    if (link.max_amount !== null && amount > link.max_amount)
      throw new ValidationError(`amount must be at most ${formatAmount(link.max_amount)} USDC`);
    return amount;
  }

  /** `inTransaction` runs inside the payment's insert transaction. */
  async function createPayment(
    link: PaymentLinkRow,
    amount: bigint,
    email: string | null,
    inTransaction: (paymentId: string) => unknown,
  ): Promise<string> {
    // Every link names an account (a foreign key), and accounts are never deleted.
    const account = (await deps.findAccount(link.account_id))!;
    const input: CreatePaymentInput = {
      amount: formatAmount(amount),
      line_items: lineItemsView(link)?.map(({ description, unit_amount, quantity }) => ({
        description,
        unit_amount,
        quantity,
      })),
      description: link.description,
      success_url: link.success_url,
      customer_email: email,
      // Only tells create that there is metadata: the stored text is what it keeps.
      metadata: link.metadata === null ? null : JSON.parse(link.metadata),
    };
    const row = await deps.payments.create(account, input, link.metadata, (row) => inTransaction(row.id), link.id);
    return row.id;
  }

  return {
    /**
     * Validates and stores a link. A fixed amount follows the payment's rules (amount, line
     * items, or both when they agree); without one the payer chooses, within min_amount and
     * max_amount when given. `inTransaction` runs inside the insert's transaction.
     */
    async create(
      account: Account,
      input: CreatePaymentLinkInput,
      metadataText: string | null,
      inTransaction?: (row: PaymentLinkRow) => unknown,
    ): Promise<PaymentLinkRow> {
      const fixed = input.amount != null || input.line_items != null;
      const amount = fixed ? resolveAmount(input) : null;
      const [min, max] = [bound(input.min_amount, "min_amount"), bound(input.max_amount, "max_amount")];
      if (fixed && (min !== null || max !== null)) {
        throw new ValidationError(
          `${min !== null ? "min_amount" : "max_amount"} applies only when the payer chooses the amount: ` +
            "send it without amount and line_items",
        );
      }
      if (min !== null && max !== null && min > max) {
        throw new ValidationError(
          `min_amount ${formatAmount(min)} USDC is more than max_amount ${formatAmount(max)} USDC`,
        );
      }
      if (input.success_url != null) requireHttps(input.success_url);
      const metadata = input.metadata == null || metadataText === null ? null : storedMetadata(metadataText);
      const now = clock.now();
      const row: NewPaymentLinkRow = {
        id: ids.prefixed("plink"),
        account_id: account.id,
        description: input.description ?? null,
        amount,
        line_items: input.line_items == null ? null : JSON.stringify(storedLineItems(input.line_items)),
        min_amount: min,
        max_amount: max,
        success_url: input.success_url ?? null,
        metadata,
        active: true,
        created_at: now,
        updated_at: now,
      };
      return deps.groupCommit.run(async () => {
        await store.insert(row);
        const stored = (await store.findById(row.id))!;
        if (inTransaction) await inTransaction(stored);
        return stored;
      });
    },

    async retrieve(account: Account, id: string): Promise<PaymentLinkRow> {
      const row = await store.findForAccount(id, account.id);
      if (!row) throw new NotFoundError(`no payment link ${id}`);
      return row;
    },

    async list(account: Account, query: { limit: number; startingAfter?: string }) {
      let beforeSeq: number | undefined;
      if (query.startingAfter !== undefined) {
        const cursor = await store.findForAccount(query.startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no payment link ${query.startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = await store.list(account.id, query.limit, beforeSeq);
      return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },

    /** Turns a link off (its page answers 404, no payment can start from it) or on again. */
    async setActive(
      account: Account,
      id: string,
      active: boolean,
      inTransaction?: (row: PaymentLinkRow) => unknown,
    ): Promise<PaymentLinkRow> {
      return deps.groupCommit.run(async () => {
        const row = await store.findForAccount(id, account.id);
        if (!row) throw new NotFoundError(`no payment link ${id}`);
        if (row.active !== active) await store.setActive(id, account.id, active, clock.now());
        const stored = (await store.findById(id))!;
        if (inTransaction) await inTransaction(stored);
        return stored;
      });
    },

    /** An active link by its public id; null when unknown, malformed or deactivated. */
    findActive,

    /** The merchant's name, for the link's public page. */
    merchantName: async (link: PaymentLinkRow): Promise<string> =>
      (await deps.findAccount(link.account_id))?.name ?? "",

    /** The one-time token for one rendering of the link's form (see form-token.ts). */
    formToken: (linkId: string): string => tokens.issue(linkId),

    /**
     * A payer's submit on the link's page: creates the payment (the link's amount or the one
     * chosen, its description, line items, success_url and metadata; `payment_link` set) and
     * returns its id. The form's token must be one this server issued for the link within a day;
     * it is an idempotency key scoped to the link, so the same form sent again, at once or later,
     * returns the same payment instead of a second one. `admit` runs only when a payment is
     * about to be created (a resend costs nothing): the caller's per-client limit, which refuses
     * by throwing. A link holding LINK_OPEN_PAYMENTS_MAX payments that wait for money takes no more.
     */
    async pay(linkId: string, input: PayThroughLinkInput, admit: () => unknown = () => {}): Promise<string> {
      const link = await findActive(linkId);
      if (!link) throw new NotFoundError("no such payment link");
      if (!tokens.valid(link.id, input.nonce)) throw new ValidationError(FORM_EXPIRED);
      const amount = amountToPay(link, input.amount);
      const key = `${link.id}:${input.nonce}`;
      const running = inFlight.get(key);
      if (running) return running;
      const request = { amount: input.amount ?? null, email: input.email ?? null };
      const work = deps.idempotency
        .run(link.id, input.nonce, request, async (commit) => {
          await admit();
          // The nonce is completed in the payment's own transaction: both are kept, or neither.
          const paymentId = await createPayment(link, amount, input.email ?? null, async (id) => {
            await ensureRoom(link.id);
            await commit(303, id);
          });
          return { status: 303, body: paymentId };
        })
        .then((result) => result.body)
        .finally(() => inFlight.delete(key));
      inFlight.set(key, work);
      return work;
    },
  };
}

/** A min_amount or max_amount, within what a payment may ask. */
function bound(text: string | null | undefined, field: string): bigint | null {
  if (text == null) return null;
  const amount = parseAmount(text);
  if (amount === null || amount > MAX_AMOUNT) throw new ValidationError(`${field} must be at most 1000000000.00`);
  if (amount <= 0n) throw new ValidationError(`${field} must be greater than 0.00`);
  return amount;
}
