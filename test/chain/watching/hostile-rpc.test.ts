/**
 * The watcher against a node that lies: a local JSON-RPC server (the only thing outside the
 * machine, so the only thing faked) answers with crafted blocks and logs, while the watcher
 * runs with its real SQLite store, ledger and lifecycle. Nothing but a well-formed USDC
 * Transfer to a deposit address, inside the asked range, is ever credited, and that once.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  getAddress,
  type Hex,
  keccak256,
  numberToHex,
  pad,
  toEventSelector,
  toHex,
  zeroAddress,
  zeroHash,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { createAccountsService } from "../../../src/accounts/service.ts";
import { createAccountStore } from "../../../src/accounts/store.ts";
import { createChainClients } from "../../../src/chain/client.ts";
import { createChainStore } from "../../../src/chain/store.ts";
import { createDepthReader } from "../../../src/chain/watching/depth.ts";
import { createLedger } from "../../../src/chain/watching/ledger.ts";
import { createWatcher, type Watcher } from "../../../src/chain/watching/watcher.ts";
import { type Db, openDb } from "../../../src/db/index.ts";
import { createEventStore } from "../../../src/events/store.ts";
import { randomIds } from "../../../src/lib/ids.ts";
import { silentLogger } from "../../../src/lib/log.ts";
import { createLifecycle } from "../../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../../src/payments/store.ts";
import { paymentRow } from "../../support/payment-rows.ts";
import { randomAddress } from "../../support/test-chain.ts";

const CHAIN_ID = 31337;
const CONFIRMATIONS = 2;
const USDC: Address = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
const OTHER_TOKEN: Address = getAddress("0xe7f1725e7734ce288f8367e1bb143e90bb3f0512");
const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
/** The node refuses eth_getLogs over more blocks than this, as hosted RPCs do. */
const MAX_RANGE = 64;

type RpcLog = Record<string, unknown>;
type Mode = "hostile" | "broken" | "honest";

/** What the fake node currently pretends: its head, block hashes, and which logs it returns. */
const freshNode = () => ({
  head: 100,
  /** Bumped to rewrite every block hash from `reorgFrom` up: a reorg. */
  epoch: 0,
  reorgFrom: Number.MAX_SAFE_INTEGER,
  mode: "hostile" as Mode,
  /** A broken answer for one method ("null" results, garbage fields). */
  broken: "eth_blockNumber" as
    | "eth_blockNumber"
    | "eth_getBlockByNumber"
    | "eth_getLogs"
    | "block_without_hash"
    | "garbage_log",
  goodLogs: [] as RpcLog[],
  /** Every eth_getLogs answered: [from, to, ok]. */
  ranges: [] as Array<[number, number, boolean]>,
});
/** Reset before each test, as the database is: every test sets up what it needs. */
const node = freshNode();

const blockHash = (n: number): Hex => keccak256(toHex(`block ${n} epoch ${n >= node.reorgFrom ? node.epoch : 0}`));
const txHash = (label: string): Hex => keccak256(toHex(label));
const topicOf = (address: Address): Hex => pad(address.toLowerCase() as Hex, { size: 32 });
const amountData = (units: bigint): Hex => pad(numberToHex(units), { size: 32 });

function block(n: number) {
  return {
    number: numberToHex(n),
    hash: blockHash(n),
    parentHash: n === 0 ? zeroHash : blockHash(n - 1),
    nonce: "0x0000000000000000",
    sha3Uncles: zeroHash,
    logsBloom: `0x${"00".repeat(256)}`,
    transactionsRoot: zeroHash,
    stateRoot: zeroHash,
    receiptsRoot: zeroHash,
    miner: zeroAddress,
    difficulty: "0x0",
    totalDifficulty: "0x0",
    extraData: "0x",
    size: "0x220",
    gasLimit: "0x1c9c380",
    gasUsed: "0x0",
    timestamp: numberToHex(1_700_000_000 + n),
    baseFeePerGas: "0x1",
    mixHash: zeroHash,
    transactions: [],
    uncles: [],
  };
}

