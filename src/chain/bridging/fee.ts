import { FINALITY } from "../redeeming/quote.ts";

/** What one bridge() call offers CCTP: its maxFee and the finality it asks to be attested at. */
export interface BridgeFeeTerms {
  maxFee: bigint;
  minFinality: number;
}

const STANDARD: BridgeFeeTerms = { maxFee: 0n, minFinality: FINALITY.standard };

/**
 * The fee terms for burning `amount`: fast at ceil(amount * fastBps / 10000) (Circle's quoted
 * rate, possibly fractional to 1/100 bp), or standard (free) when the operator chose it for the
 * chain (`fastBps` null), when that fee would pass the bound the deposit address commits to
 * (`maxBridgeFeeBps`, which the factory enforces), or when it would eat the whole amount.
 */
export function bridgeFeeTerms(amount: bigint, fastBps: number | null, maxBridgeFeeBps: number): BridgeFeeTerms {
  if (fastBps === null || !(fastBps >= 0)) return STANDARD;
  const scaled = amount * BigInt(Math.ceil(fastBps * 100));
  const maxFee = (scaled + 999_999n) / 1_000_000n;
  if (maxFee * 10_000n > amount * BigInt(maxBridgeFeeBps) || maxFee >= amount) return STANDARD;
  return { maxFee, minFinality: FINALITY.fast };
}
