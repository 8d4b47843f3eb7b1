import type { Db } from "../db/index.ts";
import type { IdGenerator } from "../lib/ids.ts";

export interface EventRow {
  seq: number;
  id: string;
  account_id: string;
  type: string;
  payment_id: string | null;
  payload: string;
  created_at: number;
}

export type EventStore = ReturnType<typeof createEventStore>;

/**
 * The outbox: an event is written in the transaction that caused it, together with one pending
 * delivery per live webhook endpoint of its account, so none can be lost or sent twice.
 */
export function createEventStore(db: Db, ids: IdGenerator) {
  // What else an event causes in its own transaction (the emails it queues, src/email/).
  const followers: Array<(row: Omit<EventRow, "seq">) => void> = [];
  const insert = db.query(
    `INSERT INTO events (id, account_id, type, payment_id, payload, created_at)
     VALUES ($id, $account_id, $type, $payment_id, $payload, $created_at)`,
  );
  const liveEndpoints = db.query<{ id: string }, [string]>(
    "SELECT id FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL AND disabled_at IS NULL",
  );
  const queueDelivery = db.query(
    `INSERT INTO webhook_deliveries
       (id, event_id, endpoint_id, account_id, state, next_attempt_at, created_at, updated_at)
     VALUES ($id, $event_id, $endpoint_id, $account_id, 'pending', $now, $now, $now)`,
  );
  const listForPayment = db.query<EventRow, [string]>("SELECT * FROM events WHERE payment_id = ? ORDER BY seq");
  const historyOfPayment = db.query<Pick<EventRow, "id" | "type" | "created_at">, [string, string]>(
    "SELECT id, type, created_at FROM events WHERE payment_id = ? AND account_id = ? ORDER BY seq",
  );
  const findForAccount = db.query<EventRow, [string, string]>("SELECT * FROM events WHERE id = ? AND account_id = ?");
  const purgeOlderThan = db.query(
    `DELETE FROM events WHERE seq IN (
       SELECT seq FROM events e WHERE e.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
        ORDER BY e.created_at LIMIT ?)`,
  );
  const listAfter = db.query<EventRow, [string, number, number]>(
    "SELECT * FROM events WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  const newest = db.query<Pick<EventRow, "seq" | "id">, [string]>(
    "SELECT seq, id FROM events WHERE account_id = ? ORDER BY seq DESC LIMIT 1",
  );
  // The casts give PostgreSQL the type of a parameter that may be null, which `IS NULL` alone does not.
  const list = db.query<EventRow, Record<string, string | number | null>>(
    `SELECT * FROM events WHERE account_id = $account_id AND created_at >= $since
        AND (CAST($before_seq AS BIGINT) IS NULL OR seq < $before_seq) AND (CAST($type AS TEXT) IS NULL OR type = $type)
      ORDER BY seq DESC LIMIT $limit`,
  );

  return {
    /** Records an event and queues it for every endpoint of the account. */
    insert(row: Omit<EventRow, "seq">): void {
      insert.run({ ...row });
      for (const endpoint of liveEndpoints.all(row.account_id)) {
        queueDelivery.run({
          id: ids.prefixed("whd"),
          event_id: row.id,
          endpoint_id: endpoint.id,
          account_id: row.account_id,
          now: row.created_at,
        });
      }
      for (const follow of followers) follow(row);
    },
    /** Runs `follow` for every event `insert` records, inside the event's transaction. */
    follow: (follow: (row: Omit<EventRow, "seq">) => void) => followers.push(follow),
    /** Records an event meant for one endpoint only (test pings); the caller queues it. */
    insertUnrouted: (row: Omit<EventRow, "seq">) => insert.run({ ...row }),
    listForPayment: (paymentId: string) => listForPayment.all(paymentId),
    /** A payment's events in the order they were written, without their payloads. */
    historyOfPayment: (paymentId: string, accountId: string) => historyOfPayment.all(paymentId, accountId),
    findForAccount: (id: string, accountId: string) => findForAccount.get(id, accountId),
    /** Deletes up to `limit` events created before `before` that no delivery refers to any more. */
    purgeOlderThan: (before: number, limit: number) => purgeOlderThan.run(before, limit).changes,
    /** The account's events written after `seq`, oldest first (what a stream sends next). */
    listAfter: (accountId: string, seq: number, limit: number) => listAfter.all(accountId, seq, limit),
    /** The account's newest event, if it has any. */
    newest: (accountId: string) => newest.get(accountId) ?? null,
    list: (filter: {
      accountId: string;
      since: number;
      beforeSeq: number | null;
      type: string | null;
      limit: number;
    }) =>
      list.all({
        account_id: filter.accountId,
        since: filter.since,
        before_seq: filter.beforeSeq,
        type: filter.type,
        limit: filter.limit + 1,
      }),
  };
}
