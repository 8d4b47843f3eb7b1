/**
 * The RPC tap's `atomically` (test/support/rpc-tap.ts), which the refund reorg tests rely on:
 * anvil_reorg rolls back and mines its new blocks one at a time, so a caller polling anvil
 * during a reorg of 13 blocks sees heights in between; polling through the tap, it sees the
 * chain before the reorg or after it, never between.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Anvil, startAnvil } from "../../src/dev/anvil.ts";
import { publicClientFor } from "../support/chain.ts";
import { type RpcTap, startRpcTap } from "../support/rpc-tap.ts";

const HEIGHT = 64;
const DEPTH = 13;
let anvil: Anvil;
let tap: RpcTap;

beforeAll(async () => {
  anvil = await startAnvil();
  await anvil.rpc("anvil_mine", [`0x${HEIGHT.toString(16)}`]);
  tap = startRpcTap(anvil.rpcUrl);
});

afterAll(async () => {
  tap?.stop();
  await anvil?.stop();
});

/** The heights four pollers of `url` saw while `reorgs` ran (it is handed them as they come). */
async function heightsDuring(url: string, reorgs: (seen: Set<number>) => Promise<void>): Promise<Set<number>> {
  const seen = new Set<number>();
  let done = false;
  const client = publicClientFor(url);
  const poll = async () => {
    while (!done) seen.add(Number(await client.getBlockNumber({ cacheTime: 0 })));
  };
  const pollers = Array.from({ length: 4 }, poll);
  try {
    await reorgs(seen);
  } finally {
    done = true;
    await Promise.all(pollers);
  }
  return seen;
}

test("straight to anvil, a poller sees heights a reorg passes through; through the tap's atomically, none", async () => {
  const reorg = () => anvil.rpc("anvil_reorg", [DEPTH, []]);
  // Until one shows: how often depends on the machine, but it is most of the reorgs here.
  const between = (seen: Set<number>) => [...seen].some((height) => height < HEIGHT);
  const direct = await heightsDuring(anvil.rpcUrl, async (seen) => {
    for (let n = 0; n < 500 && !between(seen); n++) await reorg();
  });
  expect(between(direct)).toBe(true);

  const tapped = await heightsDuring(tap.url, async () => {
    for (let n = 0; n < 100; n++) await tap.atomically(reorg);
  });
  expect([...tapped]).toEqual([HEIGHT]);
  expect(Number(await anvil.rpc<string>("eth_blockNumber"))).toBe(HEIGHT);
});
