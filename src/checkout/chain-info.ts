import { CHAINS, defaultRpcUrl } from "../chain/chains.ts";

/** The parameters of EIP-3085 `wallet_addEthereumChain`. */
export interface AddChainParams {
  chainId: string;
  chainName: string;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  rpcUrls: string[];
  blockExplorerUrls?: string[];
}

/** "Base Sepolia", "OP Mainnet"; a custom chain is named by its id. */
export function chainLabel(name: string, chainId: number): string {
  const known = CHAINS.get(name);
  return known && known.chainId === chainId ? known.viem.name : `Chain ${chainId}`;
}

/**
 * What a wallet needs to add the settlement chain, for built-in chains only: they have a public
 * RPC to offer. A custom chain's configured RPC URL may carry an API key, so it is never shown.
 */
export function addChainParams(name: string, chainId: number): AddChainParams | null {
  const known = CHAINS.get(name);
  if (!known || known.chainId !== chainId) return null;
  const explorer = known.viem.blockExplorers?.default.url;
  return {
    chainId: `0x${chainId.toString(16)}`,
    chainName: known.viem.name,
    nativeCurrency: known.viem.nativeCurrency,
    rpcUrls: [defaultRpcUrl(known)],
    ...(explorer ? { blockExplorerUrls: [explorer] } : {}),
  };
}
