import type { PublicClient } from "viem";
import type { Logger } from "../../lib/log.ts";
import type { FinalTag, Speed } from "../../lib/speed.ts";
import { errorMessage } from "../rpc-errors.ts";

/** Where a chain stands, as the speed policies read it (docs/speed.md). */
export interface Depth {
  head: bigint;
  /** The `standard` depth: blocks on top of a block before it counts. */
  confirmations: number;
  /** The block the chain's finality tag names; null while the node cannot say. */
  finalized: bigint | null;
}

/**
 * Whether something mined in `block` counts under `speed`. `fast`: it is in a block, which
 * whoever asks has just read from the chain; `final`: never guessed from a count when the
 * node cannot name its final block.
 */
export function counts(speed: Speed, block: bigint, depth: Depth): boolean {
  if (speed === "fast") return true;
  if (speed === "standard") return block + BigInt(depth.confirmations) <= depth.head;
  return depth.finalized !== null && block <= depth.finalized;
}

export type DepthReader = ReturnType<typeof createDepthReader>;

/**
 * Reads a chain's head and the block its finality tag names. The tag is read again only when
 * the head moved; a node without the tag leaves `finalized` null (said once in the log), so
 * `final` payments wait and nothing else does.
 */
export function createDepthReader(deps: {
  client: PublicClient;
  confirmations: number;
  finalTag: FinalTag;
  log: Logger;
  name: string;
}) {
  let last: Depth | null = null;
  let warned = false;

  async function finalized(): Promise<bigint | null> {
    try {
      const block = await deps.client.getBlock({ blockTag: deps.finalTag });
      warned = false;
      return block.number;
    } catch (error) {
      if (!warned)
        deps.log.warn(`chain node does not answer the ${deps.finalTag} block tag; final payments wait`, {
          chain: deps.name,
          error: errorMessage(error),
        });
      warned = true;
      return null;
    }
  }

  /** The chain at `head`: the final block is read again only when the head moved. */
  async function at(head: bigint): Promise<Depth> {
    if (last?.head === head) return last;
    const depth = { head, confirmations: deps.confirmations, finalized: await finalized() };
    if (last === null || head >= last.head) last = depth;
    return depth;
  }

  return {
    /** The chain's head: one call. */
    head: (): Promise<bigint> => deps.client.getBlockNumber({ cacheTime: 0 }),
    at,
    /** The chain as it stands now: one call while the head stays, two when it moved. */
    async read(): Promise<Depth> {
      return at(await deps.client.getBlockNumber({ cacheTime: 0 }));
    },
    /** What the last read saw, without asking the chain. */
    last: (): Depth | null => last,
  };
}
