import { type Db, sql } from "../db/engine.ts";

/** A settlement the facilitator made for an account (migrations/*\/028_x402_settlements.sql). */
export interface X402SettlementRow {
  authorization_id: string;
  account_id: string;
  payment_id: string | null;
  pay_to: string;
  payer: string;
  amount: bigint;
  resource: string | null;
  description: string | null;
  state: "pending" | "recorded" | "failed";
  created_at: number;
  updated_at: number;
}

const BIGINTS = { bigints: true };

const normalise = (row: X402SettlementRow | null): X402SettlementRow | null =>
  row && {
    ...row,
    amount: BigInt(row.amount),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };

export type X402Store = ReturnType<typeof createX402Store>;

export function createX402Store(db: Db) {
  const find = async (authorizationId: string) =>
    normalise(
      await db.get<X402SettlementRow>(
        sql`SELECT * FROM x402_settlements WHERE authorization_id = ${authorizationId}`,
        BIGINTS,
      ),
    );
  return {
    find,
    /** Records the settlement once per authorization: a second settle of the same one keeps the first row. */
    async insertOnce(row: X402SettlementRow): Promise<void> {
      await db.run(
        sql`INSERT INTO x402_settlements (authorization_id, account_id, payment_id, pay_to, payer, amount,
              resource, description, state, created_at, updated_at)
            VALUES (${row.authorization_id}, ${row.account_id}, ${row.payment_id}, ${row.pay_to}, ${row.payer},
              ${row.amount}, ${row.resource}, ${row.description}, ${row.state}, ${row.created_at}, ${row.updated_at})
            ON CONFLICT (authorization_id) DO NOTHING`,
      );
    },
    /**
     * Moves a pending settlement to `recorded` (with its payment) or `failed`, only from pending:
     * of two callers finishing the same one, exactly one gets true.
     */
    finish: async (authorizationId: string, state: "recorded" | "failed", paymentId: string | null, now: number) =>
      (await db.run(
        sql`UPDATE x402_settlements SET state = ${state}, payment_id = coalesce(${paymentId}, payment_id),
              updated_at = ${now}
             WHERE authorization_id = ${authorizationId} AND state = 'pending'`,
      )) > 0,
    /** The oldest settlements still waiting for their authorization's outcome. */
    pending: async (limit: number): Promise<X402SettlementRow[]> =>
      (
        await db.all<X402SettlementRow>(
          sql`SELECT * FROM x402_settlements WHERE state = 'pending' ORDER BY created_at LIMIT ${limit}`,
          BIGINTS,
        )
      ).map((r) => normalise(r)!),
  };
}
