/**
 * What x402 uses of the core's EIP-3009 authorizations (src/chain/authorizations/, the interface
 * in PLAN-28.md), named here so this capability states its needs and its tests can see them.
 */
import type { Address, Hex } from "viem";

export interface TransferAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export type AuthorizationFailure =
  | "expired"
  | "not_yet_valid"
  | "used"
  | "canceled"
  | "invalid_signature"
  | "insufficient_funds"
  | "wrong_recipient"
  | "wrong_amount"
  | "wrong_chain"
  | "below_floor"
  | "reverted"
  | "unsupported_token";

export interface AuthorizationRecord {
  id: string;
  payment_id: string | null;
  account_id: string;
  chain_id: number;
  from: Address;
  to: Address;
  value: bigint;
  source: "checkout" | "x402" | "facilitator";
  status: "pending" | "submitted" | "succeeded" | "failed";
  tx_hash: Hex | null;
  failure: null | { code: AuthorizationFailure; message: string };
}

export interface Ask {
  chainId: number;
  authorization: TransferAuthorization;
  signature: Hex;
  expect: { to: Address; value: bigint };
}

export interface AuthorizationsApi {
  domain(chainId: number): Promise<{ name: string; version: string; chainId: number; verifyingContract: Address }>;
  verify(ask: Ask): Promise<{ ok: true; payer: Address } | { ok: false; code: AuthorizationFailure; message: string }>;
  accept(
    ask: Ask & {
      paymentId: string | null;
      accountId: string;
      source: AuthorizationRecord["source"];
      client: string;
      resource?: string;
    },
  ): Promise<AuthorizationRecord>;
  outcome(id: string, deadlineMs: number): Promise<AuthorizationRecord>;
  find(id: string): Promise<AuthorizationRecord | null>;
}
