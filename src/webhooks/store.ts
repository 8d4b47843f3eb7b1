import type { Db } from "../db/index.ts";
import { inTransaction } from "../db/transaction.ts";

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

export function createWebhookStore(db: Db) {
  const insertEndpoint = db.query(
    `INSERT INTO webhook_endpoints (id, account_id, url, secret, created_at)
     VALUES ($id, $account_id, $url, $secret, $created_at)`,
  );
  const listEndpoints = db.query<WebhookEndpointRow, [string]>(
    "SELECT * FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC",
  );
  const countEndpoints = db.query<{ n: number }, [string]>(
    "SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ? AND deleted_at IS NULL",
  );
  const findEndpoint = db.query<WebhookEndpointRow, [string, string]>(
    "SELECT * FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted_at IS NULL",
  );
  const deleteEndpoint = db.query(
    "UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ? AND account_id = ? AND deleted_at IS NULL",
  );

  const purgeDeleted = db.query(
    `DELETE FROM webhook_endpoints WHERE id IN (
       SELECT id FROM webhook_endpoints e WHERE e.deleted_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id)
        LIMIT ?)`,
  );

  return {
    insertEndpoint: (row: Omit<WebhookEndpointRow, "disabled_at" | "deleted_at">) => insertEndpoint.run({ ...row }),
    listEndpoints: (accountId: string) => listEndpoints.all(accountId),
    countEndpoints: (accountId: string) => countEndpoints.get(accountId)?.n ?? 0,
    findEndpoint: (id: string, accountId: string) => findEndpoint.get(id, accountId),
    /** Soft delete: past deliveries keep their endpoint; returns whether one was deleted. */
    deleteEndpoint: (id: string, accountId: string, now: number) => deleteEndpoint.run(now, id, accountId).changes > 0,
    /** Removes up to `limit` deleted endpoints, secret and all, once no delivery refers to them. */
    purgeDeleted: (limit: number) => purgeDeleted.run(limit).changes,
    transaction: <T>(fn: () => T): T => inTransaction(db, fn),
  };
}
