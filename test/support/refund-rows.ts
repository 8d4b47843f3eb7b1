import { sql } from "../../src/db/engine.ts";
import { withServerStore } from "./server-store.ts";

/**
 * Funds received by a payment, written into the server's store (its `env`: SQLite or PostgreSQL)
 * as the watcher's credit leaves them: for tests of what refunds allow, which need a payment that
 * received something but no chain. The chain's own path to a refund is tested on anvil.
 */
export async function markReceived(
  env: Record<string, string>,
  paymentId: string,
  received: bigint,
  status: "confirmed" | "overpaid" | "underpaid" | "settling" = "confirmed",
): Promise<void> {
  await withServerStore(env, (db) =>
    db.run(sql`UPDATE payments SET amount_received = ${received}, status = ${status} WHERE id = ${paymentId}`),
  );
}