function transferLog(opts: {
  address?: Address;
  to: Address;
  units?: bigint;
  block: number;
  tx: Hex;
  logIndex?: number;
  topics?: Hex[];
  data?: Hex;
  removed?: boolean;
}): RpcLog {
  return {
    address: (opts.address ?? USDC).toLowerCase(),
    topics: opts.topics ?? [TRANSFER, topicOf(PAYER), topicOf(opts.to)],
    data: opts.data ?? amountData(opts.units ?? 25_000_000n),
    blockNumber: numberToHex(opts.block),
    blockHash: blockHash(opts.block),
    transactionHash: opts.tx,
    transactionIndex: "0x0",
    logIndex: numberToHex(opts.logIndex ?? 0),
    removed: opts.removed ?? false,
  };
}

/** Logs no honest node would give for [from, to], each aimed at the deposit address. */
function hostileLogs(from: number, to: number): RpcLog[] {
  const at = from;
  const tag = `${from}-${to}`;
  return [
    transferLog({ address: OTHER_TOKEN, to: deposit, block: at, tx: txHash(`other-token ${tag}`) }),
    transferLog({ to: deposit, block: at, tx: txHash(`removed ${tag}`), removed: true }),
    transferLog({ to: deposit, block: to + 1, tx: txHash(`above ${tag}`) }),
    transferLog({ to: deposit, block: Math.max(0, from - 1), tx: txHash(`below ${tag}`) }),
    transferLog({ to: deposit, block: at, tx: txHash(`missing topic ${tag}`), topics: [TRANSFER, topicOf(PAYER)] }),
    transferLog({ to: deposit, block: at, tx: txHash(`no data ${tag}`), data: "0x" }),
    transferLog({ to: deposit, block: at, tx: txHash(`short data ${tag}`), data: "0x01" }),
    transferLog({
      to: deposit,
      block: at,
      tx: txHash(`short topic ${tag}`),
      topics: [TRANSFER, topicOf(PAYER), "0x1234"],
    }),
    transferLog({
      to: deposit,
      block: at,
      tx: txHash(`wrong event ${tag}`),
      topics: [keccak256(toHex("Approval(address,address,uint256)")), topicOf(PAYER), topicOf(deposit)],
    }),
    {
      ...transferLog({ to: deposit, block: at, tx: txHash(`pending ${tag}`) }),
      transactionHash: null,
      blockHash: null,
    },
    transferLog({ to: deposit, block: at, tx: txHash(`zero ${tag}`), units: 0n }),
  ];
}

function answer(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
  if (node.mode === "broken") {
    if (node.broken === method) return { result: null };
    if (node.broken === "block_without_hash" && method === "eth_getBlockByNumber")
      return { result: { ...block(Number(params[0])), hash: null } };
    if (node.broken === "garbage_log" && method === "eth_getLogs")
      return { result: [{ ...transferLog({ to: deposit, block: 1, tx: txHash("garbage") }), blockNumber: "0xnope" }] };
  }
  switch (method) {
    case "eth_chainId":
      return { result: numberToHex(CHAIN_ID) };
    case "eth_blockNumber":
      return { result: numberToHex(node.head) };
    case "eth_getBlockByNumber": {
      const n = Number(params[0]);
      return { result: n <= node.head ? block(n) : null };
    }
    case "eth_getLogs": {
      const filter = params[0] as { address: string; topics: Hex[]; fromBlock: Hex; toBlock: Hex };
      const from = Number(filter.fromBlock);
      const to = Number(filter.toBlock);
      if (to - from + 1 > MAX_RANGE) {
        node.ranges.push([from, to, false]);
        return { error: { code: -32005, message: `block range too large: at most ${MAX_RANGE} blocks per query` } };
      }
      node.ranges.push([from, to, true]);
      const good =
        node.mode === "honest"
          ? node.goodLogs.filter((l) => Number(l.blockNumber) >= from && Number(l.blockNumber) <= to)
          : [];
      // Every good log twice, with the junk around it.
      return {
        result: [...hostileLogs(from, to), ...good, ...good].map((l) => ({
          ...l,
          blockHash: l.blockHash === null ? null : blockHash(Number(l.blockNumber)),
        })),
      };
    }
    default:
      return { error: { code: -32601, message: `method ${method} not found` } };
  }
}

