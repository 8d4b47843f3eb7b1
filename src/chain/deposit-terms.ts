/**
 * A payment's deposit address and the calls that move its funds, through the factory version
 * that made it: version 1 (settlement chain only) and version 2 (the same address on every
 * chain) for payments issued before version 3, which every new payment gets: version 2's
 * address on every chain, a fee that cannot stop the payout, and the fast-finality source
 * domains committed.
 */
import { type Address, encodeFunctionData, type Hex, zeroAddress } from "viem";
import { type DepositParams, depositArgs, depositFactoryAbi, ensureFactory, factoryAddress } from "./contracts.ts";
import {
  type DepositTerms,
  depositFactoryV2Abi,
  depositTermsArg,
  ensureFactoryV2,
  factoryV2Address,
} from "./deposit-v2.ts";
import {
  type DepositTermsV3,
  depositAddressV3,
  depositFactoryV3Abi,
  depositTermsV3Arg,
  ensureFactoryV3,
  factoryV3Address,
  fastAllowed,
} from "./deposit-v3.ts";

export type FactoryVersion = 1 | 2 | 3;

/** What a payments row stores of its deposit terms. */
export interface TermsRow {
  id: string;
  token_address: string;
  payout_address: string;
  fee_recipient: string;
  fee_bps: number;
  factory_version: FactoryVersion;
  settlement_domain: number | null;
  token_messenger: string | null;
  max_bridge_fee_bps: number | null;
  /** Version 3: the `fastDomains` bitmap, as a decimal string. */
  fast_domains: string | null;
}

/**
 * How new payments' deposit addresses bridge. Without source chains the messenger is the zero
 * address (`bridge` then always reverts, and `recover` takes any token but the settlement USDC).
 */
export interface BridgeTerms {
  settlementDomain: number;
  tokenMessenger: Address;
  maxBridgeFeeBps: number;
  /** Bit d set: `bridge` from CCTP domain d may ask for fast finality. */
  fastDomains: bigint;
}

function paramsOf(row: TermsRow): DepositParams {
  return {
    paymentId: row.id as Hex,
    token: row.token_address as Address,
    payout: row.payout_address as Address,
    feeRecipient: row.fee_recipient as Address,
    feeBps: row.fee_bps,
  };
}

/** The version 2 terms of a row; throws for a row of another version. */
export function termsOf(row: TermsRow): DepositTerms {
  if (row.factory_version !== 2 || row.settlement_domain === null || !row.token_messenger)
    throw new Error(`payment ${row.id} has no version 2 deposit terms`);
  return {
    ...paramsOf(row),
    settlementDomain: row.settlement_domain,
    tokenMessenger: row.token_messenger as Address,
    maxBridgeFeeBps: row.max_bridge_fee_bps ?? 0,
  };
}

/** The version 3 terms of a row; throws for a row of another version. */
export function termsV3Of(row: TermsRow): DepositTermsV3 {
  if (row.factory_version !== 3 || row.settlement_domain === null || !row.token_messenger || row.fast_domains === null)
    throw new Error(`payment ${row.id} has no version 3 deposit terms`);
  return {
    ...paramsOf(row),
    settlementDomain: row.settlement_domain,
    tokenMessenger: row.token_messenger as Address,
    maxBridgeFeeBps: row.max_bridge_fee_bps ?? 0,
    fastDomains: BigInt(row.fast_domains),
  };
}

/**
 * Whether USDC sent to the row's deposit address on a source chain can reach the settlement
 * chain: its address is a contract there too (version 2 and later) and commits to a messenger.
 */
export const bridgesFromSources = (row: Pick<TermsRow, "factory_version" | "token_messenger">): boolean =>
  row.factory_version >= 2 && row.token_messenger !== null && BigInt(row.token_messenger) !== 0n;

/**
 * Whether `bridge` of the row's deposit address may ask for fast finality on the chain of CCTP
 * `domain`: version 2 lets anyone choose; version 3 only from the domains its terms name.
 */
export function fastBridgeAllowed(row: Pick<TermsRow, "factory_version" | "fast_domains">, domain: number): boolean {
  if (row.factory_version === 2) return true;
  return row.factory_version === 3 && row.fast_domains !== null && fastAllowed(BigInt(row.fast_domains), domain);
}

/** The deposit address of new terms (always version 3), and the row fields that record them. */
export function issueDeposit(params: DepositParams, bridge: BridgeTerms) {
  return {
    deposit: depositAddressV3({ ...params, ...bridge }),
    fields: {
      factory_version: 3,
      settlement_domain: bridge.settlementDomain,
      token_messenger: bridge.tokenMessenger,
      max_bridge_fee_bps: bridge.maxBridgeFeeBps,
      fast_domains: bridge.fastDomains.toString(),
    },
  } as const;
}

/** The terms of new payments on a settlement chain with no source chains: nothing ever bridges. */
export const withoutBridging = (settlementDomain: number): BridgeTerms => ({
  settlementDomain,
  tokenMessenger: zeroAddress,
  maxBridgeFeeBps: 0,
  fastDomains: 0n,
});

