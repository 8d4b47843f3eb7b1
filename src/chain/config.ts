import type { Address, Hex } from "viem";
import type { FinalTag } from "../lib/speed.ts";
import type { CrossChainConfig } from "./cross-chain-config.ts";

/** The settlement chain, as STABLEGATE_CHAIN and its overrides name it (read in src/config.ts). */
export interface SettlementChain {
  name: string;
  chainId: number;
  rpcUrl: string;
  usdc: Address;
  confirmations: number;
  pollIntervalMs: number;
  /** Micro-USDC below which late funds are not swept at the relayer's cost (`ChainInfo.sweepFloor`). */
  sweepFloor: bigint;
  /**
   * Micro-USDC per whole native coin, a conservative price (`ChainInfo.nativePrice`): the gas
   * part of gasless payments' floor. Null on a custom chain, whose floor is then its sweep floor.
   */
  nativePrice: bigint | null;
}

/** The chain side's slice of the configuration. */
export interface ChainSideConfig {
  chain: SettlementChain;
  /** CCTP V2 funding from other chains; null when no source chain is configured. */
  crossChain: CrossChainConfig | null;
  /** Where the generated relayer key is kept when none is given. */
  dataDir: string;
  /** Hex private key that pays settlement gas; undefined: generated into the data dir. */
  relayerKey: Hex | undefined;
  /** The block tag the `final` speed policy reads (STABLEGATE_FINAL_BLOCK_TAG). */
  finalTag: FinalTag;
  /** Set when replicas share a PostgreSQL database, and so the chain lease. */
  databaseUrl: string | null;
}
