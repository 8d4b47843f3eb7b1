import { type Db, raw, sql, sqlFor, textsIn } from "../db/engine.ts";
import { lockEndpointForRemoval } from "./store.ts";

/**
 * A delivery's columns, named rather than `d.*`: PostgreSQL's table has SQLite's implicit rowid as
 * a column of its own (the order an endpoint's deliveries page by), which no row here carries.
 */
const DELIVERY =
  raw(`d.id, d.event_id, d.endpoint_id, d.account_id, d.state, d.attempts, d.next_attempt_at, d.created_at,
  d.updated_at`);

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  state: "pending" | "succeeded" | "failed" | "canceled";
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A delivery as the deliveries API shows it: with the type and payment of the event it carries. */
export interface ListedDelivery extends DeliveryRow {
  event_type: string;
  /** null for events about no payment (`test`, `account.updated`). */
  payment_id: string | null;
}

/** A delivery of one of a payment's events, with the endpoint it goes to. */
export interface PaymentDelivery extends ListedDelivery {
  endpoint_url: string;
}

/** A due delivery with what sending it needs. */
export interface DueDelivery extends DeliveryRow {
  url: string;
  secret: string;
  payload: string;
}

export interface AttemptRow {
  id: number;
  delivery_id: string;
  attempted_at: number;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  next_retry_at: number | null;
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;

export function createDeliveryStore(db: Db) {
  // Lists of ids are bound as one JSON array of strings, read as a table of values on either engine.
  const idsIn = (ids: readonly string[]) => textsIn(db, ids);
  const SKIP_LOCKED = sqlFor(db, sql``, sql` FOR UPDATE SKIP LOCKED`);
  const FOR_UPDATE = sqlFor(db, sql``, sql` FOR UPDATE`);
  const cancelForEndpoint = (endpointId: string, now: number): Promise<number> =>
    db.run(
      sql`UPDATE webhook_deliveries SET state = 'canceled', next_attempt_at = NULL, updated_at = ${now}
          WHERE endpoint_id = ${endpointId} AND state = 'pending'`,
    );

  return {
    /**
     * Claims for `claimer` up to `limit` due deliveries, oldest first, until `until`, and returns
     * them with what sending needs; leaves out the endpoints and accounts that may take no more
     * sends now (else one backlog fills every row read and hides the rest).
     *
     * Claimed by moving next_attempt_at past the send, so no worker finds them due meanwhile. On
     * PostgreSQL, workers of other replicas claiming at the same moment skip each other's rows
     * rather than wait for them; SQLite has one writer, so its UPDATE is claim enough.
     */
    claimDue: (
      now: number,
      limit: number,
      claim: { claimer: string; until: number },
      skip: { endpoints: Iterable<string>; accounts: Iterable<string> },
    ): Promise<DueDelivery[]> =>
      db.transaction(async () => {
        const ids = (
          await db.all<{ id: string }>(
            sql`UPDATE webhook_deliveries SET next_attempt_at = ${claim.until}, claimed_by = ${claim.claimer}
                 WHERE id IN (SELECT d.id FROM webhook_deliveries d
                               WHERE d.state = 'pending' AND d.next_attempt_at <= ${now}
                                 AND d.endpoint_id NOT IN (${idsIn([...skip.endpoints])})
                                 AND d.account_id NOT IN (${idsIn([...skip.accounts])})
                               ORDER BY d.next_attempt_at LIMIT ${limit}${SKIP_LOCKED})
                 RETURNING id`,
          )
        ).map((row) => row.id);
        if (ids.length === 0) return [];
        return db.all<DueDelivery>(
          sql`SELECT ${DELIVERY}, e.url, e.secret, ev.payload FROM webhook_deliveries d
                JOIN webhook_endpoints e ON e.id = d.endpoint_id
                JOIN events ev ON ev.id = d.event_id
               WHERE d.id IN (${idsIn(ids)}) ORDER BY d.created_at, d.id`,
        );
      }),
    /**
     * Makes `claimer`'s claims (those of `ids`, or all) due at `now` and free to claim: what a
     * worker claimed and did not send (it is stopping), or claimed before it restarted.
     */
    release: (claimer: string, now: number, ids: string[] | null = null) =>
      db.run(
        sql`UPDATE webhook_deliveries SET next_attempt_at = ${now}, claimed_by = NULL
             WHERE claimed_by = ${claimer} AND state = 'pending'
               AND (CAST(${ids && JSON.stringify(ids)} AS TEXT) IS NULL OR id IN (${idsIn(ids ?? [])}))`,
      ),
    /**
     * Deliveries still to send, due now or waiting for a retry; for /metrics. Answered from the
     * partial index of pending deliveries (webhook_deliveries_due).
     */
    countPending: async () =>
      (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'`))!.n,
    /** Runs inside the caller's transaction (the worker batches them, see group-commit.ts). */
    async recordAttempt(
      attempt: Omit<AttemptRow, "id">,
      state: DeliveryRow["state"],
      nextAttemptAt: number | null,
      now: number,
    ): Promise<void> {
      await db.run(
        sql`INSERT INTO webhook_attempts (delivery_id, attempted_at, response_status, error, duration_ms, next_retry_at)
            VALUES (${attempt.delivery_id}, ${attempt.attempted_at}, ${attempt.response_status}, ${attempt.error},
                    ${attempt.duration_ms}, ${attempt.next_retry_at})`,
      );
      await db.run(
        sql`UPDATE webhook_deliveries SET state = ${state}, attempts = attempts + 1, next_attempt_at = ${nextAttemptAt},
              claimed_by = NULL, updated_at = ${now} WHERE id = ${attempt.delivery_id} AND state = 'pending'`,
      );
    },
    /**
     * 410 Gone: the receiver asked us to stop. Runs inside the caller's transaction; locked first,
     * as for a deletion (WebhookStore.deleteEndpoint), so no event routed meanwhile keeps a delivery.
     */
    async disableEndpoint(endpointId: string, now: number): Promise<void> {
      await lockEndpointForRemoval(db, endpointId);
      await db.run(
        sql`UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, ${now}) WHERE id = ${endpointId}`,
      );
      await cancelForEndpoint(endpointId, now);
    },
    cancelForEndpoint,
    find: (id: string, endpointId: string) =>
      db.get<ListedDelivery>(
        sql`SELECT ${DELIVERY}, ev.type AS event_type, ev.payment_id FROM webhook_deliveries d
              JOIN events ev ON ev.id = d.event_id
            WHERE d.id = ${id} AND d.endpoint_id = ${endpointId}`,
      ),
    /** The cast types the cursor for PostgreSQL, which cannot tell a parameter's type from IS NULL. */
    async list(endpointId: string, startingAfter: string | null, limit: number): Promise<ListedDelivery[] | null> {
      const cursor =
        startingAfter === null
          ? null
          : ((
              await db.get<{ rowid: number }>(
                sql`SELECT rowid FROM webhook_deliveries WHERE id = ${startingAfter} AND endpoint_id = ${endpointId}`,
              )
            )?.rowid ?? -1);
      if (cursor === -1) return null;
      return db.all<ListedDelivery>(
        sql`SELECT ${DELIVERY}, ev.type AS event_type, ev.payment_id FROM webhook_deliveries d
              JOIN events ev ON ev.id = d.event_id
             WHERE d.endpoint_id = ${endpointId} AND (CAST(${cursor} AS BIGINT) IS NULL OR d.rowid < ${cursor})
             ORDER BY d.rowid DESC LIMIT ${limit + 1}`,
      );
    },
    /**
     * Deliveries of a payment's events to the account's endpoints, oldest first: from the
     * payment's events to their deliveries (found by event_id through UNIQUE (event_id, endpoint_id)).
     */
    listForPayment: (paymentId: string, accountId: string) =>
      db.all<PaymentDelivery>(
        sql`SELECT ${DELIVERY}, ev.type AS event_type, e.url AS endpoint_url FROM events ev
              JOIN webhook_deliveries d ON d.event_id = ev.id
              JOIN webhook_endpoints e ON e.id = d.endpoint_id
             WHERE ev.payment_id = ${paymentId} AND ev.account_id = ${accountId} AND d.account_id = ${accountId}
             ORDER BY d.rowid`,
      ),
    attempts: (deliveryId: string) =>
      db.all<AttemptRow>(sql`SELECT * FROM webhook_attempts WHERE delivery_id = ${deliveryId} ORDER BY id DESC`),
    /** Answers how many it requeued: 0 once the delivery is gone (purged). */
    requeue: (id: string, now: number) =>
      db.run(
        sql`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ${now}, updated_at = ${now}
            WHERE id = ${id}`,
      ),
    /**
     * Deletes up to `limit` deliveries that finished before `before`, with their attempts, in one
     * transaction. On PostgreSQL they are locked as they are chosen: one sent again meanwhile
     * (requeue) is waited for, then found pending and kept, with its attempts.
     */
    purgeFinished: (before: number, limit: number): Promise<number> =>
      db.transaction(async () => {
        const ids = (
          await db.all<{ id: string }>(
            sql`SELECT id FROM webhook_deliveries WHERE state != 'pending' AND updated_at < ${before}
                 ORDER BY updated_at LIMIT ${limit}${FOR_UPDATE}`,
          )
        ).map((row) => row.id);
        await db.run(sql`DELETE FROM webhook_attempts WHERE delivery_id IN (${idsIn(ids)})`);
        return db.run(sql`DELETE FROM webhook_deliveries WHERE id IN (${idsIn(ids)})`);
      }),
    insertOne: (row: { id: string; event_id: string; endpoint_id: string; account_id: string; now: number }) =>
      db.run(
        sql`INSERT INTO webhook_deliveries
              (id, event_id, endpoint_id, account_id, state, next_attempt_at, created_at, updated_at)
            VALUES (${row.id}, ${row.event_id}, ${row.endpoint_id}, ${row.account_id}, 'pending', ${row.now},
            ${row.now}, ${row.now})`,
      ),
  };
}
