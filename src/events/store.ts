import { type Db, sql, sqlFor } from "../db/engine.ts";
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
  const followers: Array<(row: Omit<EventRow, "seq">) => Promise<void>> = [];
  const KEY_SHARE = sqlFor(db, sql``, sql` FOR KEY SHARE`);
  const insertRow = (row: Omit<EventRow, "seq">) =>
    db.run(
      sql`INSERT INTO events (id, account_id, type, payment_id, payload, created_at)
          VALUES (${row.id}, ${row.account_id}, ${row.type}, ${row.payment_id}, ${row.payload}, ${row.created_at})`,
    );

  return {
    /** Records an event and queues it for every endpoint of the account. */
    async insert(row: Omit<EventRow, "seq">): Promise<void> {
      await insertRow(row);
      // FOR KEY SHARE on PostgreSQL, the lock each delivery's foreign key takes anyway, taken as the
      // endpoints are read: an endpoint being deleted or disabled meanwhile (locked FOR UPDATE, see
      // WebhookStore.deleteEndpoint) is waited for and then left out, and one not yet locked waits
      // for this transaction, whose deliveries its cancel then finds. Never a delivery left pending
      // to an endpoint that is gone.
      const endpoints = await db.all<{ id: string }>(
        sql`SELECT id FROM webhook_endpoints
             WHERE account_id = ${row.account_id} AND deleted_at IS NULL AND disabled_at IS NULL${KEY_SHARE}`,
      );
      for (const endpoint of endpoints) {
        await db.run(
          sql`INSERT INTO webhook_deliveries
                (id, event_id, endpoint_id, account_id, state, next_attempt_at, created_at, updated_at)
              VALUES (${ids.prefixed("whd")}, ${row.id}, ${endpoint.id}, ${row.account_id}, 'pending',
                      ${row.created_at}, ${row.created_at}, ${row.created_at})`,
        );
      }
      for (const follow of followers) await follow(row);
    },
    /** Runs `follow` for every event `insert` records, inside the event's transaction. */
    follow: (follow: (row: Omit<EventRow, "seq">) => Promise<void>) => followers.push(follow),
    /** Records an event meant for one endpoint only (test pings); the caller queues it. */
    insertUnrouted: (row: Omit<EventRow, "seq">) => insertRow(row),
    listForPayment: (paymentId: string) =>
      db.all<EventRow>(sql`SELECT * FROM events WHERE payment_id = ${paymentId} ORDER BY seq`),
    /** A payment's events in the order they were written, without their payloads. */
    historyOfPayment: (paymentId: string, accountId: string) =>
      db.all<Pick<EventRow, "id" | "type" | "created_at">>(
        sql`SELECT id, type, created_at FROM events WHERE payment_id = ${paymentId} AND account_id = ${accountId}
            ORDER BY seq`,
      ),
    findForAccount: (id: string, accountId: string) =>
      db.get<EventRow>(sql`SELECT * FROM events WHERE id = ${id} AND account_id = ${accountId}`),
    /** Deletes up to `limit` events created before `before` that no delivery refers to any more. */
    purgeOlderThan: (before: number, limit: number) =>
      db.run(
        sql`DELETE FROM events WHERE seq IN (
              SELECT seq FROM events e WHERE e.created_at < ${before}
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
               ORDER BY e.created_at LIMIT ${limit})`,
      ),
    /** The account's events written after `seq`, oldest first (what a stream sends next). */
    listAfter: (accountId: string, seq: number, limit: number) =>
      db.all<EventRow>(
        sql`SELECT * FROM events WHERE account_id = ${accountId} AND seq > ${seq} ORDER BY seq LIMIT ${limit}`,
      ),
    /** The account's newest event, if it has any. */
    newest: (accountId: string) =>
      db.get<Pick<EventRow, "seq" | "id">>(
        sql`SELECT seq, id FROM events WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT 1`,
      ),
    /** The casts give PostgreSQL the type of a parameter that may be null, which `IS NULL` alone does not. */
    list: (filter: {
      accountId: string;
      since: number;
      beforeSeq: number | null;
      type: string | null;
      limit: number;
    }) =>
      db.all<EventRow>(
        sql`SELECT * FROM events WHERE account_id = ${filter.accountId} AND created_at >= ${filter.since}
               AND (CAST(${filter.beforeSeq} AS BIGINT) IS NULL OR seq < ${filter.beforeSeq})
               AND (CAST(${filter.type} AS TEXT) IS NULL OR type = ${filter.type})
             ORDER BY seq DESC LIMIT ${filter.limit + 1}`,
      ),
  };
}
