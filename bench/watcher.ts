/**
 * Chain watcher throughput, against the aim: with 1,000,000 issued deposit addresses and blocks
 * of 2,000 USDC transfers each (1% to deposit addresses), 100 blocks processed in under 10 s,
 * resident memory under 500 MB, and a confirmed transfer reflected in its payment within one
 * poll interval.
 *
 *   bun bench/watcher.ts [--addresses 1000000] [--blocks 100] [--per-block 2000]
 *                        [--hit-permille 10] [--latency-runs 5] [--max-logs N] [--refunds 0]
 *
 * Three processes, so the figures are the watcher's own: a seeder fills a fresh data dir
 * (payments rows, real schema, large transactions); a fake JSON-RPC node (Bun.serve on
 * loopback, port 0) plays the remote node, its blocks generated once and kept as JSON text;
 * this process runs the real watcher (viem client, stores, ledger, lifecycle) and is the one
 * timed and measured. The client is the production one, so viem's 10 MB cap on a response
 * body applies (about 8 blocks of 2,000 logs). --max-logs N makes the node refuse eth_getLogs
 * answers of more than N logs, as hosted RPCs do. --refunds N adds N payable refunds (to addresses
 * no block pays), which every scan reads and looks each log's recipient up among. Loopback only; stops after 180 s (seeding
 * included) whatever happens.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Address,
  checksumAddress,
  decodeEventLog,
  erc20Abi,
  formatLog,
  getAddress,
  type Hex,
  type PublicClient,
  parseEventLogs,
  type RpcLog,
  toEventSelector,
  zeroAddress,
  zeroHash,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { createAccountStore } from "../src/accounts/store.ts";
import { createChainClients } from "../src/chain/client.ts";
import { createChainStore } from "../src/chain/store.ts";
import { createDepthReader } from "../src/chain/watching/depth.ts";
import { createLedger } from "../src/chain/watching/ledger.ts";
import { createWatcher } from "../src/chain/watching/watcher.ts";
import { sql } from "../src/db/engine.ts";
import { openDb } from "../src/db/index.ts";
import { createEventStore } from "../src/events/store.ts";
import { systemClock } from "../src/lib/clock.ts";
import { randomIds } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/log.ts";
import { createLifecycle } from "../src/payments/lifecycle.ts";
import { createPaymentStore } from "../src/payments/store.ts";
import { createRefunds } from "../src/refunds/index.ts";
import { createRefundStore } from "../src/refunds/store.ts";
import { numberFlag, percentile, spawnChild, stopChild, waitForHttp } from "./lib.ts";

const ADDRESSES = numberFlag(process.argv, "addresses", 1_000_000);
const BLOCKS = numberFlag(process.argv, "blocks", 100);
const PER_BLOCK = numberFlag(process.argv, "per-block", 2_000);
const HIT_PERMILLE = numberFlag(process.argv, "hit-permille", 10);
const LATENCY_RUNS = numberFlag(process.argv, "latency-runs", 5);
const MAX_LOGS = process.argv.includes("--max-logs") ? numberFlag(process.argv, "max-logs", 10_000) : 0;
const REFUNDS = numberFlag(process.argv, "refunds", 0);
const ROLE = flag("role");

const CHAIN_ID = 31337;
const POLL_INTERVAL_MS = 1_000;
const LIMIT_MS = 180_000;
const USDC: Address = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
const PAYOUT: Address = getAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
const TRANSFER_EVENT = erc20Abi.filter((item) => item.type === "event" && item.name === "Transfer");
const PRICE = 25_000_000n;

/** One transfer to a deposit address, placed in the synthetic chain by this process. */
interface Hit {
  block: number;
  logIndex: number;
  to: string;
  amount: string;
  paymentId: string;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const blockHash = (n: number): Hex => `0x${sha256(`bench block ${n}`)}`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const int = (n: number) => Math.round(n).toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------
// Seeder: payments rows straight into the real schema, 50,000 per transaction.

async function seed(dir: string): Promise<void> {
  const started = performance.now();
  const db = openDb(dir);
  const now = Date.now();
  const accountId = randomIds.prefixed("acct");
  await createAccountStore(db).insertAccount({
    id: accountId,
    name: "Bench",
    payout_address: PAYOUT,
    fee_bps: null,
    created_at: now,
  });
  let checksumMs = 0;
  const batch = 50_000;
  for (let start = 0; start < ADDRESSES; start += batch) {
    const n = Math.min(batch, ADDRESSES - start);
    const hex = randomBytes(n * 52).toString("hex");
    const t0 = performance.now();
    // Stored checksummed, as payment creation stores them (viem's getAddress).
    const deposits = Array.from({ length: n }, (_, i) =>
      checksumAddress(`0x${hex.slice(i * 104 + 64, i * 104 + 104)}`),
    );
    checksumMs += performance.now() - t0;
    await db.transaction(async () => {
      for (let i = 0; i < n; i++) {
        const id = `0x${hex.slice(i * 104, i * 104 + 64)}`;
        await db.run(
          sql`INSERT INTO payments (id, account_id, status, amount, fee_bps, fee_recipient, payout_address, chain_id,
                token_address, deposit_address, expires_at, created_at, updated_at)
              VALUES (${id}, ${accountId}, 'pending', ${PRICE}, 0, ${zeroAddress}, ${PAYOUT}, ${CHAIN_ID}, ${USDC},
                ${deposits[i]!}, ${now + 86_400_000}, ${now}, ${now})`,
        );
      }
    });
  }
  await db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await db.close();
  const size = statSync(join(dir, "stablegate.db")).size;
  console.log(
    `setup: seeded ${int(ADDRESSES)} payments in ${secs(performance.now() - started)} ` +
      `(${secs(checksumMs)} of it checksumming addresses); database ${mb(size)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Fake node: a synthetic chain. Each block's logs are built once, as the JSON text of 2,000
// Transfer logs, so answering eth_getLogs is string concatenation.

function serveNode(dir: string): void {
  const hits = JSON.parse(readFileSync(join(dir, "hits.json"), "utf8")) as Hit[];
  const hitsByBlock = new Map<number, Map<number, Hit>>();
  for (const hit of hits) {
    if (!hitsByBlock.has(hit.block)) hitsByBlock.set(hit.block, new Map());
    hitsByBlock.get(hit.block)!.set(hit.logIndex, hit);
  }
  const usdc = USDC.toLowerCase();
  const blocks = new Map<number, string>();
  let head = BLOCKS;
  const stats = { requests: 0, logs: 0, bytes: 0, buildMs: 0 };

  function buildBlock(n: number, blockHits: Map<number, Hit> | undefined): string {
    const rnd = randomBytes(PER_BLOCK * 72).toString("hex");
    const number = `0x${n.toString(16)}`;
    const hash = blockHash(n);
    const parts = new Array<string>(PER_BLOCK);
    for (let i = 0; i < PER_BLOCK; i++) {
      const o = i * 144;
      const hit = blockHits?.get(i);
      const to = hit ? hit.to.slice(2).toLowerCase() : rnd.slice(o + 104, o + 144);
      const amount = hit ? BigInt(hit.amount) : BigInt(parseInt(rnd.slice(o, o + 8), 16) + 1);
      const index = `0x${i.toString(16)}`;
      parts[i] =
        `{"address":"${usdc}","topics":["${TRANSFER}","0x000000000000000000000000${rnd.slice(o + 64, o + 104)}","0x000000000000000000000000${to}"],` +
        `"data":"0x${amount.toString(16).padStart(64, "0")}","blockNumber":"${number}","blockHash":"${hash}",` +
        `"transactionHash":"0x${rnd.slice(o, o + 64)}","transactionIndex":"${index}","logIndex":"${index}","removed":false}`;
    }
    return parts.join(",");
  }

  function block(n: number): string {
    return JSON.stringify({
      number: `0x${n.toString(16)}`,
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
      timestamp: `0x${(1_700_000_000 + n * 2).toString(16)}`,
      baseFeePerGas: "0x1",
      mixHash: zeroHash,
      transactions: [],
      uncles: [],
    });
  }

  /** The JSON text of the result, or an error. */
  function answer(
    method: string,
    params: unknown[],
  ): { result: string } | { error: { code: number; message: string } } {
    switch (method) {
      case "eth_chainId":
        return { result: `"0x${CHAIN_ID.toString(16)}"` };
      case "eth_blockNumber":
        return { result: `"0x${head.toString(16)}"` };
      case "eth_getBlockByNumber": {
        const n = params[0] === "latest" ? head : Number(params[0]);
        return { result: n <= head ? block(n) : "null" };
      }
      case "eth_getLogs": {
        const filter = params[0] as {
          address?: string;
          topics?: Array<string | null>;
          fromBlock: string;
          toBlock: string;
        };
        const from = Number(filter.fromBlock);
        const to = Math.min(Number(filter.toBlock), head);
        const wrongFilter =
          (filter.address && filter.address.toLowerCase() !== usdc) ||
          (filter.topics?.[0] && filter.topics[0] !== TRANSFER);
        if (wrongFilter || from > to) return { result: "[]" };
        if (MAX_LOGS && (to - from + 1) * PER_BLOCK > MAX_LOGS) {
          return {
            error: { code: -32005, message: `query returned more than ${MAX_LOGS} results; try a smaller block range` },
          };
        }
        const t0 = performance.now();
        const parts: string[] = [];
        for (let n = Math.max(from, 1); n <= to; n++) parts.push(blocks.get(n)!);
        const text = `[${parts.join(",")}]`;
        stats.buildMs += performance.now() - t0;
        stats.requests++;
        stats.logs += parts.length * PER_BLOCK;
        stats.bytes += text.length;
        return { result: text };
      }
      case "bench_mine": {
        // One more block: PER_BLOCK transfers, one of them (in the middle) the given hit.
        const hit = params[0] as Hit;
        head++;
        blocks.set(head, buildBlock(head, new Map([[Math.floor(PER_BLOCK / 2), hit]])));
        return { result: String(head) };
      }
      case "bench_stats":
        return { result: JSON.stringify(stats) };
      default:
        return { error: { code: -32601, message: `method ${method} not found` } };
    }
  }

  for (let n = 1; n <= head; n++) blocks.set(n, buildBlock(n, hitsByBlock.get(n)));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (req.method === "GET") return new Response("ok");
      type Call = { id: number; method: string; params?: unknown[] };
      const body = (await req.json()) as Call | Call[];
      const one = (call: Call) => {
        const out = answer(call.method, call.params ?? []);
        const tail = "result" in out ? `"result":${out.result}` : `"error":${JSON.stringify(out.error)}`;
        return `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},${tail}}`;
      };
      const text = Array.isArray(body) ? `[${body.map(one).join(",")}]` : one(body);
      return new Response(text, { headers: { "content-type": "application/json" } });
    },
  });
  writeFileSync(join(dir, "node.port"), String(server.port));
}

// ---------------------------------------------------------------------------------------------
// The watcher, measured.

function rss(): number {
  return process.memoryUsage().rss;
}

/** Peak resident set since the last resetPeak(), from the kernel (Linux), else sampled. */
let sampledPeak = 0;
function resetPeak(): void {
  sampledPeak = rss();
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    // not Linux: the sampled peak is all there is
  }
}
function peakRss(): number {
  sampledPeak = Math.max(sampledPeak, rss());
  try {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (hwm) return Math.max(Number(hwm[1]) * 1024, sampledPeak);
  } catch {
    // not Linux
  }
  return sampledPeak;
}

/** Where a tick's time goes, from timers around the watcher's dependencies. */
const timing = { getLogsMs: 0, otherRpcMs: 0, txMs: 0, credited: 0 };
const resetTiming = () => Object.assign(timing, { getLogsMs: 0, otherRpcMs: 0, txMs: 0, credited: 0 });
const logRequests: Array<{ from: number; to: number; ok: boolean; ms: number }> = [];
/** Why eth_getLogs calls failed (the watcher narrows its range on most of them). */
const refusals = new Set<string>();

/** The client with timers around its RPC calls; eth_getLogs ones, raw or through getLogs, are logged. */
function timedClient(client: PublicClient): PublicClient {
  const timeLogs = async <T>(from: unknown, to: unknown, call: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const entry = { from: Number(from), to: Number(to), ok: false, ms: 0 };
    logRequests.push(entry);
    try {
      const result = await call();
      entry.ok = true;
      return result;
    } catch (error) {
      refusals.add(error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error));
      throw error;
    } finally {
      entry.ms = performance.now() - t0;
      timing.getLogsMs += entry.ms;
    }
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const fn = value as (...args: unknown[]) => Promise<unknown>;
      if (prop === "getLogs") {
        return (args: { fromBlock: bigint; toBlock: bigint }) =>
          timeLogs(args.fromBlock, args.toBlock, () => fn.call(target, args));
      }
      if (prop === "request") {
        return (
          args: { method: string; params?: Array<{ fromBlock: string; toBlock: string }> },
          ...rest: unknown[]
        ) =>
          args.method === "eth_getLogs"
            ? timeLogs(args.params?.[0]?.fromBlock, args.params?.[0]?.toBlock, () => fn.call(target, args, ...rest))
            : fn.call(target, args, ...rest);
      }
      if (prop === "getBlock" || prop === "getBlockNumber") {
        return async (...args: unknown[]) => {
          const t0 = performance.now();
          try {
            return await fn.apply(target, args);
          } finally {
            timing.otherRpcMs += performance.now() - t0;
          }
        };
      }
      return value;
    },
  });
}

async function main(): Promise<void> {
  setTimeout(() => {
    console.error(`bench: time limit of ${LIMIT_MS / 1000} s reached; stopping`);
    process.exit(1);
  }, LIMIT_MS).unref();
  const dataDir = mkdtempSync(join(tmpdir(), "stablegate-bench-watcher-"));
  process.once("exit", () => rmSync(dataDir, { recursive: true, force: true }));
  const self = [
    process.execPath,
    import.meta.path,
    "--dir",
    dataDir,
    "--addresses",
    String(ADDRESSES),
    "--blocks",
    String(BLOCKS),
    "--per-block",
    String(PER_BLOCK),
  ];
  const hitsPerBlock = Math.max(1, Math.round((PER_BLOCK * HIT_PERMILLE) / 1000));
  console.log(
    `Stablegate chain watcher benchmark: ${int(ADDRESSES)} deposit addresses, ${BLOCKS} blocks of ${int(PER_BLOCK)} USDC transfers ` +
      `(${hitsPerBlock} per block to deposit addresses), confirmations 0, poll interval ${POLL_INTERVAL_MS} ms` +
      (MAX_LOGS ? `, node refuses answers over ${int(MAX_LOGS)} logs` : "") +
      "\n",
  );

  const seeder = spawnChild([...self, "--role", "seed"], process.env);
  if ((await seeder.exited) !== 0) throw new Error("seeding failed");

  const db = openDb(dataDir);
  const hits = await pickHits(db, hitsPerBlock);
  const latencyHits = hits.splice(BLOCKS * hitsPerBlock);
  writeFileSync(join(dataDir, "hits.json"), JSON.stringify(hits));

  const nodeStarted = performance.now();
  const node = spawnChild(
    [...self, "--role", "node", ...(MAX_LOGS ? ["--max-logs", String(MAX_LOGS)] : [])],
    process.env,
  );
  const portFile = join(dataDir, "node.port");
  while (!existsSync(portFile) || readFileSync(portFile, "utf8") === "") {
    if (node.exitCode !== null) throw new Error("the fake node exited");
    await Bun.sleep(20);
  }
  const rpcUrl = `http://127.0.0.1:${readFileSync(portFile, "utf8")}`;
  await waitForHttp(rpcUrl, 10_000, node);
  console.log(
    `setup: fake node ready with ${BLOCKS} blocks (${int(BLOCKS * PER_BLOCK)} logs) pre-built in ${secs(performance.now() - nodeStarted)}\n`,
  );
  const rpc = async (method: string, params: unknown[] = []): Promise<unknown> => {
    const response = await fetch(rpcUrl, {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await response.json()) as { result: unknown }).result;
  };

