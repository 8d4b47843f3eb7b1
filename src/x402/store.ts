import { type Db, sql } from "../db/engine.ts";
import type { Speed } from "../lib/speed.ts";

/** A settlement the facilitator made for an account (migrations/*\/028_x402_settlements.sql). */
export interface X402SettlementRow {
  authorization_id: string;
  account_id: string;
  payment_id: string | null;
  pay_to: string;
  payer: string;
  amount: bigint;
  /** The transfer that paid it, once a payout-address settlement's payment is made. */
  tx_hash: string | null;
  resource: string | null;
  description: string | null;
  /**
   * pending: the authorization's outcome not known yet; failed; recorded: linked to its payment
   * (a deposit address's) or its payment confirmed (the payout address's); settling: the payout
   * address's payment made and settling, its transfer not yet as deep as the speed policy asks.
   */
  state: "pending" | "settling" | "recorded" | "failed";
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
              tx_hash, resource, description, state, created_at, updated_at)
            VALUES (${row.authorization_id}, ${row.account_id}, ${row.payment_id}, ${row.pay_to}, ${row.payer},
              ${row.amount}, ${row.tx_hash}, ${row.resource}, ${row.description}, ${row.state}, ${row.created_at},
              ${row.updated_at})
            ON CONFLICT (authorization_id) DO NOTHING`,
      );
    },
    /**
     * Moves a pending settlement on: `recorded` (a deposit address's, with its payment),
     * `settling` (the payout address's, with the payment made of it and the transfer's hash) or
     * `failed`, only from pending: of two callers finishing the same one, exactly one gets true.
     */
    finish: async (
      authorizationId: string,
      state: "recorded" | "settling" | "failed",
      paymentId: string | null,
      now: number,
      txHash: string | null = null,
    ) =>
      (await db.run(
        sql`UPDATE x402_settlements SET state = ${state}, payment_id = coalesce(${paymentId}, payment_id),
              tx_hash = coalesce(${txHash}, tx_hash), updated_at = ${now}
             WHERE authorization_id = ${authorizationId} AND state = 'pending'`,
      )) > 0,
    /**
     * A settling settlement's payment is confirmed: `recorded`, only from settling, so of two
     * rounds or two replicas confirming the same one, exactly one gets true (and confirms it).
     */
    confirm: async (authorizationId: string, now: number) =>
      (await db.run(
        sql`UPDATE x402_settlements SET state = 'recorded', updated_at = ${now}
             WHERE authorization_id = ${authorizationId} AND state = 'settling'`,
      )) > 0,
    /** Payout-address settlements whose payment is settling, the oldest first, with the payment's speed policy. */
    settling: async (limit: number): Promise<Array<X402SettlementRow & { speed: Speed }>> =>
      (
        await db.all<X402SettlementRow & { speed: Speed }>(
          sql`SELECT x.*, p.speed FROM x402_settlements x JOIN payments p ON p.id = x.payment_id
               WHERE x.state = 'settling' ORDER BY x.created_at LIMIT ${limit}`,
          BIGINTS,
        )
      ).map((r) => ({ ...normalise(r)!, speed: r.speed })),
    /** Runs `fn` in one transaction (no network call inside). */
    transaction: <T>(fn: () => Promise<T>): Promise<T> => db.transaction(fn),
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
