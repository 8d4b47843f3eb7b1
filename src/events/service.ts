import type { Account } from "../accounts/service.ts";
import type { Clock } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { RETENTION_MS } from "../ops/retention.ts";
import { PAYMENT_STATUSES } from "../payments/store.ts";
import type { EventStore } from "./store.ts";

/**
 * Every type an event can have (docs/webhooks.md): a payment entering a status (creation is
 * `pending` and sends none: a payment enters it again only when a reorg takes back all it had),
 * funds seen before they count, funds after confirmation, funds and settlements a reorg took back,
 * a change to the account (its payout address, from the CLI), and the on-demand `test` ping.
 */
export const EVENT_TYPES: readonly string[] = [
  ...PAYMENT_STATUSES.map((status) => `payment.${status}`),
  "payment.funds_seen",
  "payment.funds_received",
  "payment.funds_reversed",
  "payment.settlement_reversed",
  "refund.created",
  "refund.payable",
  "refund.succeeded",
  "refund.canceled",
  "account.updated",
  "test",
];

export interface EventsDeps {
  store: EventStore;
  clock: Clock;
}

export interface EventListQuery {
  limit: number;
  startingAfter?: string;
  type?: string;
}

/** Where a stream starts: after the event `id` (null: before the account's first event). */
export interface StreamCursor {
  seq: number;
  id: string | null;
}

export type EventsService = ReturnType<typeof createEventsService>;

/**
 * The events API: a reconciliation aid beside webhooks. Events are the JSON text they were sent
 * as (the payment inside carries the merchant's metadata byte for byte), so they are handed out
 * as stored text, never re-serialised.
 */
export function createEventsService(deps: EventsDeps) {
  const { store, clock } = deps;
  return {
    /**
     * The account's events of the last 30 days, newest first. Older events are purged once no
     * delivery refers to them (src/ops/retention.ts); until then they are retrievable, not listed.
     */
    async list(account: Account, query: EventListQuery): Promise<{ payloads: string[]; hasMore: boolean }> {
      let beforeSeq: number | null = null;
      if (query.startingAfter !== undefined) {
        const cursor = await store.findForAccount(query.startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no event ${query.startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = await store.list({
        accountId: account.id,
        since: clock.now() - RETENTION_MS,
        beforeSeq,
        type: query.type ?? null,
        limit: query.limit,
      });
      return { payloads: rows.slice(0, query.limit).map((row) => row.payload), hasMore: rows.length > query.limit };
    },

    /**
     * Where a stream of the account's events starts: just after the event `after` names (so a
     * client that reconnects gets exactly what it missed), or, without one, after the newest
     * event (new events only). `field` names where the id came from, for the error.
     */
    async streamCursor(account: Account, after: string | undefined, field: string): Promise<StreamCursor> {
      if (after === undefined) return (await store.newest(account.id)) ?? { seq: 0, id: null };
      const cursor = await store.findForAccount(after, account.id);
      if (!cursor) throw new ValidationError(`${field}: no event ${after}`);
      return { seq: cursor.seq, id: cursor.id };
    },

    /** The account's events after `cursor`, oldest first: at most `limit`, with their payloads as sent. */
    async after(
      account: Account,
      cursor: number,
      limit: number,
    ): Promise<Array<{ seq: number; id: string; type: string; payload: string }>> {
      return (await store.listAfter(account.id, cursor, limit)).map(({ seq, id, type, payload }) => ({
        seq,
        id,
        type,
        payload,
      }));
    },

    /** One event of the account, as sent. */
    async retrieve(account: Account, id: string): Promise<string> {
      const row = await store.findForAccount(id, account.id);
      if (!row) throw new NotFoundError(`no event ${id}`);
      return row.payload;
    },
  };
}