  // The watcher with its real dependencies; the client, chain store and ledger are wrapped in timers.
  const config = {
    name: "custom",
    chainId: CHAIN_ID,
    rpcUrl,
    usdc: USDC,
    confirmations: 0,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  const rawClient = createChainClients(config, generatePrivateKey()).publicClient;
  const paymentStore = createPaymentStore(db);
  const chainStore = createChainStore(db);
  const lifecycle = createLifecycle({
    payments: paymentStore,
    chain: chainStore,
    events: createEventStore(db, randomIds),
    clock: systemClock,
    ids: randomIds,
    view: { baseUrl: "http://127.0.0.1", chainName: "custom" },
  });
  const ledger = createLedger({ chain: chainStore, payments: paymentStore, lifecycle, clock: systemClock });
  // Refunds as the server wires them (none payable unless --refunds): what each round pays for looking.
  const refunds = await createRefunds({
    db,
    clock: systemClock,
    ids: randomIds,
    config: { baseUrl: "http://127.0.0.1", chain: { name: "custom", chainId: CHAIN_ID, usdc: USDC } },
    events: { store: createEventStore(db, randomIds), written: () => {} },
    payments: paymentStore,
    chain: chainStore,
  });
  await seedPayableRefunds(db, REFUNDS);
  let lastCreditedAt = 0;
  const watcher = createWatcher({
    client: timedClient(rawClient),
    chain: {
      ...chainStore,
      transaction: async <T>(fn: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        try {
          return await chainStore.transaction(fn);
        } finally {
          timing.txMs += performance.now() - t0;
        }
      },
    },
    payments: paymentStore,
    ledger: {
      ...ledger,
      async record(transfer, counts) {
        const credited = await ledger.record(transfer, counts);
        if (credited) timing.credited++;
        return credited;
      },
    },
    clock: systemClock,
    log: silentLogger,
    name: "custom",
    chainId: CHAIN_ID,
    usdc: USDC,
    confirmations: 0,
    depth: createDepthReader({
      client: rawClient,
      confirmations: 0,
      finalTag: "finalized",
      log: silentLogger,
      name: "custom",
    }),
    pollIntervalMs: POLL_INTERVAL_MS,
    onCredited: () => (lastCreditedAt = performance.now()),
    refunds,
  });

  // The watcher looks its ranges' recipients up in the store: no address is held in memory.
  Bun.gc(true);
  const rssLoaded = rss();

  // Catch-up: the cursor at block 0, the head BLOCKS ahead; tick until all of them are scanned.
  await chainStore.setCursor(CHAIN_ID, 0, blockHash(0), Date.now());
  resetTiming();
  resetPeak();
  const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, rss())), 25);
  const runStarted = performance.now();
  let ticks = 0;
  while (Number(watcher.status().cursor ?? 0) < BLOCKS && ticks < 10_000) {
    await watcher.tick();
    ticks++;
  }
  const runMs = performance.now() - runStarted;
  clearInterval(sampler);
  const runPeak = peakRss();
  const scanned = Number(watcher.status().cursor);
  const transfers = scanned * PER_BLOCK;
  const answered = logRequests.filter((r) => r.ok);
  const refused = logRequests.length - answered.length;
  const other = runMs - timing.getLogsMs - timing.otherRpcMs - timing.txMs;
  console.log(`catch-up: ${scanned} blocks (${int(transfers)} transfers) in ${secs(runMs)}, ${ticks} ticks`);
  console.log(
    `          ${(scanned / (runMs / 1000)).toFixed(1)} blocks/s, ${int(transfers / (runMs / 1000))} transfers/s`,
  );
  console.log(
    `          chunks: ${describeChunks(logRequests)}${refused ? `; ${refused} failed, taking ${secs(logRequests.filter((r) => !r.ok).reduce((sum, r) => sum + r.ms, 0))}` : ""}`,
  );
  for (const reason of refusals) console.log(`          failed eth_getLogs: ${reason}`);
  const rssAfterRun = rss();
  Bun.gc(true);
  console.log(`          peak RSS ${mb(runPeak)} (${mb(rssAfterRun)} after the scan, ${mb(rss())} after a full GC)`);
  console.log(
    `          time: eth_getLogs (viem: HTTP, JSON.parse, ABI decoding) ${secs(timing.getLogsMs)}, other RPC ${secs(timing.otherRpcMs)}, ` +
      `DB transaction ${secs(timing.txMs)}, matching and the rest ${secs(other)}`,
  );

  // Correctness: exactly the transfers sent to deposit addresses were credited, once, in full.
  const check = await checkCredits(db, hits, timing.credited);
  console.log(`          credited ${int(timing.credited)} transfers of ${int(hits.length)} sent to deposit addresses`);
  console.log(`${check.ok ? "PASS" : "FAIL"}: ${check.detail}\n`);

  // Latency: the loop running, one new block with one transfer to a deposit address.
  resetTiming();
  const controller = new AbortController();
  const running = watcher.run(controller.signal);
  const catchUpRequests = logRequests.length;
  const latencies: number[] = [];
  const commits: number[] = [];
  const find = (id: string) =>
    db.get<{ amount_received: number | null }>(sql`SELECT amount_received FROM payments WHERE id = ${id}`);
  for (const hit of latencyHits) {
    await Bun.sleep(200 + Math.random() * POLL_INTERVAL_MS); // a random phase against the poll loop
    const t0 = performance.now();
    await rpc("bench_mine", [hit]);
    while ((await find(hit.paymentId))?.amount_received == null && performance.now() - t0 < 10_000) await Bun.sleep(10);
    const seen = performance.now();
    latencies.push((await find(hit.paymentId))?.amount_received == null ? Number.POSITIVE_INFINITY : seen - t0);
    commits.push(lastCreditedAt - t0);
  }
  controller.abort();
  await running;
  const sorted = [...latencies].sort((a, b) => a - b);
  const within = latencies.filter((ms) => ms <= POLL_INTERVAL_MS).length;
  console.log(`latency: new block -> amount_received set, ${latencies.length} runs (DB polled every 10 ms)`);
  console.log(
    `         ${latencies.map((ms) => `${ms.toFixed(0)} ms`).join(", ")} (committed at ${commits.map((ms) => ms.toFixed(0)).join(", ")} ms)`,
  );
  console.log(
    `         min ${sorted[0]!.toFixed(0)} ms, median ${percentile(sorted, 0.5).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; ` +
      `${within}/${latencies.length} within one poll interval (${POLL_INTERVAL_MS} ms)`,
  );
  const oneBlock = logRequests.slice(catchUpRequests).filter((r) => r.ok);
  const getLogsMs = oneBlock.reduce((sum, r) => sum + r.ms, 0) / oneBlock.length;
  console.log(
    `         eth_getLogs of one ${int(PER_BLOCK)}-transfer block: ${getLogsMs.toFixed(0)} ms on average; the loop polls at a fixed ` +
      `rate of ${POLL_INTERVAL_MS} ms, so the worst case is about ${POLL_INTERVAL_MS} ms + one tick\n`,
  );

  // The profile's own filter: every issued address in a Set, so its figures are decoding's alone.
  const issued = new Set(
    (await db.all<{ a: string }>(sql`SELECT lower(deposit_address) AS a FROM payments`)).map((row) => row.a),
  );
  await profileDecoding(rpc, rpcUrl, rawClient, (address) => issued.has(address.toLowerCase()), answered);

  console.log("\naims:");
  console.log(`  ${runMs < 10_000 ? "MET   " : "MISSED"} ${BLOCKS} blocks in ${secs(runMs)} (aim: under 10 s)`);
  console.log(
    `  ${runPeak < 500 * 1024 * 1024 ? "MET   " : "MISSED"} peak RSS ${mb(runPeak)} while scanning, ${mb(rssLoaded)} before scanning (aim: under 500 MB)`,
  );
  console.log(
    `  ${within === latencies.length ? "MET   " : "MISSED"} ${within}/${latencies.length} credits within ${POLL_INTERVAL_MS} ms (max ${sorted.at(-1)!.toFixed(0)} ms)`,
  );
  console.log(`  ${check.ok ? "PASS  " : "FAIL  "} credits match the transfers sent`);

  await stopChild(node);
  await db.close();
  process.exit(check.ok ? 0 : 1);
}

