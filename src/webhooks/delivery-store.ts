import type { Db } from "../db/index.ts";

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  state: "pending" | "succeeded" | "failed" | "canceled";
  attempts: number;
  next_attempt_at: number | null;
  locked_until: number | null;
  created_at: number;
  updated_at: number;
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
  const due = db.query<DueDelivery, [number, number, number]>(
    `SELECT d.*, e.url, e.secret, ev.payload FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN events ev ON ev.id = d.event_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND (d.locked_until IS NULL OR d.locked_until < ?)
      ORDER BY d.next_attempt_at LIMIT ?`,
  );
  const lock = db.query("UPDATE webhook_deliveries SET locked_until = ? WHERE id = ? AND state = 'pending'");
  const insertAttempt = db.query(
    `INSERT INTO webhook_attempts (delivery_id, attempted_at, response_status, error, duration_ms, next_retry_at)
     VALUES ($delivery_id, $attempted_at, $response_status, $error, $duration_ms, $next_retry_at)`,
  );
  const finishAttempt = db.query(
    `UPDATE webhook_deliveries SET state = $state, attempts = attempts + 1, next_attempt_at = $next_attempt_at,
       locked_until = NULL, updated_at = $now WHERE id = $id AND state = 'pending'`,
  );
  const disableEndpoint = db.query("UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, ?) WHERE id = ?");
  const cancelForEndpoint = db.query(
    "UPDATE webhook_deliveries SET state = 'canceled', next_attempt_at = NULL, locked_until = NULL, updated_at = ? WHERE endpoint_id = ? AND state = 'pending'",
  );
  const findForEndpoint = db.query<DeliveryRow, [string, string]>("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?");
  const listForEndpoint = db.query<DeliveryRow & { event_type: string }, [string, number | null, number]>(
    `SELECT d.*, ev.type AS event_type FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = ? AND (?2 IS NULL OR d.rowid < ?2) ORDER BY d.rowid DESC LIMIT ?`,
  );
  const rowidOf = db.query<{ rowid: number }, [string, string]>("SELECT rowid FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?");
  const attemptsFor = db.query<AttemptRow, [string]>("SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY id DESC");
  const requeue = db.query(
    "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, locked_until = NULL, updated_at = ? WHERE id = ?",
  );
  const insertOne = db.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, state, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
  );

  return {
    /** Due, unlocked deliveries, oldest first. */
    due: (now: number, limit: number) => due.all(now, now, limit),
    /** Marks a delivery as being sent until `until`; false when another worker took it. */
    lock: (id: string, until: number) => lock.run(until, id).changes > 0,
    recordAttempt: (attempt: Omit<AttemptRow, "id">, state: DeliveryRow["state"], nextAttemptAt: number | null, now: number) =>
      db.transaction(() => {
        insertAttempt.run({ ...attempt });
        finishAttempt.run({ id: attempt.delivery_id, state, next_attempt_at: nextAttemptAt, now });
      })(),
    /** 410 Gone: the receiver asked us to stop. */
    disableEndpoint: (endpointId: string, now: number) =>
      db.transaction(() => {
        disableEndpoint.run(now, endpointId);
        cancelForEndpoint.run(now, endpointId);
      })(),
    cancelForEndpoint: (endpointId: string, now: number) => cancelForEndpoint.run(now, endpointId).changes,
    find: (id: string, endpointId: string) => findForEndpoint.get(id, endpointId),
    list: (endpointId: string, startingAfter: string | null, limit: number) => {
      const cursor = startingAfter === null ? null : (rowidOf.get(startingAfter, endpointId)?.rowid ?? -1);
      return cursor === -1 ? null : listForEndpoint.all(endpointId, cursor, limit + 1);
    },
    attempts: (deliveryId: string) => attemptsFor.all(deliveryId),
    requeue: (id: string, now: number) => requeue.run(now, now, id),
    insertOne: (row: { id: string; event_id: string; endpoint_id: string; account_id: string; now: number }) =>
      insertOne.run(row.id, row.event_id, row.endpoint_id, row.account_id, row.now, row.now, row.now),
  };
}
