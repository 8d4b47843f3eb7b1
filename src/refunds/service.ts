import { type Address, getAddress, isAddress, zeroAddress } from "viem";
import type { Account } from "../accounts/service.ts";
import type { Db } from "../db/index.ts";
import type { EventStore } from "../events/store.ts";
import { type Clock, isoMillis } from "../lib/clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../lib/errors.ts";
import type { IdGenerator } from "../lib/ids.ts";
import { formatExact, parseExactAmount } from "../lib/money.ts";
import { storedMetadata } from "../payments/service.ts";
import type { PaymentRow, PaymentStore } from "../payments/store.ts";
import { CLAIM_TOKEN, type ClaimTokens } from "./claim-token.ts";
import type { CreateRefundInput } from "./schema.ts";
import { nextRefundStatus, REFUND_EVENT_TYPES, type RefundEvent } from "./states.ts";
import type { RefundRow, RefundStatus, RefundStore, RefundTransfer } from "./store.ts";
import { type RefundViewContext, refundJson } from "./view.ts";

/** Refunds one payment may have, canceled ones included: far more than any real case needs. */
export const REFUNDS_PER_PAYMENT_MAX = 100;

export interface RefundsDeps {
  db: Db;
  store: RefundStore;
  payments: PaymentStore;
  events: EventStore;
  clock: Clock;
  ids: IdGenerator;
  claimTokens: ClaimTokens;
  view: RefundViewContext;
  /** The settlement chain's watcher cursor (a block number), or null before it first ran. */
  watchedUpTo: (chainId: number) => Promise<number | null> | number | null;
  /** Called after an event is written; delivery picks it up once the transaction commits. */
  onEvent?: () => void;
}

export interface RefundListQuery {
  limit: number;
  startingAfter?: string;
  paymentId?: string;
  status?: RefundStatus;
  createdGte?: number;
  createdLt?: number;
}

export type RefundsService = ReturnType<typeof createRefundsService>;

/**
 * Refunds without custody (docs/refunds.md): the merchant pays each from their own wallet; this
 * keeps the record, the cap (never more than was received), the payer's address and the chain's
 * word that it was paid. Every status change goes through the state machine (states.ts) and is
 * written in the same transaction as its event.
 */
