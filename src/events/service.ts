import type { Account } from "../accounts/service.ts";
import type { Clock } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { RETENTION_MS } from "../ops/retention.ts";
import { PAYMENT_STATUSES } from "../payments/store.ts";
import type { EventStore } from "./store.ts";

/**
 * Every type an event can have (README.md, Webhooks): a payment entering a status (creation is
 * `pending` and sends none), funds after confirmation, a change to the account (its payout
 * address, from the CLI), and the on-demand `test` ping.
 */
export const EVENT_TYPES: readonly string[] = [
  ...PAYMENT_STATUSES.filter((status) => status !== "pending").map((status) => `payment.${status}`),
  "payment.funds_received",
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
    list(account: Account, query: EventListQuery): { payloads: string[]; hasMore: boolean } {
      let beforeSeq: number | null = null;
      if (query.startingAfter !== undefined) {
        const cursor = store.findForAccount(query.startingAfter, account.id);
        if (!cursor) throw new ValidationError(`starting_after: no event ${query.startingAfter}`);
        beforeSeq = cursor.seq;
      }
      const rows = store.list({
        accountId: account.id,
        since: clock.now() - RETENTION_MS,
        beforeSeq,
        type: query.type ?? null,
        limit: query.limit,
      });
      return { payloads: rows.slice(0, query.limit).map((row) => row.payload), hasMore: rows.length > query.limit };
    },

    /** One event of the account, as sent. */
    retrieve(account: Account, id: string): string {
      const row = store.findForAccount(id, account.id);
      if (!row) throw new NotFoundError(`no event ${id}`);
      return row.payload;
    },
  };
}
