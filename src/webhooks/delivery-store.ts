import { type Db, sqlFor, textsIn } from "../db/engine.ts";
import { inTransaction } from "../db/transaction.ts";

/**
 * A delivery's columns, named rather than `d.*`: PostgreSQL's table has SQLite's implicit rowid as
 * a column of its own (the order an endpoint's deliveries page by), which no row here carries.
 */
const DELIVERY = `d.id, d.event_id, d.endpoint_id, d.account_id, d.state, d.attempts, d.next_attempt_at, d.created_at,
  d.updated_at`;

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
  const idsIn = (param: string) => textsIn(db, param);
  // Claimed by moving next_attempt_at past the send, so no worker finds them due meanwhile. On
  // PostgreSQL, workers of other replicas claiming at the same moment skip each other's rows
  // rather than wait for them; SQLite has one writer, so its UPDATE is claim enough.
  const claimDue = db.query<{ id: string }, [number, string, string, number, number, string]>(
    `UPDATE webhook_deliveries SET next_attempt_at = ?5, claimed_by = ?6
      WHERE id IN (SELECT d.id FROM webhook_deliveries d
                    WHERE d.state = 'pending' AND d.next_attempt_at <= ?1
                      AND d.endpoint_id NOT IN (${idsIn("?2")})
                      AND d.account_id NOT IN (${idsIn("?3")})
                    ORDER BY d.next_attempt_at LIMIT ?4${sqlFor(db, "", " FOR UPDATE SKIP LOCKED")})
      RETURNING id`,
  );
  const claimed = db.query<DueDelivery, [string]>(
    `SELECT ${DELIVERY}, e.url, e.secret, ev.payload FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN events ev ON ev.id = d.event_id
      WHERE d.id IN (${idsIn("?1")}) ORDER BY d.created_at, d.id`,
  );
  // What a worker claimed and did not send (it is stopping), or claimed before it restarted.
  const release = db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = ?1, claimed_by = NULL
      WHERE claimed_by = ?2 AND state = 'pending' AND (CAST(?3 AS TEXT) IS NULL OR id IN (${idsIn("?3")}))`,
  );
  const insertAttempt = db.query(
    `INSERT INTO webhook_attempts (delivery_id, attempted_at, response_status, error, duration_ms, next_retry_at)
     VALUES ($delivery_id, $attempted_at, $response_status, $error, $duration_ms, $next_retry_at)`,
  );
  const finishAttempt = db.query(
    `UPDATE webhook_deliveries SET state = $state, attempts = attempts + 1, next_attempt_at = $next_attempt_at,
       claimed_by = NULL, updated_at = $now WHERE id = $id AND state = 'pending'`,
  );
  const disableEndpoint = db.query("UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, ?) WHERE id = ?");
  const cancelForEndpoint = db.query(
    `UPDATE webhook_deliveries SET state = 'canceled', next_attempt_at = NULL, updated_at = ?
     WHERE endpoint_id = ? AND state = 'pending'`,
  );
  const findForEndpoint = db.query<ListedDelivery, [string, string]>(
    `SELECT ${DELIVERY}, ev.type AS event_type, ev.payment_id FROM webhook_deliveries d
       JOIN events ev ON ev.id = d.event_id
     WHERE d.id = ? AND d.endpoint_id = ?`,
  );
  // The cast types the cursor for PostgreSQL, which cannot tell a parameter's type from IS NULL.
  const listForEndpoint = db.query<ListedDelivery, [string, number | null, number]>(
    `SELECT ${DELIVERY}, ev.type AS event_type, ev.payment_id FROM webhook_deliveries d
       JOIN events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR d.rowid < ?2) ORDER BY d.rowid DESC LIMIT ?3`,
  );
  // From the payment's events to their deliveries (found by event_id through UNIQUE (event_id, endpoint_id)).
  const listForPayment = db.query<PaymentDelivery, [string, string]>(
    `SELECT ${DELIVERY}, ev.type AS event_type, e.url AS endpoint_url FROM events ev
       JOIN webhook_deliveries d ON d.event_id = ev.id
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE ev.payment_id = ?1 AND ev.account_id = ?2 AND d.account_id = ?2 ORDER BY d.rowid`,
  );
  const rowidOf = db.query<{ rowid: number }, [string, string]>(
    "SELECT rowid FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?",
  );
  const attemptsFor = db.query<AttemptRow, [string]>(
    "SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY id DESC",
  );
  const requeue = db.query(
    "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, updated_at = ? WHERE id = ?",
  );
  const finishedBefore = db.query<{ id: string }, [number, number]>(
    "SELECT id FROM webhook_deliveries WHERE state != 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?",
  );
  const deleteAttemptsOf = db.query(`DELETE FROM webhook_attempts WHERE delivery_id IN (${idsIn("?")})`);
  const deleteDeliveries = db.query(`DELETE FROM webhook_deliveries WHERE id IN (${idsIn("?")})`);
  const purgeFinished = (before: number, limit: number) =>
    inTransaction(db, () => {
      const ids = JSON.stringify(finishedBefore.all(before, limit).map((row) => row.id));
      deleteAttemptsOf.run(ids);
      return deleteDeliveries.run(ids).changes;
    });
  // Answered from the partial index of pending deliveries (webhook_deliveries_due).
  const countPending = db.query<{ n: number }, []>(
    "SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'",
  );
  const insertOne = db.query(
    `INSERT INTO webhook_deliveries
       (id, event_id, endpoint_id, account_id, state, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
  );

  return {
    /**
     * Claims for `claimer` up to `limit` due deliveries, oldest first, until `until`, and returns
     * them with what sending needs; leaves out the endpoints and accounts that may take no more
     * sends now (else one backlog fills every row read and hides the rest).
     */
    claimDue: (
      now: number,
      limit: number,
      claim: { claimer: string; until: number },
      skip: { endpoints: Iterable<string>; accounts: Iterable<string> },
    ): DueDelivery[] =>
      inTransaction(db, () => {
        const ids = claimDue
          .all(
            now,
            JSON.stringify([...skip.endpoints]),
            JSON.stringify([...skip.accounts]),
            limit,
            claim.until,
            claim.claimer,
          )
          .map((row) => row.id);
        return ids.length ? claimed.all(JSON.stringify(ids)) : [];
      }),
    /** Makes `claimer`'s claims (those of `ids`, or all) due at `now` and free to claim. */
    release: (claimer: string, now: number, ids: string[] | null = null) =>
      release.run(now, claimer, ids && JSON.stringify(ids)).changes,
    /** Deliveries still to send, due now or waiting for a retry; for /metrics. */
    countPending: () => countPending.get()!.n,
    /** Runs inside the caller's transaction (the worker batches them, see group-commit.ts). */
    recordAttempt: (
      attempt: Omit<AttemptRow, "id">,
      state: DeliveryRow["state"],
      nextAttemptAt: number | null,
      now: number,
    ) => {
      insertAttempt.run({ ...attempt });
      finishAttempt.run({ id: attempt.delivery_id, state, next_attempt_at: nextAttemptAt, now });
    },
    /** 410 Gone: the receiver asked us to stop. Runs inside the caller's transaction. */
    disableEndpoint: (endpointId: string, now: number) => {
      disableEndpoint.run(now, endpointId);
      cancelForEndpoint.run(now, endpointId);
    },
    cancelForEndpoint: (endpointId: string, now: number) => cancelForEndpoint.run(now, endpointId).changes,
    find: (id: string, endpointId: string) => findForEndpoint.get(id, endpointId),
    list: (endpointId: string, startingAfter: string | null, limit: number) => {
      const cursor = startingAfter === null ? null : (rowidOf.get(startingAfter, endpointId)?.rowid ?? -1);
      return cursor === -1 ? null : listForEndpoint.all(endpointId, cursor, limit + 1);
    },
    /** Deliveries of a payment's events to the account's endpoints, oldest first. */
    listForPayment: (paymentId: string, accountId: string) => listForPayment.all(paymentId, accountId),
    attempts: (deliveryId: string) => attemptsFor.all(deliveryId),
    requeue: (id: string, now: number) => requeue.run(now, now, id),
    /** Deletes up to `limit` deliveries that finished before `before`, with their attempts, in one transaction. */
    purgeFinished: (before: number, limit: number): number => purgeFinished(before, limit),
    insertOne: (row: { id: string; event_id: string; endpoint_id: string; account_id: string; now: number }) =>
      insertOne.run(row.id, row.event_id, row.endpoint_id, row.account_id, row.now, row.now, row.now),
  };
}
