import { DomainError, TooManyRequestsError, UnavailableError } from "../lib/errors.ts";
import type { AuthorizationFailure } from "./authorizations.ts";

/**
 * The x402 reason strings for the core's refusals: those of the v2 specification's §9 where it
 * names one, else the official EVM facilitator's (@x402/evm, exact/facilitator/errors.ts), so
 * a client or middleware that switches on them understands ours. The words go in
 * `invalidMessage` / `errorMessage`.
 */
export const REASON_OF: Record<AuthorizationFailure, string> = {
  expired: "invalid_exact_evm_payload_authorization_valid_before",
  not_yet_valid: "invalid_exact_evm_payload_authorization_valid_after",
  used: "invalid_exact_evm_nonce_already_used",
  canceled: "invalid_exact_evm_nonce_already_used",
  invalid_signature: "invalid_exact_evm_payload_signature",
  insufficient_funds: "insufficient_funds",
  wrong_recipient: "invalid_exact_evm_payload_recipient_mismatch",
  wrong_amount: "invalid_exact_evm_payload_authorization_value_mismatch",
  wrong_chain: "invalid_network",
  below_floor: "invalid_exact_evm_payload_authorization_value_too_low",
  reverted: "invalid_transaction_state",
  unsupported_token: "invalid_payment_requirements",
};

export const REASONS = {
  version: "invalid_x402_version",
  scheme: "unsupported_scheme",
  network: "invalid_network",
  payload: "invalid_payload",
  requirements: "invalid_payment_requirements",
  recipient: "invalid_exact_evm_payload_recipient_mismatch",
  value: "invalid_exact_evm_payload_authorization_value_mismatch",
  /** Not the spec's: a payTo the account may not use here (not its own, or a fee it cannot split). */
  payTo: "invalid_pay_to",
  /** The relayer's limits (per payment, client, account): try later. */
  limited: "rate_limited",
  /**
   * Sent and not mined within the answer's wait, with its transaction hash: the official
   * resource server (@x402/core 2.27) settles once more with the same payload on this reason,
   * and a settle of the same payload answers the same record.
   */
  pending: "settlement_pending",
  unexpectedVerify: "unexpected_verify_error",
  unexpectedSettle: "unexpected_settle_error",
} as const;

/** A refusal: the reason string and the words for a person. */
export interface Refusal {
  reason: string;
  message: string;
}

/**
 * A core refusal (AuthorizationRefused with its `code`, or a limit's TooManyRequestsError) as
 * x402 words; null for anything else, a chain out of reach included (a 503 from the error handler).
 */
export function refusalOf(error: unknown): Refusal | null {
  if (!(error instanceof DomainError) || error instanceof UnavailableError) return null;
  const code = (error as { code?: AuthorizationFailure }).code;
  const reason =
    code && REASON_OF[code]
      ? REASON_OF[code]
      : error instanceof TooManyRequestsError
        ? REASONS.limited
        : REASONS.payload;
  return { reason, message: error.message };
}