const PAYER: Address = randomAddress();
let deposit: Address;
let server: ReturnType<typeof Bun.serve>;
let dataDir: string;
let db: Db;
let watcher: Watcher;
let paymentId: string;
let credits = 0;

const payments = () => createPaymentStore(db);
const chainStore = () => createChainStore(db);
const cursor = async () => (await chainStore().cursor(CHAIN_ID))?.block_number ?? null;

/** Runs `n` ticks, collecting failures instead of stopping at them (as the loop does). */
async function ticks(n: number): Promise<{ ok: number; failed: string[] }> {
  let ok = 0;
  const failed: string[] = [];
  for (let i = 0; i < n; i++) {
    try {
      await watcher.tick();
      ok++;
    } catch (error) {
      failed.push(error instanceof Error ? error.message : String(error));
    }
  }
  return { ok, failed };
}

async function expectNothingCredited(): Promise<void> {
  const row = (await payments().findById(paymentId))!;
  expect(row.amount_received).toBeNull();
  expect(row.status).toBe("pending");
  expect(await chainStore().transfersForPayment(paymentId)).toEqual([]);
  expect(await createEventStore(db, randomIds).listForPayment(paymentId)).toEqual([]);
  expect(credits).toBe(0);
}

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as
        | { id: number; method: string; params?: unknown[] }
        | Array<{ id: number; method: string; params?: unknown[] }>;
      const one = (r: { id: number; method: string; params?: unknown[] }) => ({
        jsonrpc: "2.0",
        id: r.id,
        ...answer(r.method, r.params ?? []),
      });
      return Response.json(Array.isArray(body) ? body.map(one) : one(body));
    },
  });
});

afterAll(() => {
  server?.stop(true);
});

/** A fresh database with one pending payment, and a watcher on it; a fresh fake node. */
beforeEach(async () => {
  Object.assign(node, freshNode());
  credits = 0;
  dataDir = mkdtempSync(join(tmpdir(), "stablegate-hostile-"));
  db = openDb(dataDir);
  const clock = { now: () => Date.now() };
  const { account } = await createAccountsService({
    store: createAccountStore(db),
    clock,
    ids: randomIds,
  }).createAccount({
    name: "Hostile",
    payoutAddress: randomAddress(),
  });
  deposit = randomAddress();
  paymentId = randomIds.paymentId();
  const now = clock.now();
  await payments().insert(
    // Created long enough ago that the first scan starts at block 0.
    paymentRow(account.id, now - 1_000_000, {
      id: paymentId,
      fee_recipient: zeroAddress,
      payout_address: account.payout_address,
      chain_id: CHAIN_ID,
      token_address: USDC,
      deposit_address: deposit,
      expires_at: now + 3_600_000,
      updated_at: now,
    }),
  );

  const chain = createChainStore(db);
  const paymentStore = createPaymentStore(db);
  const lifecycle = createLifecycle({
    payments: paymentStore,
    chain,
    events: createEventStore(db, randomIds),
    clock,
    ids: randomIds,
    view: { baseUrl: "http://localhost", chainName: "custom" },
  });
  const config = {
    name: "custom",
    chainId: CHAIN_ID,
    rpcUrl: `http://127.0.0.1:${server.port}`,
    usdc: USDC,
    confirmations: CONFIRMATIONS,
    pollIntervalMs: 1_000,
  };
  const client = createChainClients(config, generatePrivateKey()).publicClient;
  watcher = createWatcher({
    client,
    chain,
    payments: paymentStore,
    ledger: createLedger({ chain, payments: paymentStore, lifecycle, clock }),
    clock,
    log: silentLogger,
    name: "custom",
    chainId: CHAIN_ID,
    usdc: USDC,
    confirmations: CONFIRMATIONS,
    depth: createDepthReader({
      client,
      confirmations: CONFIRMATIONS,
      finalTag: "finalized",
      log: silentLogger,
      name: "custom",
    }),
    pollIntervalMs: 1_000,
    onCredited: () => credits++,
  });
});

