import { type Db, sql } from "./engine.ts";

/**
 * The server's secret stored under `name` (keys of MACs the server issues: payment link forms,
 * refund claim links); `candidate` becomes it when there is none yet. Replicas racing to store one
 * all end with the first one stored, so every replica signs and checks with the same key.
 */
export async function serverSecret(db: Db, name: string, candidate: string, now: number): Promise<string> {
  await db.run(
    sql`INSERT INTO server_secrets (name, secret, created_at) VALUES (${name}, ${candidate}, ${now})
         ON CONFLICT (name) DO NOTHING`,
  );
  return (await db.get<{ secret: string }>(sql`SELECT secret FROM server_secrets WHERE name = ${name}`))!.secret;
}