const FACTORIES = { 1: factoryAddress, 2: factoryV2Address, 3: factoryV3Address } as const;

/** The factory that made the row's deposit address. */
export const factoryOf = (row: Pick<TermsRow, "factory_version">): Address => FACTORIES[row.factory_version];

/**
 * Deploys the factory of `version` through the deterministic deployment proxy unless it is
 * already there (a reorg may have taken it); returns its address.
 */
export function ensureFactoryFor(
  version: FactoryVersion,
  deployer: Parameters<typeof ensureFactory>[0],
): Promise<Address> {
  if (version === 3) return ensureFactoryV3(deployer);
  if (version === 2) return ensureFactoryV2(deployer);
  return ensureFactory(deployer);
}

/** `settle` of the row's deposit address, as viem's contract calls take it. */
export function settleCall(row: TermsRow) {
  if (row.factory_version === 3)
    return {
      address: factoryV3Address,
      abi: depositFactoryV3Abi,
      functionName: "settle",
      args: [depositTermsV3Arg(termsV3Of(row))],
    } as const;
  if (row.factory_version === 2)
    return {
      address: factoryV2Address,
      abi: depositFactoryV2Abi,
      functionName: "settle",
      args: [depositTermsArg(termsOf(row))],
    } as const;
  return {
    address: factoryAddress,
    abi: depositFactoryAbi,
    functionName: "settle",
    args: depositArgs(paramsOf(row)),
  } as const;
}

/** The calldata of `settle` for the row's deposit address. */
export function settleData(row: TermsRow): Hex {
  if (row.factory_version === 3)
    return encodeFunctionData({
      abi: depositFactoryV3Abi,
      functionName: "settle",
      args: [depositTermsV3Arg(termsV3Of(row))],
    });
  if (row.factory_version === 2)
    return encodeFunctionData({
      abi: depositFactoryV2Abi,
      functionName: "settle",
      args: [depositTermsArg(termsOf(row))],
    });
  return encodeFunctionData({ abi: depositFactoryAbi, functionName: "settle", args: depositArgs(paramsOf(row)) });
}

/**
 * `recover` of the row's deposit address for `otherToken` (the zero address: the native coin),
 * on whichever chain it is sent to: the funds go to the payout address there.
 */
export function recoverCall(row: TermsRow, otherToken: Address) {
  if (row.factory_version === 3)
    return {
      address: factoryV3Address,
      abi: depositFactoryV3Abi,
      functionName: "recover",
      args: [depositTermsV3Arg(termsV3Of(row)), otherToken],
    } as const;
  if (row.factory_version === 2)
    return {
      address: factoryV2Address,
      abi: depositFactoryV2Abi,
      functionName: "recover",
      args: [depositTermsArg(termsOf(row)), otherToken],
    } as const;
  return {
    address: factoryAddress,
    abi: depositFactoryAbi,
    functionName: "recover",
    args: [...depositArgs(paramsOf(row)), otherToken],
  } as const;
}

/** The calldata of `recover` for the row's deposit address. */
export function recoverData(row: TermsRow, otherToken: Address): Hex {
  if (row.factory_version === 3)
    return encodeFunctionData({
      abi: depositFactoryV3Abi,
      functionName: "recover",
      args: [depositTermsV3Arg(termsV3Of(row)), otherToken],
    });
  if (row.factory_version === 2)
    return encodeFunctionData({
      abi: depositFactoryV2Abi,
      functionName: "recover",
      args: [depositTermsArg(termsOf(row)), otherToken],
    });
  return encodeFunctionData({
    abi: depositFactoryAbi,
    functionName: "recover",
    args: [...depositArgs(paramsOf(row)), otherToken],
  });
}

/**
 * The transaction that bridges the row's deposit address's `burnToken` on a source chain
 * (versions 2 and 3; version 1 addresses exist on the settlement chain only): `to` is the row's
 * factory. A version 3 address refuses fast finality (below 2000) from a domain its terms do
 * not name (see `fastAllowed` in ./deposit-v3.ts).
 */
export function bridgeCall(
  row: TermsRow,
  burnToken: Address,
  maxFee: bigint,
  minFinality: number,
): { to: Address; data: Hex } {
  if (row.factory_version === 3)
    return {
      to: factoryV3Address,
      data: encodeFunctionData({
        abi: depositFactoryV3Abi,
        functionName: "bridge",
        args: [depositTermsV3Arg(termsV3Of(row)), burnToken, maxFee, minFinality],
      }),
    };
  if (row.factory_version === 2)
    return {
      to: factoryV2Address,
      data: encodeFunctionData({
        abi: depositFactoryV2Abi,
        functionName: "bridge",
        args: [depositTermsArg(termsOf(row)), burnToken, maxFee, minFinality],
      }),
    };
  throw new Error(`payment ${row.id} has a version 1 deposit address, which cannot bridge`);
}
