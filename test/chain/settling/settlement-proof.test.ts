/**
 * The proof that someone else settled a deposit address (settledAfter) against a real anvil and
 * the real factory: which Settled events count as after the credited transfer (block, then log
 * index within the block), which blocks are asked about, and how a node that refuses large
 * ranges is asked again in halves (through the RPC tap in front of the anvil).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, type Hex, parseGwei, toHex } from "viem";
import { depositAddress, depositArgs, depositFactoryAbi, factoryAddress } from "../../../src/chain/contracts.ts";
import { type LogPosition, settledAfter } from "../../../src/chain/settling/settlement-proof.ts";
import { ANVIL_KEY_3, ANVIL_KEY_4 } from "../../support/anvil.ts";
import { publicClientFor, testTokenAbi, walletClientFor } from "../../support/chain.ts";
import { type RpcTap, startRpcTap } from "../../support/rpc-tap.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../../support/test-chain.ts";
import { waitFor } from "../../support/wait.ts";

let chain: TestChain;
const paymentId = toHex(crypto.getRandomValues(new Uint8Array(32)));
let deposit: Address;
/** The credited transfer, in block `n` between two settlements of the same deposit address. */
let credited: LogPosition;
let n: bigint;

beforeAll(async () => {
  chain = await startChain({ automine: false });
  const params = { paymentId, token: chain.usdc, payout: randomAddress(), feeRecipient: randomAddress(), feeBps: 0 };
  // settle() sweeps to the recipients the address commits to, so every call must name the same ones.
  deposit = depositAddress(params);
  const args = depositArgs(params);
  // Within a block anvil orders transactions by priority fee, highest first.
  const settle = (key: Hex, priorityGwei: string) =>
    walletClientFor(chain.rpcUrl, key).writeContract({
      address: factoryAddress,
      abi: depositFactoryAbi,
      functionName: "settle",
      args,
      maxFeePerGas: parseGwei("100"),
      maxPriorityFeePerGas: parseGwei(priorityGwei),
    });
  const transfer = (units: bigint, priorityGwei: string) =>
    chain.payer.writeContract({
      address: chain.usdc,
      abi: testTokenAbi,
      functionName: "transfer",
      args: [deposit, units],
      maxFeePerGas: parseGwei("100"),
      maxPriorityFeePerGas: parseGwei(priorityGwei),
    });

  await transfer(usdc("1.00"), "1");
  await chain.mine(1);
  // Block n: a settlement sweeping the 1.00, the credited transfer of 2.00, a settlement sweeping it.
  const first = await settle(ANVIL_KEY_3, "3");
  const paid = await transfer(usdc("2.00"), "2");
  const second = await settle(ANVIL_KEY_4, "1");
  await chain.mine(1);
  // Block n + 1: 4.00 more, swept in the same block.
  await transfer(usdc("4.00"), "2");
  await settle(ANVIL_KEY_3, "1");
  await chain.mine(1);
  await chain.mine(5);

  const receipts = await Promise.all(
    [first, paid, second].map((hash) => chain.publicClient.getTransactionReceipt({ hash })),
  );
  n = receipts[1]!.blockNumber;
  expect(receipts.map((r) => [r.blockNumber, r.transactionIndex, r.status])).toEqual([
    [n, 0, "success"],
    [n, 1, "success"],
    [n, 2, "success"],
  ]);
  const log = receipts[1]!.logs.find((l) => l.address.toLowerCase() === chain.usdc.toLowerCase())!;
  credited = { blockNumber: Number(n), logIndex: log.logIndex };
  expect(await chain.usdcBalance(deposit)).toBe(0n);
});

afterAll(async () => {
  await chain?.stop();
});

const proof = (client = chain.publicClient, to = n) =>
  settledAfter(client, { factory: factoryAddress, paymentId, deposit, after: credited, to });

