/**
 * What the bridger reads of a source chain about a deposit address's burns: how much one burn may
 * take, and a burn of the address that no bridge has recorded.
 */
import type { Address, Hex, PublicClient } from "viem";
import { factoryOf, type TermsRow } from "../deposit-terms.ts";
// Every factory version that bridges emits the same Bridged event; the row's own factory is the one that counts.
import { depositFactoryV2Abi as bridgedEventAbi } from "../deposit-v2.ts";
import type { BridgeRow } from "./store.ts";

export { bridgedEventAbi };

/** Circle's minter, through the messenger: what one burn may take at most. */
const minterAbi = [
  {
    type: "function",
    name: "localMinter",
    stateMutability: "view",
    inputs: [],
    outputs: [{ type: "address" }],
  },
  {
    type: "function",
    name: "burnLimitsPerMessage",
    stateMutability: "view",
    inputs: [{ type: "address" }],
    outputs: [{ type: "uint256" }],
  },
] as const;

/** The most one burn may take of `balance` of `usdc`: Circle's per-message limit, when the minter has one. */
export async function burnable(
  client: PublicClient,
  messenger: Address,
  usdc: Address,
  balance: bigint,
): Promise<bigint> {
  const minter = await client.readContract({ address: messenger, abi: minterAbi, functionName: "localMinter" });
  const limit = await client.readContract({
    address: minter,
    abi: minterAbi,
    functionName: "burnLimitsPerMessage",
    args: [usdc],
  });
  return limit > 0n && balance > limit ? limit : balance;
}

/**
 * The deposit address's confirmed Bridged events on this chain from block `since` (its first
 * credit here), when they add up to more than its bridges here recorded: the oldest one no bridge
 * names. Null when there is none.
 */
export async function unrecordedBurn(
  client: PublicClient,
  args: { row: TermsRow & { deposit_address: string }; since: number; confirmations: number; recorded: BridgeRow[] },
): Promise<{ hash: Hex; amount: bigint; blockNumber: bigint } | null> {
  const { row, since, recorded } = args;
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const to = head - BigInt(args.confirmations);
  if (to < BigInt(since)) return null;
  const logs = await client.getContractEvents({
    address: factoryOf(row),
    abi: bridgedEventAbi,
    eventName: "Bridged",
    args: { paymentId: row.id as Hex, depositAddress: row.deposit_address as Address },
    fromBlock: BigInt(since),
    toBlock: to,
  });
  const onChain = logs.reduce((sum, l) => sum + l.args.amount!, 0n);
  if (onChain <= recorded.reduce((sum, b) => sum + (b.amount ?? 0n), 0n)) return null;
  const known = new Set(recorded.map((b) => b.burn_tx_hash?.toLowerCase()));
  const found = logs.find((l) => !known.has(l.transactionHash.toLowerCase()));
  return found ? { hash: found.transactionHash, amount: found.args.amount!, blockNumber: found.blockNumber } : null;
}
