import type { Hex } from "viem";
import { type ChainClients, createChainClients } from "./client.ts";
import type { CctpSource } from "./cross-chain-config.ts";
import { createNonceManager, type NonceManager } from "./nonces.ts";

/**
 * A source chain on which version 2 deposit addresses are valid: its own RPC clients and the
 * relayer's nonces there (the same key as on the settlement chain, its own nonce sequence).
 */
export interface SourceNetwork {
  source: CctpSource;
  clients: ChainClients;
  nonces: NonceManager;
}

/**
 * One SourceNetwork per enabled source chain, by chain id. `highestStoredOn(chainId)` is the
 * highest relayer nonce stored for a signed-but-maybe-unsent transaction on that chain, so a
 * restart never reuses one.
 */
export function createSourceNetworks(
  sources: readonly CctpSource[],
  relayerKey: Hex,
  highestStoredOn: (chainId: number) => Promise<number | null>,
): ReadonlyMap<number, SourceNetwork> {
  const networks = new Map<number, SourceNetwork>();
  for (const source of sources) {
    const clients = createChainClients(source, relayerKey);
    const nonces = createNonceManager(clients.publicClient, clients.account.address, () =>
      highestStoredOn(source.chainId),
    );
    networks.set(source.chainId, { source, clients, nonces });
  }
  return networks;
}