describe("what counts as after the credited transfer", () => {
  test("a Settled event earlier in the transfer's block does not count, a later one in it does", async () => {
    expect(await proof(chain.publicClient, n)).toBe(usdc("2.00"));
  });

  test("a Settled event in a later block counts, once the asked range reaches it", async () => {
    expect(await proof(chain.publicClient, n + 1n)).toBe(usdc("6.00"));
    expect(await proof(chain.publicClient, n + 6n)).toBe(usdc("6.00"));
  });

  test("a range that ends before the transfer's block proves nothing", async () => {
    expect(await proof(chain.publicClient, n - 1n)).toBe(0n);
  });

  test("Settled events of another deposit address do not count", async () => {
    expect(
      await settledAfter(chain.publicClient, {
        factory: factoryAddress,
        paymentId,
        deposit: randomAddress(),
        after: credited,
        to: n + 1n,
      }),
    ).toBe(0n);
  });
});

describe("a node that refuses some eth_getLogs", () => {
  const taps: RpcTap[] = [];
  afterAll(() => {
    for (const tap of taps) tap.stop();
  });
  function tapRefusing(refuse: (from: number, to: number) => string | undefined) {
    const tap = startRpcTap(chain.rpcUrl, { refuseLogs: refuse });
    taps.push(tap);
    return { tap, client: publicClientFor(tap.url) };
  }

  /** The proof's outcome; "endless" once it has asked far more often than halving these ranges needs. */
  async function outcomeOf(tap: RpcTap, run: Promise<bigint>) {
    let result: { value: bigint } | { error: string } | undefined;
    run.then(
      (value) => void (result = { value }),
      (error: Error) => void (result = { error: error.message }),
    );
    await waitFor(() => result !== undefined || tap.logsAsked.length > 50, 30_000, "the proof to finish");
    return result ?? "endless";
  }

  test("ranges too large are asked again in halves, covering the asked blocks once", async () => {
    const { tap, client } = tapRefusing((from, to) =>
      to - from + 1 > 2 ? "block range too large: at most 2 blocks per query" : undefined,
    );
    expect(await outcomeOf(tap, proof(client, n + 5n))).toEqual({ value: usdc("6.00") });
    expect(tap.logsAsked[0]).toEqual({
      from: Number(n),
      to: Number(n) + 5,
      refused: "block range too large: at most 2 blocks per query",
    });
    const answered = tap.logsAsked.filter((asked) => !asked.refused);
    expect(answered.every(({ from, to }) => to - from + 1 <= 2)).toBe(true);
    const blocks = answered.flatMap(({ from, to }) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
    expect(blocks).toEqual(Array.from({ length: 6 }, (_, i) => Number(n) + i));
  });

  test("an error that is not about the range is passed on, not asked again in halves", async () => {
    const { tap, client } = tapRefusing(() => "header not found");
    const outcome = await outcomeOf(tap, proof(client, n + 5n));
    expect(outcome).toEqual({ error: expect.stringContaining("header not found") });
    expect(tap.logsAsked).toEqual([{ from: Number(n), to: Number(n) + 5, refused: "header not found" }]);
  });

  test("a range that ends before the transfer's block asks the node nothing (some refuse inverted ranges)", async () => {
    // As geth does: fromBlock above toBlock is an error, one that reads like a range too large.
    const { tap, client } = tapRefusing((from, to) => (from > to ? "invalid block range params" : undefined));
    expect(await outcomeOf(tap, proof(client, n - 1n))).toEqual({ value: 0n });
    expect(tap.logsAsked).toEqual([]);
  });

  test("a single block refused as too large is passed on, not halved further", async () => {
    const { tap, client } = tapRefusing(() => "block range too large");
    const outcome = await outcomeOf(tap, proof(client, n + 1n));
    expect(outcome).toEqual({ error: expect.stringContaining("block range too large") });
    expect(tap.logsAsked.map(({ from, to }) => [from - Number(n), to - Number(n)])).toEqual([
      [0, 1],
      [0, 0],
    ]);
  });
});
