/**
 * What x402 uses of the core's EIP-3009 authorizations (src/chain/authorizations/): named here
 * so this capability states its needs.
 */
import type { Authorizations } from "../chain/authorizations/types.ts";

export type {
  AuthorizationFailure,
  AuthorizationRecord,
  TransferAuthorization,
} from "../chain/authorizations/types.ts";

export type AuthorizationsApi = Pick<
  Authorizations,
  "domain" | "verify" | "accept" | "outcome" | "find" | "forPayment"
>;
export type Ask = Parameters<Authorizations["verify"]>[0];