/** Distinct random payments: hitsPerBlock per measured block, then one per latency run. */
async function pickHits(db: ReturnType<typeof openDb>, hitsPerBlock: number): Promise<Hit[]> {
  const seqs = new Set<number>();
  const wanted = BLOCKS * hitsPerBlock + LATENCY_RUNS;
  while (seqs.size < wanted) seqs.add(1 + Math.floor(Math.random() * ADDRESSES));
  const hits: Hit[] = [];
  for (const [k, seq] of [...seqs].entries()) {
    const row = (await db.get<{ id: string; deposit_address: string }>(
      sql`SELECT id, deposit_address FROM payments WHERE seq = ${seq}`,
    ))!;
    const inRun = k < BLOCKS * hitsPerBlock;
    const j = k % hitsPerBlock;
    hits.push({
      block: inRun ? 1 + Math.floor(k / hitsPerBlock) : 0,
      logIndex: inRun ? Math.floor(((j + 0.5) * PER_BLOCK) / hitsPerBlock) : 0,
      to: row.deposit_address.toLowerCase(),
      // Every tenth payer sends half: an underpaid payment, so events are written too.
      amount: String(k % 10 === 9 ? PRICE / 2n : PRICE),
      paymentId: row.id,
    });
  }
  return hits;
}

async function checkCredits(
  db: ReturnType<typeof openDb>,
  hits: Hit[],
  credited: number,
): Promise<{ ok: boolean; detail: string }> {
  const rows = (await db.get<{ n: number; total: number; uncredited: number }>(
    sql`SELECT count(*) AS n, coalesce(sum(amount), 0) AS total, coalesce(sum(credited_at IS NULL), 0) AS uncredited FROM transfers`,
  ))!;
  const touched = (await db.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM payments WHERE amount_received IS NOT NULL`,
  ))!.n;
  const underpaidEvents = (await db.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM events WHERE type = 'payment.underpaid'`,
  ))!.n;
  const wrong: Hit[] = [];
  for (const hit of hits) {
    const row = await db.get<{ amount_received: number | null; status: string }>(
      sql`SELECT amount_received, status FROM payments WHERE id = ${hit.paymentId}`,
    );
    const underpaid = BigInt(hit.amount) < PRICE;
    if (row?.amount_received !== Number(hit.amount) || row.status !== (underpaid ? "underpaid" : "pending"))
      wrong.push(hit);
  }
  const expectedTotal = hits.reduce((sum, hit) => sum + Number(hit.amount), 0);
  const expectedUnderpaid = hits.filter((hit) => BigInt(hit.amount) < PRICE).length;
  const problems = [
    credited !== hits.length && `ledger credited ${credited}, expected ${hits.length}`,
    rows.n !== hits.length && `${rows.n} transfers rows, expected ${hits.length}`,
    rows.uncredited !== 0 && `${rows.uncredited} transfers not credited`,
    rows.total !== expectedTotal && `transfers total ${rows.total}, expected ${expectedTotal}`,
    touched !== hits.length && `${touched} payments with amount_received, expected ${hits.length}`,
    wrong.length > 0 && `${wrong.length} payments with the wrong amount_received or status`,
    underpaidEvents !== expectedUnderpaid &&
      `${underpaidEvents} payment.underpaid events, expected ${expectedUnderpaid}`,
  ].filter(Boolean);
  return problems.length === 0
    ? {
        ok: true,
        detail: `${hits.length} transfers rows, all credited; amount_received exact on all ${touched} paid payments and no other; ${underpaidEvents} payment.underpaid events`,
      }
    : { ok: false, detail: problems.join("; ") };
}

