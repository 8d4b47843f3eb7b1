import { type Address, erc20Abi, formatLog, getAddress, type Hex, parseEventLogs } from "viem";
import type { PaymentStore } from "../../payments/store.ts";
import type { ObservedTransfer } from "./ledger.ts";

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** A log as eth_getLogs returns it, before any checking: every field may be missing or wrong. */
export type RpcLog = { topics?: unknown[] } & Record<string, unknown>;

/** A log's `to` topic as a lower-case address (its last 20 bytes), or null when it cannot hold one. */
export function recipient(raw: RpcLog): string | null {
  const topic = raw?.topics?.[2];
  return typeof topic === "string" && topic.length === 66 ? `0x${topic.slice(-40).toLowerCase()}` : null;
}

/**
 * Keeps only well-formed USDC transfers to our addresses inside the asked range: whatever a
 * node answers (logs of other contracts, removed logs, out-of-range blocks, garbage) credits
 * nothing. Only logs whose `to` topic is one of ours are decoded; other logs are not read.
 * Ours are looked up in the store, in one query for the range's recipients: an address issued
 * a moment ago, by any replica, is found by the scan that follows.
 */
export function matchingTransfers(deps: {
  payments: Pick<PaymentStore, "depositAddressesAmong">;
  usdc: Address;
  chainId: number;
}) {
  const { payments, usdc, chainId } = deps;
  return async function matching(logs: RpcLog[], from: bigint, to: bigint): Promise<ObservedTransfer[]> {
    const recipients = new Set<string>();
    for (const raw of logs) {
      const address = recipient(raw);
      if (address) recipients.add(address);
    }
    const ours = await payments.depositAddressesAmong([...recipients]);
    const out: ObservedTransfer[] = [];
    for (const raw of logs) {
      const address = recipient(raw);
      if (!address || !ours.has(address)) continue;
      const transfer = decodeTransfer(raw, { usdc, chainId, from, to });
      if (transfer) out.push(transfer);
    }
    return out;
  };
}

/**
 * A raw log, already picked by its `to` topic, as a transfer: null unless it is a well-formed USDC
 * Transfer inside [from, to], still on the chain. A log that cannot be read at all throws, which
 * fails the whole range, to be asked again: skipping it could pass over a real payment for good.
 */
export function decodeTransfer(
  raw: RpcLog,
  range: { usdc: Address; chainId: number; from: bigint; to: bigint },
): ObservedTransfer | null {
  const [entry] = parseEventLogs({
    abi: erc20Abi,
    eventName: "Transfer",
    logs: [formatLog(raw as Parameters<typeof formatLog>[0])],
    strict: true,
  });
  // Not a well-formed Transfer (another event, short data): no honest node sends one of
  // those for a USDC transfer, so it is not a payment we could be passing over.
  if (!entry) return null;
  if (entry.removed || entry.address.toLowerCase() !== range.usdc.toLowerCase()) return null;
  if (entry.blockNumber === null || entry.blockNumber < range.from || entry.blockNumber > range.to) return null;
  if (!entry.transactionHash || entry.logIndex === null || !entry.blockHash) return null;
  return toObserved(entry, range.chainId);
}

/** A decoded Transfer log as the ledger records it. */
export function toObserved(
  entry: {
    transactionHash: Hex | null;
    logIndex: number | null;
    blockNumber: bigint | null;
    blockHash: Hex | null;
    args: { from?: Address; to?: Address; value?: bigint };
  },
  chainId: number,
): ObservedTransfer {
  return {
    chainId,
    txHash: entry.transactionHash!,
    logIndex: entry.logIndex!,
    from: getAddress(entry.args.from!),
    to: getAddress(entry.args.to!),
    amount: entry.args.value!,
    blockNumber: Number(entry.blockNumber),
    blockHash: entry.blockHash!,
  };
}
