import type { ChainClients } from "../client.ts";
import type { NonceManager } from "../nonces.ts";

/**
 * A chain where a deposit address may hold funds sent by mistake: the settlement chain, or an
 * enabled source chain (version 2 addresses only). Its own clients, relayer nonces and
 * confirmations, as its watcher and settler or bridger use them.
 */
export interface RecoveryNetwork {
  name: string;
  chainId: number;
  /** The settlement chain, whose committed USDC only `settle` moves. */
  settlement: boolean;
  confirmations: number;
  clients: ChainClients;
  nonces: NonceManager;
}
