import { isoMillis } from "../../lib/clock.ts";
import type { RecoveryRow } from "./store.ts";

/**
 * The merchant's recovery object. `amount_units` is what the Recovered event moved, in the
 * token's smallest units (a decimal string: tokens have any number of decimals and amounts past
 * 2^53), with `decimals` to read it when the token says; both null until the transaction is
 * confirmed. `error` says why a failed recovery failed, and only then.
 */
export function recoveryView(row: RecoveryRow, chainName: string) {
  return {
    id: row.id,
    object: "recovery",
    payment: row.payment_id,
    chain: chainName,
    chain_id: row.chain_id,
    token: row.token,
    state: row.state,
    amount_units: row.amount_units,
    decimals: row.decimals,
    payout_address: row.payout_address,
    tx_hash: row.tx_hash,
    error: row.state === "failed" ? row.error : null,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}
