import type { PublicClient } from "viem";

/** EIP-1559 fees of one transaction of the relayer. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * The going fees; for a replacement of a transaction sent with `previous`, at least 15% above
 * it on both (nodes accept a replacement only 10% above the old one). Null when outbidding
 * would take more than three times the going rate: then waiting is wiser than bidding higher.
 */
export async function feesToSend(client: PublicClient, previous?: Fees): Promise<Fees | null> {
  const going = await client.estimateFeesPerGas();
  if (!previous) return { maxFeePerGas: going.maxFeePerGas, maxPriorityFeePerGas: going.maxPriorityFeePerGas };
  const minFee = (previous.maxFeePerGas * 115n) / 100n;
  const minTip = (previous.maxPriorityFeePerGas * 115n) / 100n;
  if (minFee > going.maxFeePerGas * 3n) return null;
  return {
    maxFeePerGas: going.maxFeePerGas > minFee ? going.maxFeePerGas : minFee,
    maxPriorityFeePerGas: going.maxPriorityFeePerGas > minTip ? going.maxPriorityFeePerGas : minTip,
  };
}
