import { openStore, storeLocationFrom } from "../../src/db/open.ts";

/**
 * Funds received by a payment, written into the server's store (its `env`: SQLite or PostgreSQL)
 * as the watcher's credit leaves them: for tests of what refunds allow, which need a payment that
 * received something but no chain. The chain's own path to a refund is tested on anvil.
 */
export function markReceived(
  env: Record<string, string>,
  paymentId: string,
  received: bigint,
  status: "confirmed" | "overpaid" | "underpaid" | "settling" = "confirmed",
): void {
  const db = openStore(storeLocationFrom(env));
  try {
    db.query("UPDATE payments SET amount_received = ?, status = ? WHERE id = ?").run(received, status, paymentId);
  } finally {
    db.close();
  }
}
