import type { Address, Hex } from "viem";
import type { AuthorizationRow } from "./store.ts";
import type { AuthorizationFailure, AuthorizationRecord } from "./types.ts";

/** The record as the service answers it: money as bigint, the failure in one field. */
export function recordOf(row: AuthorizationRow): AuthorizationRecord {
  return {
    id: row.id,
    payment_id: row.payment_id,
    account_id: row.account_id,
    chain_id: row.chain_id,
    token: row.token as Address,
    from: row.from_address as Address,
    to: row.to_address as Address,
    value: BigInt(row.value),
    valid_before: row.valid_before,
    nonce: row.nonce as Hex,
    source: row.source,
    status: row.status,
    tx_hash: (row.tx_hash as Hex | null) ?? null,
    failure:
      row.failure_code === null
        ? null
        : { code: row.failure_code as AuthorizationFailure, message: row.failure_message ?? row.failure_code },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
