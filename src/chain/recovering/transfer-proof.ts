import { type Address, erc20Abi, type PublicClient } from "viem";
import { isRangeError } from "../rpc-errors.ts";

const transferEvent = erc20Abi.find((item) => item.type === "event" && item.name === "Transfer")!;

/** Blocks asked for in the first log query; each answered range doubles, until the node refuses one. */
const FIRST_SPAN = 10_000n;
/** Log queries one request may make before it gives up (a node that answers only narrow ranges). */
export const MAX_LOG_QUERIES = 50;
/** Server and chain clocks disagree: the search stops only at blocks this much older than the payment. */
const CLOCK_MARGIN_MS = 60 * 60 * 1000;

/** "found", "none" (every block since the payment searched), or "too_far" (gave up before its creation). */
export type TransferSearch = "found" | "none" | "too_far";

/**
 * Whether `token` emitted a Transfer of more than zero to `deposit` since `sinceMs` (the payment's
 * creation): the evidence that it is a token someone sent there, which a recovery asks for before
 * the relayer pays for the token's `transfer`. Searched newest first, since a mistake is usually
 * noticed soon; only logs of the token's own contract, to that address, count, whatever the node
 * answers. Errors other than a range too wide are thrown, for the caller to call the chain unreachable.
 */
export async function transferToDeposit(
  client: PublicClient,
  token: Address,
  deposit: Address,
  sinceMs: number,
): Promise<TransferSearch> {
  let to = await client.getBlockNumber({ cacheTime: 0 });
  let span = FIRST_SPAN;
  /** The range kept to once the node refused a wider one; null while it has refused none. */
  let ceiling: bigint | null = null;
  for (let query = 0; query < MAX_LOG_QUERIES; query++) {
    const from = to - span + 1n > 0n ? to - span + 1n : 0n;
    let found: boolean;
    try {
      const logs = await client.getLogs({
        address: token,
        event: transferEvent,
        args: { to: deposit },
        fromBlock: from,
        toBlock: to,
        strict: true,
      });
      found = logs.some(
        (log) =>
          !log.removed &&
          log.address.toLowerCase() === token.toLowerCase() &&
          log.args.to.toLowerCase() === deposit.toLowerCase() &&
          log.args.value > 0n &&
          log.blockNumber !== null &&
          log.blockNumber >= from &&
          log.blockNumber <= to,
      );
    } catch (error) {
      if (span === 1n || !isRangeError(error)) throw error;
      span /= 2n;
      ceiling = span;
      continue;
    }
    if (found) return "found";
    if (from === 0n) return "none";
    const { timestamp } = await client.getBlock({ blockNumber: from });
    if (Number(timestamp) * 1000 < sinceMs - CLOCK_MARGIN_MS) return "none";
    to = from - 1n;
    span = ceiling ?? span * 2n;
  }
  return "too_far";
}
