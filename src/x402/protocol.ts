/**
 * The x402 v2 messages (coinbase/x402 specs/x402-specification-v2.md §5 and §7, the `exact`
 * scheme on EVM of specs/schemes/exact/scheme_exact_evm.md), as TypeBox schemas checked where
 * they arrive. Only what Stablegate serves is narrowed: version 2, scheme `exact`, EIP-3009 on
 * EVM. Unknown members pass through, as the spec lets extensions add them.
 */
import { type Static, Type } from "@sinclair/typebox";

export const X402_VERSION = 2;

const address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", maxLength: 42 });
const uintText = Type.String({ pattern: "^[0-9]{1,78}$" });
const open = { additionalProperties: true } as const;

export const ResourceInfoSchema = Type.Object(
  {
    url: Type.String({ maxLength: 2048 }),
    description: Type.Optional(Type.String({ maxLength: 2048 })),
    mimeType: Type.Optional(Type.String({ maxLength: 256 })),
  },
  open,
);

export const PaymentRequirementsSchema = Type.Object(
  {
    scheme: Type.String({ maxLength: 64 }),
    network: Type.String({ maxLength: 64 }),
    amount: uintText,
    asset: Type.String({ maxLength: 128 }),
    payTo: Type.String({ maxLength: 128 }),
    maxTimeoutSeconds: Type.Number(),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  open,
);

/** EIP-3009 TransferWithAuthorization as the `exact` EVM payload carries it: numbers as decimal text. */
export const AuthorizationSchema = Type.Object(
  {
    from: address,
    to: address,
    value: uintText,
    validAfter: uintText,
    validBefore: uintText,
    nonce: Type.String({ pattern: "^0x[0-9a-fA-F]{64}$" }),
  },
  open,
);

export const ExactEvmPayloadSchema = Type.Object(
  {
    // 65 bytes for an EOA; longer for a smart wallet's (ERC-1271/6492), which the token checks itself.
    signature: Type.String({ pattern: "^0x[0-9a-fA-F]{130,4096}$" }),
    authorization: AuthorizationSchema,
  },
  open,
);

export const PaymentPayloadSchema = Type.Object(
  {
    x402Version: Type.Number(),
    resource: Type.Optional(ResourceInfoSchema),
    accepted: PaymentRequirementsSchema,
    payload: Type.Record(Type.String(), Type.Unknown()),
    extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  open,
);

/** The body of the facilitator's POST /verify and POST /settle (§7.1, §7.2). */
export const FacilitatorRequestSchema = Type.Object(
  {
    x402Version: Type.Number(),
    paymentPayload: PaymentPayloadSchema,
    paymentRequirements: PaymentRequirementsSchema,
  },
  open,
);

export type ResourceInfo = Static<typeof ResourceInfoSchema>;
export type PaymentRequirements = Static<typeof PaymentRequirementsSchema>;
export type PaymentPayload = Static<typeof PaymentPayloadSchema>;
export type ExactEvmPayload = Static<typeof ExactEvmPayloadSchema>;
export type FacilitatorRequest = Static<typeof FacilitatorRequestSchema>;

export interface PaymentRequired {
  x402Version: number;
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
  extensions?: Record<string, unknown>;
}

/** §5.4, with `invalidMessage` as the official facilitator client reads it: the reason in words. */
export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

/** §5.3; `transaction` is "" when nothing was settled. */
export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
  amount?: string;
}

export interface SupportedResponse {
  kinds: Array<{ x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }>;
  extensions: string[];
  signers: Record<string, string[]>;
}

/** CAIP-2 name of an EVM chain, as x402 v2 names networks (§11.1). */
export const caip2 = (chainId: number) => `eip155:${chainId}`;

/** The chain id of an `eip155:<id>` network, or null for anything else. */
export function chainIdOf(network: string): number | null {
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(network);
  return match ? Number(match[1]) : null;
}

export const SCHEME_EXACT = "exact";
