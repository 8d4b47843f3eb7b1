import { isoMillis } from "../../lib/clock.ts";
import { formatExact } from "../../lib/money.ts";
import { revertOf } from "../rpc-errors.ts";
import type { AuthorizationFailure } from "./types.ts";

/** A time as a payer reads it: "14:02 UTC", with the date when it is not today's. */
export function utcTime(ms: number, nowMs: number): string {
  // Past what a Date holds (a uint256 may say anything): no clock time means anything there.
  if (!(Math.abs(ms) <= 8.64e15)) return "a time far in the future";
  const at = isoMillis(ms);
  const sameDay = at.slice(0, 10) === isoMillis(nowMs).slice(0, 10);
  return `${sameDay ? "" : `${at.slice(0, 10)} `}${at.slice(11, 16)} UTC`;
}

/** The words a payer reads for each refusal; `detail` carries what the message names. */
export const say = {
  expired: (validBeforeS: number, nowMs: number) =>
    `This authorization expired at ${utcTime(validBeforeS * 1000, nowMs)}; sign a new one`,
  expiresTooSoon: (validBeforeS: number, nowMs: number) =>
    `This authorization expires at ${utcTime(validBeforeS * 1000, nowMs)}, ` +
    "too soon to be sent and mined; sign a new one",
  notYetValid: (validAfterS: number, nowMs: number) =>
    `This authorization is valid only after ${utcTime(validAfterS * 1000, nowMs)}; sign one valid now`,
  used: () => "This authorization was already used",
  canceled: () => "This authorization was canceled by its signer",
  invalidSignature: () =>
    "The signature does not match this authorization and wallet; sign again with the wallet that pays",
  /**
   * Only to whoever posted the authorization (the refusal's answer), never stored: the public view
   * of a record shows no payer data the page did not send, and a balance is not that.
   */
  insufficientFunds: (held: bigint, needed: bigint) =>
    `Your wallet holds ${formatExact(held)} USDC; this payment needs ${formatExact(needed)} USDC`,
  /** What a record that failed for want of funds says, in the public view too. */
  fundsGone: (needed: bigint) =>
    `The wallet no longer holds the ${formatExact(needed)} USDC this payment needs; sign again once it does`,
  paidOtherwise: () =>
    "This payment was paid another way before this authorization was sent; nothing was taken from the wallet",
  onItsWay: () =>
    "A payment by signature for this payment is already on its way; wait for it, or pay with a plain transfer",
  wrongRecipient: (to: string) => `This authorization pays ${to}, not this payment's address; sign the one offered`,
  wrongAmount: (value: bigint, due: bigint) =>
    `This authorization is for ${formatExact(value)} USDC but ${formatExact(due)} USDC is due; sign the one offered`,
  wrongChain: (chainId: number, expected: string) =>
    `This authorization is for chain ${chainId}; this payment is paid on ${expected}`,
  belowFloor: (floor: bigint) =>
    `Payments without gas start at ${formatExact(floor)} USDC; pay this one with a plain transfer`,
  unsupportedToken: () => "This token does not support payments by signature here; pay with a plain transfer",
  tooCostly: () => "Sending this payment would cost more gas than the server pays for one; pay with a plain transfer",
  blocked: () => "USDC does not allow transfers from or to this wallet; pay from another wallet",
  paused: () => "USDC transfers are paused on this chain right now; try again later",
  reverted: (reason: string) => `The transfer would fail on chain (${reason}); pay with a plain transfer instead`,
};

/**
 * A revert of `transferWithAuthorization` in a payer's words, from FiatToken's revert strings
 * (contracts/test/TestUSDC.sol has the same), with the code it stands for.
 */
export function revertVerdict(
  error: unknown,
  ctx: { validBefore: number; validAfter: number; held?: bigint; needed: bigint; nowMs: number },
): { code: AuthorizationFailure; message: string } | null {
  const revert = revertOf(error);
  if (!revert) return null;
  const reason = revert.reason ?? revert.data?.errorName ?? revert.shortMessage;
  if (/invalid signature/i.test(reason)) return { code: "invalid_signature", message: say.invalidSignature() };
  if (/not yet valid/i.test(reason))
    return { code: "not_yet_valid", message: say.notYetValid(ctx.validAfter, ctx.nowMs) };
  if (/is expired/i.test(reason)) return { code: "expired", message: say.expired(ctx.validBefore, ctx.nowMs) };
  if (/used or canceled/i.test(reason)) return { code: "used", message: say.used() };
  if (/exceeds balance/i.test(reason))
    return { code: "insufficient_funds", message: say.insufficientFunds(ctx.held ?? 0n, ctx.needed) };
  if (/blacklisted/i.test(reason)) return { code: "reverted", message: say.blocked() };
  if (/paused/i.test(reason)) return { code: "reverted", message: say.paused() };
  return { code: "reverted", message: say.reverted(reason) };
}
