import type { Address, Hex } from "viem";
import type { Account } from "../accounts/service.ts";
import { type BridgeTerms, issueDeposit } from "../chain/deposit-terms.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Clock } from "../lib/clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../lib/errors.ts";
import { type IdGenerator, PAYMENT_ID } from "../lib/ids.ts";
import { parseIsoInstant } from "../lib/iso-time.ts";
import { formatAmount, MAX_AMOUNT, parseAmount } from "../lib/money.ts";
import { memberNames, withoutSpace } from "../lib/raw-json.ts";
import { isSpeed, SPEEDS, type Speed } from "../lib/speed.ts";
import type { CreatePaymentInput } from "./schema.ts";
import type { NewPaymentRow, PaymentRow, PaymentStatus, PaymentStore } from "./store.ts";
import type { StoredLineItem } from "./view.ts";

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as Address;
const MAX_DUE_AHEAD_MS = 366 * 24 * 60 * 60_000;

export interface PaymentsDeps {
  store: PaymentStore;
  /** Inserts share transactions under load; see src/db/group-commit.ts. */
  groupCommit: GroupCommit;
  clock: Clock;
  ids: IdGenerator;
  chainId: number;
  usdc: Address;
  defaultFeeBps: number;
  feeRecipient: Address | undefined;
  paymentWindowMs: number;
  /** STABLEGATE_SPEED: the policy of a payment whose request and account name none. */
  defaultSpeed: Speed;
  /** How new deposit addresses bridge from source chains, if any (src/chain/cross-chain-config.ts: newDepositTerms). */
  depositTerms: BridgeTerms;
  /**
   * What a new payment has queued in its own transaction, after the caller's work (its invoice
   * email): `applies` decides from the row before it is stored, so that a create with nothing
   * else to write is one statement.
   */
  onCreated?: CreatedHook;
}

/** A list request, already validated and decoded (src/payments/routes.ts holds its schema). */
export interface ListQuery {
  limit: number;
  startingAfter?: string;
  status?: PaymentStatus;
  /** Epoch milliseconds: created at or after / before. */
  createdGte?: number;
  createdLt?: number;
  /** Only payments made through this payment link. */
  paymentLink?: string;
}

