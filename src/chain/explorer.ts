import { CHAINS } from "./chains.ts";

/** Pages of a chain's public block explorer. */
export interface ExplorerLinks {
  tx(hash: string): string;
  address(address: string): string;
}

/**
 * The block explorer of a settlement chain, or null when no public explorer can know its
 * transactions: a custom chain (the local dev chain included), or a built-in name run with another
 * chain id (STABLEGATE_CHAIN_ID points it at a fork or a private network).
 */
export function explorerFor(chain: { name: string; chainId: number }): ExplorerLinks | null {
  const known = CHAINS.get(chain.name);
  if (!known || known.chainId !== chain.chainId) return null;
  const base = known.explorer;
  return {
    tx: (hash) => `${base}/tx/${encodeURIComponent(hash)}`,
    address: (address) => `${base}/address/${encodeURIComponent(address)}`,
  };
}
