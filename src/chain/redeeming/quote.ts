import { type Address, encodeFunctionData, erc20Abi, type Hex, zeroHash } from "viem";
import { formatExact } from "../../lib/money.ts";
import { tokenMessengerAbi } from "../cctp-abi.ts";
import { addressToBytes32 } from "../cctp-message.ts";

/** Fast transfers are attested after soft finality, standard ones after hard finality. */
export const FINALITY = { fast: 1000, standard: 2000 } as const;

const PPM = 1_000_000n;
/** CCTP fees are single-digit basis points; anything near this is a broken fee answer. */
export const MAX_FEE_BPS = 1_000;

/**
 * What to burn so at least `due` is minted. The fee is charged on the burned amount; `maxFee`
 * allows 25% above the quoted rate, so a fee that rises before the burn still leaves the
 * transfer fast, and the burn covers `maxFee` in full, so the payment is never left short by
 * a rounding or a fee change (at worst it is overpaid by that margin).
 */
export function burnFor(due: bigint, feeBps: number): { burn: bigint; maxFee: bigint } {
  if (!(feeBps >= 0 && feeBps < MAX_FEE_BPS)) throw new RangeError(`unusable CCTP fee ${feeBps} bps`);
  if (feeBps === 0) return { burn: due, maxFee: 0n };
  const ratePpm = BigInt(Math.ceil(feeBps * 100 * 1.25)); // bps -> parts per million, with margin
  let burn = (due * PPM + (PPM - ratePpm) - 1n) / (PPM - ratePpm);
  while (burn - ceilDiv(burn * ratePpm, PPM) < due) burn++;
  return { burn, maxFee: burn - due };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

export interface WalletCall {
  to: Address;
  data: Hex;
  value: "0";
  description: string;
}

/** The payer's two calls on the source chain: approve the messenger, then burn to our deposit address. */
export function burnCalls(args: {
  sourceUsdc: Address;
  tokenMessenger: Address;
  destinationDomain: number;
  depositAddress: Address;
  burn: bigint;
  maxFee: bigint;
  finality: number;
}): WalletCall[] {
  return [
    {
      to: args.sourceUsdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [args.tokenMessenger, args.burn] }),
      value: "0",
      description: `approve ${formatExact(args.burn)} USDC for the CCTP TokenMessengerV2`,
    },
    {
      to: args.tokenMessenger,
      data: encodeFunctionData({
        abi: tokenMessengerAbi,
        functionName: "depositForBurn",
        args: [
          args.burn,
          args.destinationDomain,
          addressToBytes32(args.depositAddress),
          args.sourceUsdc,
          zeroHash,
          args.maxFee,
          args.finality,
        ],
      }),
      value: "0",
      description: `burn ${formatExact(args.burn)} USDC, minted to ${args.depositAddress} on the settlement chain`,
    },
  ];
}