/** The eth_getLogs calls as "blocks asked (ok or refused)", and the answered sizes. */
function describeChunks(requests: Array<{ from: number; to: number; ok: boolean; ms: number }>): string {
  const answered = requests.filter((r) => r.ok);
  const sizes = new Map<number, number>();
  for (const r of answered) sizes.set(r.to - r.from + 1, (sizes.get(r.to - r.from + 1) ?? 0) + 1);
  const histogram = [...sizes].map(([blocks, count]) => `${count} x ${blocks} blocks`).join(", ");
  const sequence = requests
    .slice(0, 24)
    .map((r) => `${r.to - r.from + 1}${r.ok ? "+" : "x"}`)
    .join(" ");
  const avgMs = answered.reduce((sum, r) => sum + r.ms, 0) / answered.length;
  return (
    `${answered.length} eth_getLogs answered (${histogram}; ${avgMs.toFixed(0)} ms each on average)\n` +
    `          blocks asked per call (+ answered, x failed): ${sequence}${requests.length > 24 ? " ..." : ""}`
  );
}

/**
 * Where eth_getLogs time goes, on the largest range the watcher got answered: the node's own
 * cost, HTTP, JSON.parse, viem's ABI decoding, and the same filtering done by hand on the raw
 * JSON (topic checks, Set lookup of topics[2], decoding of the matches only). Each step is
 * run three times after a full GC; the median is shown.
 */
