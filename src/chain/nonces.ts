import type { Address, PublicClient } from "viem";

export type NonceManager = ReturnType<typeof createNonceManager>;

/**
 * The relayer's nonces, shared by everything that sends from its key (settlements, CCTP
 * redemptions). Starts from the node's pending count, or past the highest nonce already
 * stored for a signed-but-maybe-unsent transaction, whichever is higher.
 */
export function createNonceManager(
  client: PublicClient,
  address: Address,
  highestStored: () => Promise<number | null>,
) {
  // One read of the node's count, shared by claims made while it is in flight.
  let start: Promise<number> | null = null;
  let issued = 0;
  return {
    async claim(): Promise<number> {
      const current = (start ??= client
        .getTransactionCount({ address, blockTag: "pending" })
        .then(async (pending) => Math.max(pending, ((await highestStored()) ?? -1) + 1))
        .catch((error) => {
          start = null;
          throw error;
        }));
      const base = await current;
      return base + issued++;
    },
    /** After a failed send: read the count from the node again before the next claim. */
    reset(): void {
      start = null;
      issued = 0;
    },
  };
}
