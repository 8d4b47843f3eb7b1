import type { Db } from "../db/index.ts";

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

/** The outbox: events are written in the transaction that caused them, delivered later. */
export function createEventStore(db: Db) {
  const insert = db.query(
    "INSERT INTO events (id, account_id, type, payment_id, payload, created_at) VALUES ($id, $account_id, $type, $payment_id, $payload, $created_at)",
  );
  const listForPayment = db.query<EventRow, [string]>("SELECT * FROM events WHERE payment_id = ? ORDER BY seq");
  return {
    insert: (row: Omit<EventRow, "seq">) => insert.run({ ...row }),
    listForPayment: (paymentId: string) => listForPayment.all(paymentId),
  };
}