export function createRefundsService(deps: RefundsDeps) {
  const { db, store, payments, events, clock, ids, view } = deps;

  async function emit(row: RefundRow, type: string): Promise<void> {
    const id = ids.prefixed("evt");
    const now = clock.now();
    const payload =
      `{"id":${JSON.stringify(id)},"object":"event","type":${JSON.stringify(type)},` +
      `"created_at":"${isoMillis(now)}","data":{"refund":${refundJson(row, view)}}}`;
    await events.insert({ id, account_id: row.account_id, type, payment_id: row.payment_id, payload, created_at: now });
    deps.onEvent?.();
  }

  /**
   * Applies `event` through the state machine with `write` (a compare-and-set) and announces the
   * new status; null when the refund was not in a status the event applies to.
   */
  async function move(row: RefundRow, event: RefundEvent, write: () => Promise<boolean>): Promise<RefundRow | null> {
    const to = nextRefundStatus(row.status, event);
    if (to === null || to === "awaiting_address" || !(await write())) return null;
    const updated = (await store.findById(row.id))!;
    await emit(updated, REFUND_EVENT_TYPES[to]);
    return updated;
  }

  /**
   * An address a refund may be paid to: EIP-55 checked when it is mixed case, and none that would
   * lose the money or pay it back to us (the zero address, the token itself, a deposit address).
   */
  async function refundAddress(text: string, field: string): Promise<Address> {
    if (!isAddress(text, { strict: true })) {
      throw new ValidationError(
        isAddress(text, { strict: false })
          ? `${field} ${text} fails its EIP-55 checksum: ` +
              "check it for a mistyped character, or send it all in lower case"
          : `${field} must be a 0x address of 40 hex digits`,
      );
    }
    const address = getAddress(text);
    if (address === zeroAddress) throw new ValidationError(`${field} cannot be the zero address`);
    if (address.toLowerCase() === view.usdc.toLowerCase())
      throw new ValidationError(`${field} cannot be the USDC contract`);
    if ((await payments.depositAddressesAmong([address.toLowerCase()])).size > 0)
      throw new ValidationError(`${field} is a payment's deposit address; a refund must go to the payer's own wallet`);
    return address;
  }

  function refundable(payment: PaymentRow): bigint {
    return (payment.amount_received ?? 0n) - payment.refund_reserved;
  }

  /** A refund by its claim link's token; null when the token is malformed or unknown. */
  async function findByClaimToken(token: string): Promise<RefundRow | null> {
    return CLAIM_TOKEN.test(token) ? store.findByClaimHash(deps.claimTokens.hashOf(token)) : null;
  }

  async function retrieve(account: Account, id: string): Promise<RefundRow> {
    const row = await store.findForAccount(id, account.id);
    if (!row) throw new NotFoundError(`no refund ${id}`);
    return row;
  }

  return {
    view,

    /**
     * Creates a refund of `input.amount` (default: all that may still be refunded) on the
     * account's payment. It counts against the cap from now on, until it is canceled.
     * `metadataText` is the merchant's metadata as sent; `inTransaction` runs inside the insert's
     * transaction (the idempotency record).
     */
    async create(
      account: Account,
      paymentId: string,
      input: CreateRefundInput,
      metadataText: string | null,
      inTransactionToo?: (row: RefundRow) => unknown,
    ): Promise<RefundRow> {
      const metadata = input.metadata == null || metadataText === null ? null : storedMetadata(metadataText);
      const asked = input.amount == null ? null : parseExactAmount(input.amount);
      if (input.amount != null && asked === null) throw new ValidationError("amount must be at most 1000000000.00");
      if (asked !== null && asked <= 0n) throw new ValidationError("amount must be greater than 0.00");
      const address = input.refund_address == null ? null : await refundAddress(input.refund_address, "refund_address");
      return db.transaction(async () => {
        // Locked (on PostgreSQL) until this refund is written: refunds of one payment made at once
        // take from its cap one after the other.
        const payment = await payments.findForAccountToUpdate(paymentId, account.id);
        if (!payment) throw new NotFoundError(`no payment ${paymentId}`);
        const left = refundable(payment);
        if ((payment.amount_received ?? 0n) === 0n)
          throw new ValidationError(`payment ${paymentId} has received nothing to refund`);
        if (left <= 0n)
          throw new ValidationError(
            `payment ${paymentId} has nothing left to refund: ${formatExact(payment.refund_reserved)} USDC of ` +
              `${formatExact(payment.amount_received ?? 0n)} USDC received is refunded or being refunded`,
          );
        const amount = asked ?? left;
        if (amount > left)
          throw new ValidationError(
            `amount ${formatExact(amount)} USDC is more than the ${formatExact(left)} USDC that may still be refunded`,
          );
        if ((await store.countForPayment(paymentId)) >= REFUNDS_PER_PAYMENT_MAX)
          throw new ValidationError(`payment ${paymentId} already has ${REFUNDS_PER_PAYMENT_MAX} refunds`);
        const now = clock.now();
        if (!(await store.reserve(paymentId, amount, now)))
          throw new Error("refund cap moved inside its own transaction");
        const id = ids.prefixed("re");
        const row = await store.insert({
          id,
          account_id: account.id,
          payment_id: paymentId,
          amount,
          status: address === null ? "awaiting_address" : "awaiting_payment",
          reason: input.reason ?? null,
          metadata,
          claim_token_hash: deps.claimTokens.hashOf(deps.claimTokens.tokenFor(id)),
          chain_id: payment.chain_id,
          refund_address: address,
          payable_after_block: address === null ? null : await deps.watchedUpTo(payment.chain_id),
          created_at: now,
          updated_at: now,
          payable_at: address === null ? null : now,
        });
        await emit(row, "refund.created");
        if (address !== null) await emit(row, REFUND_EVENT_TYPES.awaiting_payment);
        if (inTransactionToo) await inTransactionToo(row);
        return row;
      });
    },

    retrieve,

    /** The account's refunds, newest first, optionally of one payment (which must be the account's). */
    async list(account: Account, query: RefundListQuery): Promise<{ rows: RefundRow[]; hasMore: boolean }> {
      if (query.paymentId !== undefined && !(await payments.findForAccount(query.paymentId, account.id)))
        throw new NotFoundError(`no payment ${query.paymentId}`);
      let beforeSeq: number | undefined;
      if (query.startingAfter !== undefined) {
        const cursor = await store.findForAccount(query.startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no refund ${query.startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = await store.list({ ...query, accountId: account.id, beforeSeq });
      return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },

    /** Cancels an unpaid refund; what it held counts as refundable again. */
    async cancel(account: Account, id: string, inTransactionToo?: (row: RefundRow) => unknown): Promise<RefundRow> {
      return db.transaction(async () => {
        // Locked (on PostgreSQL) until canceled: a cancel, claim or transfer racing this one is
        // answered as if it came first or after, never half-way.
        const row = await store.findForAccountToUpdate(id, account.id);
        if (!row) throw new NotFoundError(`no refund ${id}`);
        if (row.tx_hash !== null && row.status === "awaiting_payment")
          throw new ConflictError(
            `refund ${id} cannot be canceled: a transfer paying it (${row.tx_hash}) is on chain, ` +
              "waiting for confirmations",
          );
        if (nextRefundStatus(row.status, "canceled") === null)
          throw new ConflictError(
            `refund ${id} has ${row.status === "succeeded" ? "succeeded" : "been canceled"} already`,
          );
        const now = clock.now();
        const updated = await move(row, "canceled", () => store.cancel(id, now));
        if (!updated) throw new ConflictError(`refund ${id} changed while it was being canceled`);
        await store.release(row.payment_id, row.amount, now);
        if (inTransactionToo) await inTransactionToo(updated);
        return updated;
      });
    },

    findByClaimToken,

    /**
     * The payer names the address (from the claim page). Once given it is fixed: a second claim
     * is refused, and a wrong address is mended by canceling the refund and creating another.
     */
    async claim(token: string, addressText: string): Promise<RefundRow> {
      return db.transaction(async () => {
        // Locked (on PostgreSQL) until the address is written, as in cancel.
        const row = CLAIM_TOKEN.test(token)
          ? await store.findByClaimHashToUpdate(deps.claimTokens.hashOf(token))
          : null;
        if (!row) throw new NotFoundError("no such refund");
        if (row.status !== "awaiting_address")
          throw new ConflictError(
            row.status === "canceled" ? "this refund was canceled" : "this refund's address was given already",
          );
        // Checked after the status: a refund that is past taking an address says so, whatever was typed.
        const address = await refundAddress(addressText.trim(), "Refund address");
        const now = clock.now();
        const updated = await move(row, "address_given", async () =>
          store.setAddress(row.id, address, await deps.watchedUpTo(row.chain_id), now),
        );
        if (!updated) throw new ConflictError("this refund changed while its address was being given; reload the page");
        return updated;
      });
    },

    /** Refunds on `chainId` waiting for their transfer, oldest payable first (the watcher's list). */
    payableOn: (chainId: number): Promise<RefundRow[]> => store.payable(chainId),

    /**
     * Records a transfer seen for a refund (call inside the watcher's transaction). Not yet a
     * success: that waits until the payment's speed policy counts its block (`succeed`).
     */
    see: (row: RefundRow, transfer: RefundTransfer): Promise<boolean> =>
      store.seeTransfer(row.id, transfer, clock.now()),

    /** A seen transfer that a reorg took off the chain: the refund waits for its transfer again. */
    forget: (row: RefundRow): Promise<boolean> => store.forgetTransfer(row.id, clock.now()),

    /**
     * The seen transfer now counts (call inside the watcher's transaction): the refund succeeded,
     * and the payment's amount_refunded grows. False when it had already moved on.
     */
    async succeed(row: RefundRow): Promise<boolean> {
      const now = clock.now();
      const succeeded = (await move(row, "transfer_counted", () => store.succeed(row.id, now))) !== null;
      if (succeeded) await store.addRefunded(row.payment_id, row.amount, now);
      return succeeded;
    },

    /** The refund object as JSON text (the API, webhooks). */
    json: (row: RefundRow): string => refundJson(row, view),
  };
}