async function profileDecoding(
  rpc: (method: string, params?: unknown[]) => Promise<unknown>,
  rpcUrl: string,
  client: PublicClient,
  isWatched: (address: string) => boolean,
  answered: Array<{ from: number; to: number }>,
): Promise<void> {
  if (answered.length === 0) return;
  const { from, to } = answered.reduce((a, b) => (b.to - b.from > a.to - a.from ? b : a));
  const logs = (to - from + 1) * PER_BLOCK;
  const stats = (await rpc("bench_stats")) as { requests: number; buildMs: number };
  console.log(`profile: eth_getLogs [${from}..${to}], ${int(logs)} logs; median of 3 runs, each after a full GC`);
  console.log(
    `  ${"fake node: building one answer".padEnd(52)} ${(stats.buildMs / stats.requests).toFixed(1).padStart(7)} ms (average over ${stats.requests} requests)`,
  );

  async function step<T>(label: string, fn: () => T | Promise<T>, note = ""): Promise<{ ms: number; value: T }> {
    const times: number[] = [];
    let value!: T;
    for (let i = 0; i < 3; i++) {
      Bun.gc(true);
      const t0 = performance.now();
      value = await fn();
      times.push(performance.now() - t0);
    }
    const ms = times.sort((a, b) => a - b)[1]!;
    console.log(
      `  ${label.padEnd(52)} ${ms.toFixed(1).padStart(7)} ms  ${((ms * 1000) / logs).toFixed(2).padStart(6)} µs/log${note ? `  ${note}` : ""}`,
    );
    return { ms, value };
  }

  type RawLog = {
    address: string;
    topics: string[];
    data: string;
    blockNumber: string;
    transactionHash: string | null;
    logIndex: string | null;
    blockHash: string | null;
    removed: boolean;
  };
  const filter = {
    address: USDC,
    topics: [TRANSFER],
    fromBlock: `0x${from.toString(16)}`,
    toBlock: `0x${to.toString(16)}`,
  };
  const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [filter] });
  const fetched = await step("HTTP round trip, body as text", async () =>
    (await fetch(rpcUrl, { method: "POST", body: request })).text(),
  );
  const parsed = await step(
    "JSON.parse",
    () => (JSON.parse(fetched.value) as { result: RawLog[] }).result,
    `(${mb(fetched.value.length)} of JSON)`,
  );
  const raw = parsed.value;
  const decode = (log: RawLog) =>
    decodeEventLog({ abi: TRANSFER_EVENT, data: log.data as Hex, topics: log.topics as [Hex, ...Hex[]], strict: true });
  await step("viem formatLog + parseEventLogs, every log", () =>
    parseEventLogs({ abi: TRANSFER_EVENT, logs: (raw as RpcLog[]).map((log) => formatLog(log)), strict: true }),
  );
  await step("  in it: checksumAddress of from and to", () =>
    raw.forEach((log) => {
      checksumAddress(`0x${log.topics[1]!.slice(26)}`);
      checksumAddress(`0x${log.topics[2]!.slice(26)}`);
    }),
  );
  const viem = await step("viem getLogs, decoding every log (for comparison)", () =>
    client.getLogs({
      address: USDC,
      event: TRANSFER_EVENT[0]!,
      fromBlock: BigInt(from),
      toBlock: BigInt(to),
      strict: true,
    }),
  );
  const viemMatch = await step(
    "  then matching args.to against the Set",
    () => viem.value.filter((log) => isWatched(log.args.to)).length,
  );

  // What the watcher does: filter the raw JSON on topics[2] first, decode only the matches.
  const usdc = USDC.toLowerCase();
  const manual = await step("raw logs: match topics[2], decode matches only", () => {
    let matched = 0;
    for (const log of raw) {
      const recipient = log.topics[2];
      if (log.topics.length !== 3 || log.topics[0] !== TRANSFER || !recipient || recipient.length !== 66) continue;
      if (!isWatched(`0x${recipient.slice(26)}`)) continue;
      if (
        log.removed ||
        log.address.toLowerCase() !== usdc ||
        log.data.length !== 66 ||
        !log.transactionHash ||
        !log.blockHash ||
        log.logIndex === null
      )
        continue;
      const n = Number(log.blockNumber);
      if (n < from || n > to) continue;
      decode(log);
      matched++;
    }
    return matched;
  });
  const rawTotal = fetched.ms + parsed.ms + manual.ms;
  const viemTotal = viem.ms + viemMatch.ms;
  console.log(
    `  => per chunk: viem getLogs + Set ${viemTotal.toFixed(0)} ms (${int(viemMatch.value)} matched) vs raw eth_getLogs + JSON.parse + ` +
      `manual match ${rawTotal.toFixed(0)} ms (${int(manual.value)} matched): ${(viemTotal / rawTotal).toFixed(1)}x`,
  );
}

// Last, so that every module-level binding above is initialised first.
if (ROLE === "seed") await seed(flag("dir")!);
else if (ROLE === "node") serveNode(flag("dir")!);
else await main();

/** `n` refunds waiting for a transfer to an address no block of the bench pays. */
async function seedPayableRefunds(db: ReturnType<typeof openDb>, n: number): Promise<void> {
  if (n === 0) return;
  const store = createRefundStore(db);
  const payments = await db.all<{ id: string; account_id: string }>(
    sql`SELECT id, account_id FROM payments LIMIT ${n}`,
  );
  await db.transaction(async () => {
    for (const [i, payment] of payments.entries()) {
      const id = `re_bench${i}`;
      await store.insert({
        id,
        account_id: payment.account_id,
        payment_id: payment.id,
        amount: 1_000_000n,
        status: "awaiting_payment",
        reason: null,
        metadata: null,
        claim_token_hash: id,
        chain_id: CHAIN_ID,
        refund_address: checksumAddress(`0x${randomBytes(20).toString("hex")}`),
        payable_after_block: 0,
        created_at: Date.now(),
        updated_at: Date.now(),
        payable_at: Date.now(),
      });
    }
  });
  console.log(`setup: ${int(n)} payable refunds`);
}
