import type { Address } from "viem";
import { CHAINS } from "../lib/chains.ts";
import { type BridgeTerms, withoutBridging } from "./deposit-terms.ts";
import { fastDomainsOf } from "./deposit-v3.ts";

/** One source chain of cross-chain funding, as src/config.ts reads STABLEGATE_CCTP_SOURCES. */
export interface CctpSource {
  name: string;
  chainId: number;
  domain: number;
  usdc: Address;
  rpcUrl: string;
  /** Typical seconds from burn to attestation; fast is null where the chain cannot be a fast source. */
  fastSeconds: number | null;
  standardSeconds: number;
  /** Blocks on top of a plain transfer to a deposit address before it is credited. */
  confirmations: number;
  /** How often its watcher polls. */
  pollIntervalMs: number;
  /** How deposit addresses' funds on it are bridged: fast where Circle offers it, unless the operator says standard. */
  finality: "fast" | "standard";
  /** Micro-USDC below which a deposit address's funds here are not bridged at the relayer's cost. */
  sweepFloor: bigint;
}

/** Cross-chain funding's slice of the configuration (read in src/config.ts: crossChainConfig). */
export interface CrossChainConfig {
  sources: CctpSource[];
  apiUrl: string;
  /** CCTP domain of the settlement chain (the destination). */
  domain: number;
  tokenMessenger: Address;
  messageTransmitter: Address;
  /**
   * Bound on the CCTP fee a new payment's deposit address may pay to bridge itself to the
   * settlement chain, in basis points; committed in the address's salt (DepositFactoryV2, V3).
   */
  maxBridgeFeeBps: number;
  /**
   * The settlement chain's sweep floor: a payer's burn smaller than this (and than what is due) is
   * not redeemed at the relayer's cost.
   */
  redeemFloor: bigint;
}

/**
 * The bridge terms new payments' deposit addresses commit to (version 3, src/chain/deposit-terms.ts):
 * with source chains, the settlement domain, messenger and fee bound, and fast finality from
 * exactly the sources bridged fast (fast-capable and not in STABLEGATE_BRIDGE_STANDARD), so
 * nobody can make an address pay the fast fee from anywhere else. Without source chains, no
 * messenger: the addresses never bridge.
 */
export function newDepositTerms(crossChain: CrossChainConfig | null, settlementName: string): BridgeTerms {
  if (!crossChain) return withoutBridging(CHAINS.get(settlementName)?.cctpDomain ?? 0);
  return {
    settlementDomain: crossChain.domain,
    tokenMessenger: crossChain.tokenMessenger,
    maxBridgeFeeBps: crossChain.maxBridgeFeeBps,
    fastDomains: fastDomainsOf(crossChain.sources.filter((s) => s.finality === "fast").map((s) => s.domain)),
  };
}
