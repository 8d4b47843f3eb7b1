/**
 * A payment's deposit address and the calls that move its funds, through the factory version
 * that made it: version 1 (settlement chain only) for payments issued before any source chain
 * was enabled, version 2 (the same address on every chain) since.
 */
import { type Address, encodeFunctionData, type Hex } from "viem";
import { type DepositParams, depositAddress, depositArgs, depositFactoryAbi, factoryAddress } from "./contracts.ts";
import {
  type DepositTerms,
  depositAddressV2,
  depositFactoryV2Abi,
  depositTermsArg,
  factoryV2Address,
} from "./deposit-v2.ts";

/** What a payments row stores of its deposit terms. */
export interface TermsRow {
  id: string;
  token_address: string;
  payout_address: string;
  fee_recipient: string;
  fee_bps: number;
  factory_version: 1 | 2;
  settlement_domain: number | null;
  token_messenger: string | null;
  max_bridge_fee_bps: number | null;
}

/** How new payments' deposit addresses bridge, when source chains are enabled (else version 1). */
export interface BridgeTerms {
  settlementDomain: number;
  tokenMessenger: Address;
  maxBridgeFeeBps: number;
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

/** The version 2 terms of a row; throws for a version 1 row, which has none. */
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

/**
 * The deposit address of new terms, and the row fields that record them: version 2 when
 * `bridge` is given, else version 1.
 */
export function issueDeposit(params: DepositParams, bridge: BridgeTerms | null) {
  if (!bridge)
    return {
      deposit: depositAddress(params),
      fields: { factory_version: 1, settlement_domain: null, token_messenger: null, max_bridge_fee_bps: null },
    } as const;
  return {
    deposit: depositAddressV2({ ...params, ...bridge }),
    fields: {
      factory_version: 2,
      settlement_domain: bridge.settlementDomain,
      token_messenger: bridge.tokenMessenger,
      max_bridge_fee_bps: bridge.maxBridgeFeeBps,
    },
  } as const;
}

/** The factory that made the row's deposit address. */
export const factoryOf = (row: Pick<TermsRow, "factory_version">): Address =>
  row.factory_version === 2 ? factoryV2Address : factoryAddress;

/** `settle` of the row's deposit address, as viem's contract calls take it. */
export function settleCall(row: TermsRow) {
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
  const call = settleCall(row);
  return call.abi === depositFactoryV2Abi
    ? encodeFunctionData({ abi: depositFactoryV2Abi, functionName: "settle", args: [depositTermsArg(termsOf(row))] })
    : encodeFunctionData({ abi: depositFactoryAbi, functionName: "settle", args: depositArgs(paramsOf(row)) });
}

/**
 * `recover` of the row's deposit address for `otherToken` (the zero address: the native coin),
 * on whichever chain it is sent to: the funds go to the payout address there.
 */
export function recoverCall(row: TermsRow, otherToken: Address) {
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
  return row.factory_version === 2
    ? encodeFunctionData({
        abi: depositFactoryV2Abi,
        functionName: "recover",
        args: [depositTermsArg(termsOf(row)), otherToken],
      })
    : encodeFunctionData({
        abi: depositFactoryAbi,
        functionName: "recover",
        args: [...depositArgs(paramsOf(row)), otherToken],
      });
}
