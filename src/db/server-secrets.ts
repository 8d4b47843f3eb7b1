import type { Db } from "./engine.ts";

/**
 * The server's secret stored under `name` (keys of MACs the server issues: payment link forms,
 * refund claim links); `candidate` becomes it when there is none yet. Replicas racing to store one
 * all end with the first one stored, so every replica signs and checks with the same key.
 */
export function serverSecret(db: Db, name: string, candidate: string, now: number): string {
  db.query("INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING").run(
    name,
    candidate,
    now,
  );
  return db.query<{ secret: string }, [string]>("SELECT secret FROM server_secrets WHERE name = ?").get(name)!.secret;
}
