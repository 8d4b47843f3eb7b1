import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Address, getAddress, type Hex } from "viem";
import type { Ask } from "./authorizations.ts";
import {
  chainIdOf,
  ExactEvmPayloadSchema,
  type PaymentPayload,
  type PaymentRequirements,
  SCHEME_EXACT,
  X402_VERSION,
} from "./protocol.ts";
import { REASONS, type Refusal } from "./reasons.ts";

const exactPayload = TypeCompiler.Compile(ExactEvmPayloadSchema);

/** What Stablegate settles: USDC of one chain. */
export interface Served {
  chainId: number;
  chainName: string;
  usdc: Address;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The checks that need no chain, in the order the official EVM facilitator makes them (version,
 * scheme, network, then the scheme's payload), and the core's question built from what passes:
 * `to` and `value` as the requirements state them, which the core compares with what was signed.
 */
export function askOf(
  served: Served,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): { ok: true; ask: Ask; payer: Address } | ({ ok: false; payer?: string } & Refusal) {
  const payer = fromOf(payload);
  const refuse = (reason: string, message: string) => ({ ok: false as const, reason, message, payer });
  if (payload.x402Version !== X402_VERSION) return refuse(REASONS.version, "only version 2 of x402 is served here");
  if (payload.accepted.scheme !== SCHEME_EXACT || requirements.scheme !== SCHEME_EXACT)
    return refuse(REASONS.scheme, 'only the "exact" scheme is served here');
  const chainId = chainIdOf(requirements.network);
  if (payload.accepted.network !== requirements.network || chainId !== served.chainId)
    return refuse(REASONS.network, `only ${served.chainName} (eip155:${served.chainId}) is served here`);
  if (!same(requirements.asset, served.usdc) || !same(payload.accepted.asset, requirements.asset))
    return refuse(REASONS.requirements, `the asset must be USDC on ${served.chainName} (${served.usdc})`);
  if (!exactPayload.Check(payload.payload))
    return refuse(REASONS.payload, "the payload must be an EIP-3009 authorization and its signature");
  const { authorization: a, signature } = payload.payload;
  if (!/^0x[0-9a-fA-F]{40}$/.test(requirements.payTo)) return refuse(REASONS.requirements, "payTo must be an address");
  return {
    ok: true,
    payer: getAddress(a.from),
    ask: {
      chainId,
      authorization: {
        from: getAddress(a.from),
        to: getAddress(a.to),
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce.toLowerCase() as Hex,
      },
      signature: signature as Hex,
      expect: { to: getAddress(requirements.payTo), value: BigInt(requirements.amount) },
    },
  };
}

/** The payer the payload names, for answers that report one even when refusing. */
function fromOf(payload: PaymentPayload): string | undefined {
  const from = (payload.payload as { authorization?: { from?: unknown } }).authorization?.from;
  return typeof from === "string" && /^0x[0-9a-fA-F]{40}$/.test(from) ? getAddress(from) : undefined;
}