export interface CreatedHook {
  applies(row: NewPaymentRow): boolean;
  run(row: PaymentRow): unknown;
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;

/**
 * The API key a create was asked for with was revoked, or its account's payout, fee or speed
 * changed, after the key was read (from the cache, src/accounts/key-cache.ts): nothing was stored.
 * The create is made again from a fresh read of the key (src/payments/create-once.ts); a caller
 * sees this only if the account kept changing meanwhile.
 */
export class KeyChangedError extends ConflictError {
  constructor() {
    super("the API key's account changed while this payment was being created; retry the request");
  }
}

export function createPaymentsService(deps: PaymentsDeps) {
  const { store, clock, ids } = deps;

  /** Stores a payment of `amount` (already checked) with a deposit address that commits to its payout and fee. */
  async function insert(
    account: Account,
    amount: bigint,
    input: Omit<CreatePaymentInput, "amount">,
    metadataText: string | null,
    inTransaction: ((row: PaymentRow) => unknown) | undefined,
    paymentLink: string | null,
    fromRequest = true,
  ): Promise<PaymentRow> {
    const now = clock.now();
    const dueAt = input.due_at == null ? null : parseDueAt(input.due_at, now);
    if (input.success_url != null) requireHttps(input.success_url);
    // Stablegate's own metadata (createExact) is stored as written; a request's is checked first.
    const metadata = !fromRequest
      ? metadataText
      : input.metadata == null || metadataText === null
        ? null
        : storedMetadata(metadataText);
    // Fixed now: a later change to the account's or the server's policy leaves this payment as it is.
    const speed = requestedSpeed(input.speed) ?? account.speed ?? deps.defaultSpeed;

    const feeBps = account.feeBps ?? deps.defaultFeeBps;
    const feeRecipient = feeBps > 0 ? deps.feeRecipient : ZERO_ADDRESS;
    // Start-up refuses this configuration; checked again so a fee can never be committed to nobody.
    if (!feeRecipient) throw new Error("a fee is configured without STABLEGATE_FEE_RECIPIENT");
    const id = ids.paymentId();
    const { deposit, fields } = issueDeposit(
      { paymentId: id as Hex, token: deps.usdc, payout: account.payoutAddress, feeRecipient, feeBps },
      deps.depositTerms,
    );

    const row: NewPaymentRow = {
      id,
      account_id: account.id,
      status: "pending",
      amount,
      amount_received: null,
      fee_bps: feeBps,
      fee_recipient: feeRecipient,
      payout_address: account.payoutAddress,
      chain_id: deps.chainId,
      token_address: deps.usdc,
      deposit_address: deposit,
      description: input.description ?? null,
      reference: input.reference ?? null,
      success_url: input.success_url ?? null,
      customer_email: input.customer_email ?? null,
      customer_name: input.customer_name ?? null,
      invoice_number: input.invoice_number ?? null,
      due_at: dueAt,
      metadata,
      line_items: input.line_items == null ? null : JSON.stringify(storedLineItems(input.line_items)),
      payment_link: paymentLink,
      speed,
      ...fields,
      expires_at: Math.max(now + deps.paymentWindowMs, dueAt ?? 0),
      created_at: now,
      updated_at: now,
    };
    const insertRow = async () => {
      // Asked for with an API key: stored only while the key and the terms it gave still hold.
      const inserted = await store.insert(row, account.keyVersion);
      if (!inserted) throw new KeyChangedError();
      return inserted;
    };
    const onCreated = deps.onCreated?.applies(row) ? deps.onCreated : undefined;
    if (!inTransaction && !onCreated) return deps.groupCommit.runStatement(insertRow);
    return deps.groupCommit.run(async () => {
      const stored = await insertRow();
      if (inTransaction) await inTransaction(stored);
      if (onCreated) await onCreated.run(stored);
      return stored;
    });
  }

  return {
    /**
     * Validates the business rules TypeBox cannot express, then stores the payment with a
     * deposit address that commits to its payout and fee. `metadataText` is the merchant's
     * metadata as sent; it is stored without the whitespace between tokens, so what is kept is
     * bounded by the parsed object's limits. `inTransaction` runs inside the insert's transaction.
     * `paymentLink` names the payment link a payer created it through.
     */
    async create(
      account: Account,
      input: CreatePaymentInput,
      metadataText: string | null,
      inTransaction?: (row: PaymentRow) => unknown,
      paymentLink: string | null = null,
    ): Promise<PaymentRow> {
      return insert(account, resolveAmount(input), input, metadataText, inTransaction, paymentLink);
    },

    /**
     * A payment of an exact micro-USDC `amount` (any precision, unlike the API's two decimals) that
     * Stablegate opens for the account itself: an x402 settlement to its payout address
     * (src/x402/). `metadataText` is JSON text Stablegate wrote, stored as given.
     */
    async createExact(
      account: Account,
      amount: bigint,
      details: { description: string | null; metadataText: string | null },
      inTransaction?: (row: PaymentRow) => unknown,
    ): Promise<PaymentRow> {
      if (amount <= 0n || amount > MAX_AMOUNT)
        throw new ValidationError("amount must be greater than 0 and at most 1000000000.00");
      return insert(
        account,
        amount,
        { description: details.description },
        details.metadataText,
        inTransaction,
        null,
        false,
      );
    },

    async retrieve(account: Account, id: string): Promise<PaymentRow> {
      const row = await store.findForAccount(id, account.id);
      if (!row) throw new NotFoundError(`no payment ${id}`);
      return row;
    },

    /**
     * Payments by the public capability (the id alone); null when unknown or malformed. The shape
     * is checked here as well as by the JSON routes' params schema: the checkout page's route
     * answers a malformed id with its HTML 404 page, so it takes any text.
     */
    async findPublic(id: string): Promise<PaymentRow | null> {
      return PAYMENT_ID.test(id) ? store.findById(id) : null;
    },

    /** The newest `limit` payments made through one of the account's payment links. */
    listForLink(account: Account, linkId: string, limit: number): Promise<PaymentRow[]> {
      return store.listForLink(linkId, account.id, limit);
    },

    async list(account: Account, query: ListQuery): Promise<{ rows: PaymentRow[]; hasMore: boolean }> {
      let beforeSeq: number | undefined;
      if (query.startingAfter !== undefined) {
        const cursor = await store.findForAccount(query.startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no payment ${query.startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = await store.list({
        accountId: account.id,
        limit: query.limit,
        beforeSeq,
        status: query.status,
        createdGte: query.createdGte,
        createdLt: query.createdLt,
        paymentLink: query.paymentLink,
      });
      return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },
  };
}

/** `amount`, or the line items' total, or both when they agree. Payment links ask the same. */
export function resolveAmount(input: Pick<CreatePaymentInput, "amount" | "line_items">): bigint {
  const amount = input.amount == null ? null : parseAmount(input.amount);
  // The schema checked the shape: a null here is an amount with too many digits.
  if (input.amount != null && amount === null) throw new ValidationError("amount must be at most 1000000000.00");
  let total: bigint | null = null;
  if (input.line_items != null) {
    total = 0n;
    for (const [i, item] of input.line_items.entries()) {
      const unit = parseAmount(item.unit_amount);
      if (unit === null || unit <= 0n || unit > MAX_AMOUNT) {
        throw new ValidationError(`line_items[${i}].unit_amount must be greater than 0.00 and at most 1000000000.00`);
      }
      total += unit * BigInt(item.quantity);
    }
  }
  if (amount !== null && total !== null && amount !== total) {
    throw new ValidationError(
      `amount ${formatAmount(amount)} USDC does not match line_items total ${formatAmount(total)} USDC`,
    );
  }
  const resolved = amount ?? total;
  if (resolved === null) throw new ValidationError("amount is required unless line_items is given");
  if (resolved <= 0n) throw new ValidationError("amount must be greater than 0.00");
  if (resolved > MAX_AMOUNT) throw new ValidationError("amount must be at most 1000000000.00");
  return resolved;
}

export function storedLineItems(items: NonNullable<CreatePaymentInput["line_items"]>): StoredLineItem[] {
  return items.map((item) => ({
    description: item.description,
    unit_amount: parseAmount(item.unit_amount)!.toString(),
    quantity: item.quantity,
  }));
}

/**
 * Metadata as it is stored and echoed: the text sent, minus whitespace between tokens. A key sent
 * twice is refused rather than silently resolved, since the echoed text would still carry both.
 */
export function storedMetadata(text: string): string {
  const seen = new Set<string>();
  for (const name of memberNames(text)) {
    if (seen.has(name)) throw new ValidationError(`metadata has the key "${name}" more than once`);
    seen.add(name);
  }
  return withoutSpace(text);
}

/** The request's own speed policy, if it names one (the API's schema checked it; the dashboard's form sends none). */
function requestedSpeed(text: string | null | undefined): Speed | null {
  if (text == null) return null;
  if (!isSpeed(text)) throw new ValidationError(`speed must be one of ${SPEEDS.join(", ")}`);
  return text;
}

export function requireHttps(url: string): void {
  const parsed = URL.parse(url);
  if (parsed?.protocol !== "https:" || !parsed.hostname) throw new ValidationError("success_url must be an https URL");
}

/** A bare date means the end of that day, UTC: an invoice due "2026-12-01" is payable all day. */
function parseDueAt(text: string, now: number): number {
  const ms = parseIsoInstant(text, { endOfDay: true });
  if (Number.isNaN(ms)) {
    throw new ValidationError(
      "due_at must be a real calendar date (2026-12-01) or date-time with a time zone (2026-12-01T12:00:00Z)",
    );
  }
  if (ms <= now) throw new ValidationError("due_at must be in the future");
  if (ms > now + MAX_DUE_AHEAD_MS) throw new ValidationError("due_at must be at most one year ahead");
  return ms;
}
