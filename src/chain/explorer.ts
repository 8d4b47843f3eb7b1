import { CHAINS } from "../lib/chains.ts";

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
  const base = explorerOrigin(chain);
  if (!base) return null;
  return {
    tx: (hash) => `${base}/tx/${encodeURIComponent(hash)}`,
    address: (address) => `${base}/address/${encodeURIComponent(address)}`,
  };
}

/** The explorer's origin ("https://basescan.org") on the same terms as explorerFor. */
export function explorerOrigin(chain: { name: string; chainId: number }): string | null {
  const known = CHAINS.get(chain.name);
  return known && known.chainId === chain.chainId ? known.explorer : null;
}
