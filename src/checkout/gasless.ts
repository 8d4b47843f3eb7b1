import { type Address, getAddress, type Hex } from "viem";
import { EIP712_DOMAIN_TYPE, TRANSFER_WITH_AUTHORIZATION_TYPES } from "../chain/authorizations/token.ts";
import type { AuthorizationRecord, Authorizations, TransferAuthorization } from "../chain/authorizations/types.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError, ValidationError } from "../lib/errors.ts";
import { formatExact } from "../lib/money.ts";
import { AWAITING_FUNDS } from "../payments/states.ts";
import type { PaymentRow } from "../payments/store.ts";
import { amountDue } from "../payments/view.ts";

/** How long the authorization the page asks for stays valid: time to sign, send and mine, not to hoard. */
export const GASLESS_WINDOW_SECONDS = 600;
/** validAfter a minute back: the chain's clock may trail the server's, and a block must find it valid. */
const VALID_AFTER_SLACK_SECONDS = 60;
/** Unix seconds this far off are refused before anything else: they cannot be stored, nor be meant. */
const MAX_SECONDS = 2n ** 40n;

/** What the page posts, as the wire has it (numbers as decimal strings). */
export interface PostedAuthorization {
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: string;
}

/**
 * The checkout's "pay without gas" (docs/gasless.md): what a payment's page offers to sign, and
 * taking what it signed. The rules of the authorization itself are the chain side's
 * (src/chain/authorizations/); here a payment's due amount and deposit address are what is expected.
 */
export function createGasless(deps: { authorizations: Authorizations; clock: Clock; chainName: string }) {
  const { authorizations, clock } = deps;

  /** Why this payment cannot be paid by signature now, or null. */
  async function unavailable(row: PaymentRow): Promise<string | null> {
    if (!AWAITING_FUNDS.includes(row.status)) return "This payment is not waiting for funds";
    const due = amountDue(row);
    if (due === 0n) return "Nothing is left to pay on this payment";
    try {
      const floor = await authorizations.floor(row.chain_id);
      if (due < floor)
        return `Payments without gas start at ${formatExact(floor)} USDC; pay this one with a plain transfer`;
      await authorizations.domain(row.chain_id);
    } catch (error) {
      if (error instanceof ValidationError) return error.message;
      throw error;
    }
    return null;
  }

  async function offer(row: PaymentRow) {
    const reason = await unavailable(row);
    const floor = await floorOrNull(row);
    const nowS = Math.floor(clock.now() / 1000);
    const domain = reason === null ? await authorizations.domain(row.chain_id) : null;
    return {
      available: reason === null,
      reason,
      chain: deps.chainName,
      chain_id: row.chain_id,
      floor: floor === null ? null : formatExact(floor),
      typed_data: domain && {
        domain,
        types: { EIP712Domain: EIP712_DOMAIN_TYPE, ...TRANSFER_WITH_AUTHORIZATION_TYPES },
        primaryType: "TransferWithAuthorization" as const,
        message: {
          to: getAddress(row.deposit_address),
          value: amountDue(row).toString(),
          validAfter: String(nowS - VALID_AFTER_SLACK_SECONDS),
          validBefore: String(nowS + GASLESS_WINDOW_SECONDS),
        },
      },
    };
  }

  async function floorOrNull(row: PaymentRow): Promise<bigint | null> {
    try {
      return await authorizations.floor(row.chain_id);
    } catch (error) {
      if (error instanceof DomainError) return null;
      throw error;
    }
  }

  /** Takes a payer's signed authorization for this payment; refusals in words (400), limits (429). */
  async function submit(row: PaymentRow, posted: PostedAuthorization, client: string): Promise<AuthorizationRecord> {
    const authorization = parse(posted.authorization);
    // Posted again (a retry, a replay) once the payment is paid: accept answers the record it made.
    const known = await authorizations.findSigned(row.chain_id, authorization.from, authorization.nonce);
    const reason = known ? null : await unavailable(row);
    if (reason !== null) throw new ValidationError(reason);
    return authorizations.accept({
      chainId: row.chain_id,
      authorization,
      signature: posted.signature as Hex,
      paymentId: row.id,
      accountId: row.account_id,
      expect: { to: getAddress(row.deposit_address), value: amountDue(row) },
      source: "checkout",
      client,
    });
  }

  return { offer, submit };
}

function parse(a: PostedAuthorization["authorization"]): TransferAuthorization {
  const validAfter = BigInt(a.validAfter);
  const validBefore = BigInt(a.validBefore);
  if (validAfter > MAX_SECONDS || validBefore > MAX_SECONDS)
    throw new ValidationError("authorization validAfter and validBefore must be unix times in seconds");
  return {
    from: getAddress(a.from) as Address,
    to: getAddress(a.to) as Address,
    value: BigInt(a.value),
    validAfter,
    validBefore,
    nonce: a.nonce.toLowerCase() as Hex,
  };
}

export type Gasless = ReturnType<typeof createGasless>;
