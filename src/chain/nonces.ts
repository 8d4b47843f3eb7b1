import type { Address, PublicClient } from "viem";

export type NonceManager = ReturnType<typeof createNonceManager>;

/**
 * The relayer's nonces, shared by everything that sends from its key (settlements, CCTP
 * redemptions). Starts from the node's pending count, or past the highest nonce already
 * stored for a signed-but-maybe-unsent transaction, whichever is higher.
 */
export function createNonceManager(client: PublicClient, address: Address, highestStored: () => number | null) {
  let next: number | null = null;
  return {
    async claim(): Promise<number> {
      if (next === null) {
        const pending = await client.getTransactionCount({ address, blockTag: "pending" });
        next = Math.max(pending, (highestStored() ?? -1) + 1);
      }
      return next++;
    },
    /** After a failed send: read the count from the node again before the next claim. */
    reset(): void {
      next = null;
    },
  };
}
