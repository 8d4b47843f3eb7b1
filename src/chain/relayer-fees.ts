/**
 * Fees for the relayer's transactions (settlements and CCTP redemptions alike), and the rule
 * for replacing one that is stuck.
 */
import { type Hex, type PublicClient, parseTransaction } from "viem";

/** EIP-1559 fees of one transaction. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What the node suggests for a transaction sent now. */
export async function goingFees(client: PublicClient): Promise<Fees> {
  const { maxFeePerGas, maxPriorityFeePerGas } = await client.estimateFeesPerGas();
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/**
 * Fees for a replacement of a transaction sent with `previous`: the going fees, but at least 15%
 * above the old ones on both (nodes accept a replacement only 10% above). Null when that would
 * take more than three times the going rate: then waiting is wiser than bidding higher.
 */
export async function outbid(client: PublicClient, previous: Fees): Promise<Fees | null> {
  const going = await goingFees(client);
  const minFee = (previous.maxFeePerGas * 115n) / 100n;
  const minTip = (previous.maxPriorityFeePerGas * 115n) / 100n;
  if (minFee > going.maxFeePerGas * 3n) return null;
  return {
    maxFeePerGas: going.maxFeePerGas > minFee ? going.maxFeePerGas : minFee,
    maxPriorityFeePerGas: going.maxPriorityFeePerGas > minTip ? going.maxPriorityFeePerGas : minTip,
  };
}

/**
 * The gas limit and fees of a signed EIP-1559 transaction. A replacement keeps its gas limit: it
 * does the same work, and a fresh estimate can be far too low on nodes that estimate against
 * pending state, where the transaction being replaced has already done it.
 */
export function sentWith(serialized: Hex): Fees & { gas: bigint } {
  const tx = parseTransaction(serialized);
  if (
    tx.type !== "eip1559" ||
    tx.gas === undefined ||
    tx.maxFeePerGas === undefined ||
    tx.maxPriorityFeePerGas === undefined
  ) {
    throw new Error("not a signed EIP-1559 transaction with gas and fees");
  }
  return { gas: tx.gas, maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas };
}