afterEach(async () => {
  await db?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Ticks (as the loop does, past failures) until the cursor reaches `head`: the watcher scans to the head. */
async function scanTo(head: number, maxTicks = 60): Promise<void> {
  node.head = head;
  for (let i = 0; i < maxTicks && (await cursor()) !== head; i++) await ticks(1);
  expect(await cursor()).toBe(head);
}

/** A hostile scan to block 60, then an honest node with the payment's transfer at block 395 caught up to 400. */
async function creditThePayment(): Promise<{ start: number }> {
  await scanTo(60);
  node.mode = "honest";
  node.goodLogs = [
    transferLog({ to: deposit, units: 25_000_000n, block: 395, tx: txHash("the payment"), logIndex: 3 }),
  ];
  node.ranges = [];
  const start = (await cursor())!;
  // Catch up, however many refusals it takes.
  await scanTo(400);
  return { start };
}

describe("a hostile node", () => {
  test("crafted logs (other contract, removed, out of range, malformed, pending, zero) credit nothing", async () => {
    expect(await payments().depositAddressesAmong([deposit.toLowerCase()])).toEqual(new Set([deposit.toLowerCase()]));
    node.mode = "hostile";
    node.head = 60;
    const { failed } = await ticks(3);
    expect(failed).toEqual([]);
    // The range was scanned (the junk came back for it) and the cursor moved to the head.
    expect(await cursor()).toBe(60);
    expect(node.ranges.some(([from, to, ok]) => ok && from <= 1 && to >= 58)).toBe(true);
    await expectNothingCredited();
  });

  test("null results and garbage fields fail the tick, leave the cursor, and credit nothing", async () => {
    await scanTo(60);
    node.mode = "broken";
    node.head = 90;
    const before = await cursor();
    for (const broken of [
      "eth_blockNumber",
      "eth_getBlockByNumber",
      "block_without_hash",
      "eth_getLogs",
      "garbage_log",
    ] as const) {
      node.broken = broken;
      const { ok, failed } = await ticks(2);
      expect({ broken, ok, failed: failed.length }).toEqual({ broken, ok: 0, failed: 2 });
      expect(await cursor()).toBe(before);
      await expectNothingCredited();
    }
    expect(watcher.status().cursor).toBe(BigInt(before!));
  });
});

describe("an honest node with a range limit", () => {
  test("a well-formed transfer is credited exactly once though returned twice, and the chunk shrinks to fit", async () => {
    const { start } = await creditThePayment();

    const refused = node.ranges.filter(([, , ok]) => !ok);
    const answered = node.ranges.filter(([, , ok]) => ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.every(([from, to]) => to - from + 1 <= MAX_RANGE)).toBe(true);
    // Contiguous, gap-free coverage of everything above the old cursor.
    let next = start + 1;
    for (const [from, to] of answered) {
      expect(from).toBe(next);
      next = to + 1;
    }
    expect(next).toBe(400 + 1);

    const credited = (await payments().findById(paymentId))!;
    expect(credited.amount_received).toBe(25_000_000n);
    const transfers = await chainStore().transfersForPayment(paymentId);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({
      tx_hash: txHash("the payment"),
      log_index: 3,
      block_number: 395,
      amount: 25_000_000n,
    });
    expect(transfers[0]!.credited_at).not.toBeNull();
    expect(credits).toBe(1);
  });

  test("a reorg above the credited block makes the watcher rescan it; it is not credited again", async () => {
    await creditThePayment();
    expect(credits).toBe(1);
    node.reorgFrom = 380;
    node.epoch++;
    node.ranges = [];
    await scanTo(402, 10);
    // The rewind went below block 395 and the rescan returned the transfer again (twice).
    expect(node.ranges.some(([from, to, ok]) => ok && from <= 395 && to >= 395)).toBe(true);
    expect((await chainStore().cursor(CHAIN_ID))!.block_hash).toBe(blockHash(402));

    expect((await payments().findById(paymentId))!.amount_received).toBe(25_000_000n);
    expect(await chainStore().transfersForPayment(paymentId)).toHaveLength(1);
    expect(credits).toBe(1);
    expect(await createEventStore(db, randomIds).listForPayment(paymentId)).toEqual([]); // R = A: settling is the settler's move
  });
});
