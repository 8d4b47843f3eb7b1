import type { Address, Hex } from "viem";

/** One EIP-3009 TransferWithAuthorization, as signed. */
export interface TransferAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  /** Unix seconds. */
  validAfter: bigint;
  validBefore: bigint;
  /** bytes32, chosen by the signer. */
  nonce: Hex;
}

export type AuthorizationStatus = "pending" | "submitted" | "succeeded" | "failed";

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
  /** "auth_..." */
  id: string;
  /** Null only for a facilitator settlement to a payout address before x402 records its payment. */
  payment_id: string | null;
  account_id: string;
  chain_id: number;
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
  valid_before: number;
  nonce: Hex;
  source: "checkout" | "x402" | "facilitator";
  status: AuthorizationStatus;
  /** The transaction that moved the funds (ours, or a stranger's that used the same authorization). */
  tx_hash: Hex | null;
  /** `message`: words a payer understands. */
  failure: null | { code: AuthorizationFailure; message: string };
  created_at: number;
  updated_at: number;
}

export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export type Verdict = { ok: true; payer: Address } | { ok: false; code: AuthorizationFailure; message: string };

export interface AcceptAsk {
  chainId: number;
  authorization: TransferAuthorization;
  signature: Hex;
  paymentId: string | null;
  accountId: string;
  expect: { to: Address; value: bigint };
  source: AuthorizationRecord["source"];
  /** The client's key for the per-client limit, e.g. its address. */
  client: string;
  resource?: string;
}

/** EIP-3009 `transferWithAuthorization` payments the relayer submits (PLAN-28.md is the contract). */
export interface Authorizations {
  /** The token's EIP-712 domain, read from the token itself (name(), version()), cached per token. */
  domain(chainId: number): Promise<TokenDomain>;
  /** The smallest value the relayer will submit on this chain now (micro-USDC). */
  floor(chainId: number): Promise<bigint>;
  /**
   * Checks an authorization without storing or sending anything: signature (recovers `from`),
   * validity window (with a margin for the time to mine), nonce unused on chain, payer's balance,
   * `to` and `value` as expected, the floor, and a simulation of the call from the relayer.
   */
  verify(ask: {
    chainId: number;
    authorization: TransferAuthorization;
    signature: Hex;
    expect: { to: Address; value: bigint };
  }): Promise<Verdict>;
  /**
   * verify(), then the limits (per payment, per client, per account), then stores it, idempotent
   * on (chain, token, from, nonce): the same authorization accepted twice answers the same record.
   * Wakes the submitter. Throws ValidationError / TooManyRequestsError with the failure in words;
   * a refusal's `code` is on the error (AuthorizationRefused).
   */
  accept(ask: AcceptAsk): Promise<AuthorizationRecord>;
  /** Resolves once the record has succeeded or failed, or at the deadline with what it is then. */
  outcome(id: string, deadlineMs: number): Promise<AuthorizationRecord>;
  find(id: string): Promise<AuthorizationRecord | null>;
  /** The record of this signed authorization (the token's key for it: chain, from, nonce), if accepted. */
  findSigned(chainId: number, from: Address, nonce: Hex): Promise<AuthorizationRecord | null>;
  forPayment(paymentId: string): Promise<AuthorizationRecord[]>;
}
