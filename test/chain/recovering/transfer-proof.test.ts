/**
 * The evidence a recovery asks for before the relayer pays for a token's transfer (transferToDeposit),
 * against a real anvil with real test tokens: only a Transfer of more than zero, logged by the
 * token's own contract to the deposit address, counts; the search goes back from the head to the
 * payment's creation and no further; and a node that refuses wide log ranges is asked in narrower
 * ones, up to a bound on the queries one request may make (through the RPC tap in front of the anvil).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Address } from "viem";
import { MAX_LOG_QUERIES, transferToDeposit } from "../../../src/chain/recovering/transfer-proof.ts";
import { deployTestToken, mined, publicClientFor, testTokenAbi } from "../../support/chain.ts";
import { type RpcTap, startRpcTap } from "../../support/rpc-tap.ts";
import { randomAddress, startChain, type TestChain } from "../../support/test-chain.ts";

let chain: TestChain;
let token: Address;
let otherToken: Address;
const taps: RpcTap[] = [];

beforeAll(async () => {
  chain = await startChain();
  token = await deployTestToken(chain.publicClient, chain.deployer, { symbol: "STRAY" });
  otherToken = await deployTestToken(chain.publicClient, chain.deployer, { symbol: "OTHER" });
}, 30_000);

afterAll(async () => {
  for (const tap of taps) tap.stop();
  await chain?.stop();
});

const mint = (address: Address, to: Address, units: bigint) =>
  mined(
    chain.publicClient,
    chain.deployer.writeContract({ address, abi: testTokenAbi, functionName: "mint", args: [to, units] }),
  );

/** A client through a tap that refuses every eth_getLogs over more than `blocks` blocks. */
function narrowNode(blocks: number) {
  const tap = startRpcTap(chain.rpcUrl, {
    refuseLogs: (from, to) => (to - from + 1 > blocks ? `block range too large: at most ${blocks} blocks` : undefined),
  });
  taps.push(tap);
  return { tap, client: publicClientFor(tap.url) };
}

describe("what counts as the token sent to the deposit address", () => {
  test("a Transfer of the token to the address; not one of another token, of zero, or to another address", async () => {
    const deposit = randomAddress();
    await mint(otherToken, deposit, 5n);
    await mint(token, deposit, 0n);
    await mint(token, randomAddress(), 7n);
    expect(await transferToDeposit(chain.publicClient, token, deposit, 0)).toBe("none");

    await mint(token, deposit, 1n);
    await chain.mine(20);
    expect(await transferToDeposit(chain.publicClient, token, deposit, 0)).toBe("found");
    expect(await transferToDeposit(chain.publicClient, otherToken, deposit, 0)).toBe("found");
    expect(await transferToDeposit(chain.publicClient, token, randomAddress(), 0)).toBe("none");
  });
});

describe("how far back it looks", () => {
  test("a node that refuses wide ranges is asked in narrower ones until the transfer is found", async () => {
    const deposit = randomAddress();
    await mint(token, deposit, 9n);
    const sentIn = await chain.head();
    await chain.mine(300);
    const { tap, client } = narrowNode(100);

    expect(await transferToDeposit(client, token, deposit, 0)).toBe("found");
    const answered = tap.logsAsked.filter((asked) => !asked.refused);
    // Newest first, never wider than the node answers once it refused, back to the transfer's block.
    expect(answered.every((asked) => asked.to - asked.from + 1 <= 100)).toBe(true);
    expect(answered[0]!.to).toBe(Number(await chain.head()));
    expect(answered.at(-1)!.from).toBeLessThanOrEqual(Number(sentIn));
    for (let i = 1; i < answered.length; i++) expect(answered[i]!.to).toBe(answered[i - 1]!.from - 1);
  });

  test("it stops at the payment's creation: an older transfer does not count", async () => {
    const deposit = randomAddress();
    await mint(token, deposit, 9n);
    await chain.mine(300);
    const { tap, client } = narrowNode(100);
    // Created two hours after the newest block: past the hour the clocks are allowed to differ by.
    const head = await chain.publicClient.getBlock();
    const createdAt = Number(head.timestamp) * 1000 + 2 * 3_600_000;

    expect(await transferToDeposit(client, token, deposit, createdAt)).toBe("none");
    expect(tap.logsAsked.filter((asked) => !asked.refused)).toHaveLength(1);
  });

  test(`it gives up after ${MAX_LOG_QUERIES} queries that do not reach back to the payment's creation`, async () => {
    const deposit = randomAddress();
    await mint(token, deposit, 9n);
    await chain.mine(MAX_LOG_QUERIES * 2 + 10);
    const { tap, client } = narrowNode(2);

    expect(await transferToDeposit(client, token, deposit, 0)).toBe("too_far");
    expect(tap.logsAsked).toHaveLength(MAX_LOG_QUERIES);
  });
});
