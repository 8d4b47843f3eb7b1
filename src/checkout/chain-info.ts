import { CHAINS, defaultRpcUrl } from "../lib/chains.ts";

/** The parameters of EIP-3085 `wallet_addEthereumChain`. */
export interface AddChainParams {
  chainId: string;
  chainName: string;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  rpcUrls: string[];
  blockExplorerUrls?: string[];
}

/**
 * "Base Sepolia", "OP Mainnet"; a custom source chain by its configured name ("Local Source"); the
 * custom settlement chain, or a built-in name run with another chain id, by its id.
 */
export function chainLabel(name: string, chainId: number): string {
  const known = CHAINS.get(name);
  if (known) return known.chainId === chainId ? known.viem.name : `Chain ${chainId}`;
  if (name === "custom") return `Chain ${chainId}`;
  return name
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");
}

/**
 * What a wallet needs to add a chain, for built-in chains only: they have a public
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
