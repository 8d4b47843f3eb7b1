import { type Db, isPostgres, sql } from "../db/engine.ts";

export interface WebhookEndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  created_at: number;
  disabled_at: number | null;
  deleted_at: number | null;
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;

/**
 * Locks an endpoint against events being routed to it (they hold it FOR KEY SHARE) until the
 * caller's transaction ends, on PostgreSQL: before it is deleted or disabled, and its pending
 * deliveries canceled. SQLite runs one transaction at a time already.
 */
export async function lockEndpointForRemoval(db: Db, id: string): Promise<void> {
  if (isPostgres(db)) await db.get(sql`SELECT id FROM webhook_endpoints WHERE id = ${id} FOR UPDATE`);
}

export function createWebhookStore(db: Db) {
  const lockEndpoint = (id: string) => lockEndpointForRemoval(db, id);
  return {
    insertEndpoint: (row: Omit<WebhookEndpointRow, "disabled_at" | "deleted_at">) =>
      db.run(
        sql`INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at)
            VALUES (${row.id}, ${row.account_id}, ${row.url}, ${row.secret}, ${row.created_at})`,
      ),
    listEndpoints: (accountId: string) =>
      db.all<WebhookEndpointRow>(
        sql`SELECT * FROM webhook_endpoints WHERE account_id = ${accountId} AND deleted_at IS NULL
            ORDER BY created_at DESC, id DESC`,
      ),
    /**
     * Holds the account's other endpoint registrations back until the caller's transaction ends, on
     * PostgreSQL, whose transactions run side by side (in one process and across replicas): each
     * counts the endpoints registered before it, so the cap holds. SQLite runs one at a time already.
     */
    async lockAccount(accountId: string): Promise<void> {
      if (isPostgres(db)) await db.get(sql`SELECT id FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`);
    },
    countEndpoints: async (accountId: string) =>
      (
        await db.get<{ n: number }>(
          sql`SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ${accountId} AND deleted_at IS NULL`,
        )
      )?.n ?? 0,
    findEndpoint: (id: string, accountId: string) =>
      db.get<WebhookEndpointRow>(
        sql`SELECT * FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`,
      ),
    /**
     * Soft delete: past deliveries keep their endpoint; returns whether one was deleted. Meant inside
     * the transaction that then cancels the endpoint's pending deliveries: on PostgreSQL the row is
     * locked FOR UPDATE first, which waits for every transaction routing an event to the endpoint
     * (EventStore.insert holds it FOR KEY SHARE), so the cancel finds their deliveries, and an event
     * routed after it finds the endpoint deleted. SQLite runs one transaction at a time already.
     */
    async deleteEndpoint(id: string, accountId: string, now: number): Promise<boolean> {
      await lockEndpoint(id);
      return (
        (await db.run(
          sql`UPDATE webhook_endpoints SET deleted_at = ${now}
               WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`,
        )) > 0
      );
    },
    /** Removes up to `limit` deleted endpoints, secret and all, once no delivery refers to them. */
    purgeDeleted: (limit: number) =>
      db.run(
        sql`DELETE FROM webhook_endpoints WHERE id IN (
              SELECT id FROM webhook_endpoints e WHERE e.deleted_at IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id)
               LIMIT ${limit})`,
      ),
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
  };
}
