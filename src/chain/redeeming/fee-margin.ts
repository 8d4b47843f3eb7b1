import type { Hex } from "viem";
import { decodeBurnMessage } from "../cctp-message.ts";
import type { BurnRow } from "./store.ts";

/**
 * What the quote's fee margin minted beyond the amount due, over a payment's attested burns.
 * A quoted burn covers `maxFee` in full (25% above the quoted rate, see burnFor), so it mints
 * `maxFee - feeExecuted` more than was due. Only the margin a quote would add counts: a quarter
 * of the fee charged, plus a millionth of the burn for the rate's rounding; a payer's own burn
 * with a larger maxFee is a real overpayment and stays one.
 */
export function feeMarginExcess(burns: readonly BurnRow[]): bigint {
  let total = 0n;
  for (const burn of burns) {
    if (burn.message === null || (burn.state !== "redeeming" && burn.state !== "redeemed")) continue;
    const message = decodeBurnMessage(burn.message as Hex);
    if (!message || message.maxFee <= message.feeExecuted) continue;
    const margin = message.maxFee - message.feeExecuted;
    const quoted = ceilDiv(message.feeExecuted, 4n) + ceilDiv(message.amount, 1_000_000n) + 1n;
    total += margin < quoted ? margin : quoted;
  }
  return total;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
