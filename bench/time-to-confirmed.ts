/**
 * How long a payer waits: the time from a USDC transfer being sent to the payment's `confirmed`,
 * at Base's pace, for a payment paid on the settlement chain (direct) and one paid with a plain
 * transfer on a source chain (any chain: the deposit address bridges itself through CCTP).
 *
 *   bun bench/time-to-confirmed.ts [--runs 10] [--only direct|any-chain] [--attest-ms 8000]
 *     [--block-time 2] [--confirmations 30] [--poll-ms 2000]
 *
 * The rigs of the tests, with the shipped binary (`bun run build`, then `dist/stablegate serve`;
 * STABLEGATE_TEST_BINARY names another build) on SQLite:
 *   - direct: one anvil mining a block every --block-time seconds (`anvil --block-time`) and a
 *     server on it (test/support/stack.ts);
 *   - any chain: the settlement anvil and a source anvil with the local CCTP contracts and
 *     attestation service (test/support/crosschain.ts), both switched to a block every
 *     --block-time seconds (interval mining: a transaction waits for its block, as on a real
 *     chain); the attestation service signs a burn --attest-ms after the server first asks
 *     for it (8 s: Circle's typical fast attestation from an L2, as src/chain/cross-chain-config.ts
 *     has it).
 * The two run side by side, each on its own anvils and server, payments one after another.
 *
 * The settings are what a Base deployment gets today, not the tests' quick ones: the chain table's
 * base row (src/lib/chains.ts), 30 confirmations and a watcher poll of one block time (2000 ms),
 * set as STABLEGATE_CONFIRMATIONS and STABLEGATE_POLL_INTERVAL_MS because the rigs' chain is
 * `custom` (whose defaults, 1 confirmation and 1000 ms, no real deployment at Base's pace has); the
 * source chain gets the same (`confirmations`, `poll_interval_ms` of its custom entry): an L2 at
 * Base's pace, as optimism's row is. --confirmations and --poll-ms change both chains.
 *
 * Each payment is timed from the moment its transfer is sent, in one loop that looks every 50 ms
 * until the transfer is mined, then every 100 ms: the transfer's receipt at the node, the merchant
 * API (GET /api/v1/payments/{id}: amount_received, the transfer's bridge state, the status), the
 * event stream (GET /api/v1/events/stream: when payment.settling and payment.confirmed arrive), and
 * the relayer's transactions as the server's database names them (their receipts at the node).
 * The bridge's own part is the rig's attestation delay (--attest-ms, a setting), taken off in the
 * last row; "bridge burned to mint sent" is that delay as the server lives it (the redeemer asks
 * every 250 ms and sends the mint at once). The floor is one block time: a transfer cannot be seen
 * before its block. "Blocks alone" is what the confirmations and the attestation cost a server
 * that added nothing: after the transfer's block, `confirmations` blocks for every wait and one
 * block for every transaction the relayer sends, on each chain, each block counted whole (a
 * transaction sent between two blocks waits less, so a run can come in under it).
 *
 * Everything it starts (anvils, servers, their data directories) is stopped however the run
 * ends: at the end, on an error, on Ctrl-C (SIGINT), SIGTERM or SIGHUP, or at its time limit. A
 * second Ctrl-C, or kill -9, exits at once: watchdogs then stop the anvils and servers, and only
 * the servers' data directories are left in the temporary directory.
 */
import { loadavg } from "node:os";
import { type Address, createWalletClient, erc20Abi, getAddress, type Hex, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { liveProcesses } from "../scripts/test-leftovers.ts";
import { watchChild } from "../src/dev/watchdog.ts";
import { CHAINS } from "../src/lib/chains.ts";
import { stopAll } from "../src/lib/teardown.ts";
import { ANVIL_KEY_1 } from "../test/support/anvil.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../test/support/crosschain.ts";
import { type EventStreamClient, openEventStream } from "../test/support/event-stream.ts";
import { builtBinary, type Stack, startStack } from "../test/support/stack.ts";
import { usdc } from "../test/support/test-chain.ts";

// bench/lib.ts is not imported: it exits at once on SIGINT, before the rigs here are stopped.
const argv = process.argv.slice(2);
function flag(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}
const base = CHAINS.get("base")!;
const RUNS = flag("runs", 10);
const BLOCK_S = flag("block-time", base.blockTimeMs / 1000);
const CONFIRMATIONS = flag("confirmations", base.confirmations);
const POLL_MS = flag("poll-ms", base.blockTimeMs);
const ATTEST_MS = flag("attest-ms", 8_000);
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
if (only !== undefined && only !== "direct" && only !== "any-chain")
  throw new Error("--only takes direct or any-chain");
const PHASES = (["direct", "any-chain"] as const).filter((phase) => only === undefined || only === phase);
const AMOUNT = "10.00";

/** Blocks the chain's own pace costs, server aside (see the header). */
const DIRECT_BLOCKS = CONFIRMATIONS + 1 + CONFIRMATIONS;
/** The source chain's (credit, burn, its confirmations), then the settlement chain's (mint, its confirmations, settlement, its confirmations). */
const ANY_CHAIN_BLOCKS = CONFIRMATIONS + 1 + CONFIRMATIONS + (1 + CONFIRMATIONS + 1 + CONFIRMATIONS);
const perPaymentLimitMs = (blocks: number) => 3 * blocks * BLOCK_S * 1000 + ATTEST_MS + 120_000;
const limitMs = 600_000 + RUNS * perPaymentLimitMs(ANY_CHAIN_BLOCKS);

// ---- Stopping what was started, however the run ends ----

const stops: Array<() => Promise<void>> = [];
const starting = new Set<Promise<unknown>>();
const guards = new Map<number, { release(): Promise<void> }>();
let ending: Promise<void> | null = null;

/** A rig being set up: stopped at the end, even when the end comes while it is still starting. */
function rig<T extends { stop(): Promise<void> }>(setup: Promise<T>): Promise<T> {
  starting.add(setup);
  setup.then(
    (started) => void stops.push(() => started.stop()),
    () => {},
  );
  void setup.finally(() => starting.delete(setup)).catch(() => {});
  return setup;
}

/**
 * The servers this process has started now, each given a watchdog that stops it if this process
 * dies without stopping it (kill -9); anvils have theirs already (src/dev/anvil.ts).
 */
async function guardServers(): Promise<void> {
  const servers = liveProcesses().filter((p) => p.ppid === process.pid && p.command.endsWith(" serve"));
  for (const { pid } of servers) if (!guards.has(pid)) guards.set(pid, watchChild(pid));
  // A server stopped since (a restart) must not leave a watchdog that could kill its pid reused.
  for (const [pid, guard] of guards)
    if (!servers.some((p) => p.pid === pid)) {
      guards.delete(pid);
      await guard.release();
    }
}

function end(): Promise<void> {
  ending ??= (async () => {
    await Promise.allSettled([...starting]);
    try {
      await stopAll(...stops.reverse());
    } finally {
      await Promise.all([...guards.values()].map((guard) => guard.release()));
    }
  })();
  return ending;
}

for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.on(signal, () => {
    if (ending) process.exit(code); // a second signal: the watchdogs stop the rest
    console.error(`\n${signal}: stopping the anvils and servers`);
    void end().finally(() => process.exit(code));
  });
}
setTimeout(() => {
  console.error(`time limit of ${Math.round(limitMs / 1000)} s reached; stopping`);
  void end().finally(() => process.exit(1));
}, limitMs).unref();

// ---- One payment, timed ----

/** When each point of a payment was first seen, in seconds since its transfer was sent. */
type Timeline = Map<string, number>;

interface Clocked {
  points: Timeline;
  mark(point: string): void;
  has(point: string): boolean;
  /** The transfer's inclusion block: its number and timestamp (whole seconds, as the chain has it). */
  inclusion?: { block: bigint; timestamp: number };
}

function clocked(): Clocked & { sentAtMs: number } {
  const sent = performance.now();
  const points: Timeline = new Map();
  return {
    sentAtMs: Date.now(),
    points,
    mark(point) {
      if (!points.has(point)) points.set(point, (performance.now() - sent) / 1000);
    },
    has: (point) => points.has(point),
  };
}

/** The first of `hashes` the node has a receipt for. */
async function receiptOf(client: PublicClient, hashes: Hex[]) {
  for (const hash of hashes) {
    const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
    if (receipt) return receipt;
  }
  return null;
}

/** Every hash the relayer signed for a row (fee bumps keep the nonce), newest included. */
function hashesOf(row: { tx_hash: string | null; tx_hashes: string | null } | undefined): Hex[] {
  if (!row?.tx_hash) return [];
  return [...new Set([row.tx_hash, ...(row.tx_hashes ? (JSON.parse(row.tx_hashes) as string[]) : [])])] as Hex[];
}

/** Marks payment.settling and payment.confirmed as they arrive on the stream. */
function streamed(stream: EventStreamClient, paymentId: string, t: Clocked): void {
  for (const frame of stream.events()) {
    const event = JSON.parse(frame.data!) as { type: string; data: { payment?: { id: string } } };
    if (event.data.payment?.id !== paymentId) continue;
    if (event.type === "payment.settling") t.mark("settling: payment.settling on the event stream");
    if (event.type === "payment.confirmed") t.mark("confirmed: payment.confirmed on the event stream");
  }
}

/** What both kinds of payment share: the transfer's inclusion, the API, the stream, the settlement. */
async function look(
  args: { stack: Stack; stream: EventStreamClient; paymentId: string; t: Clocked },
  transfer: { client: PublicClient; hash: Hex },
  more: (payment: any) => Promise<void>,
): Promise<boolean> {
  const { stack, stream, paymentId, t } = args;
  if (!t.inclusion) {
    const receipt = await transfer.client.getTransactionReceipt({ hash: transfer.hash }).catch(() => null);
    if (receipt) {
      t.mark("transfer mined (its receipt at the node)");
      const block = await transfer.client.getBlock({ blockNumber: receipt.blockNumber });
      t.inclusion = { block: receipt.blockNumber, timestamp: Number(block.timestamp) };
    }
  }
  const payment = await stack.getPayment(paymentId);
  if (payment.amount_received !== null) t.mark("credited: amount_received set (GET)");
  await more(payment);
  if (!t.has("settlement mined (its receipt at the node)")) {
    const [row] = stack.sql<{ tx_hash: string; tx_hashes: string }>(
      "SELECT tx_hash, tx_hashes FROM settlements WHERE payment_id = ? ORDER BY id DESC LIMIT 1",
      paymentId,
    );
    if (await receiptOf(stack.chain.publicClient, hashesOf(row))) t.mark("settlement mined (its receipt at the node)");
  }
  streamed(stream, paymentId, t);
  if (payment.status === "confirmed") t.mark("confirmed: status in GET /api/v1/payments/{id}");
  return t.has("confirmed: status in GET /api/v1/payments/{id}") && t.has(CONFIRMED_EVENT);
}

const CONFIRMED_EVENT = "confirmed: payment.confirmed on the event stream";

/** Polls until the payment is confirmed on both the API and the stream; the timeline and blocks. */
async function follow(
  args: { stack: Stack; stream: EventStreamClient; paymentId: string; t: ReturnType<typeof clocked> },
  transfer: { client: PublicClient; hash: Hex },
  limitMs: number,
  more: (payment: any) => Promise<void> = async () => {},
): Promise<Timeline> {
  const { t } = args;
  const deadline = performance.now() + limitMs;
  while (!(await look(args, transfer, more))) {
    if (performance.now() > deadline)
      throw new Error(`payment ${args.paymentId} not confirmed within ${limitMs / 1000} s: ${[...t.points.keys()]}`);
    await Bun.sleep(t.inclusion ? 100 : 50);
  }
  const points = new Map(t.points);
  const confirmed = points.get(CONFIRMED_EVENT)!;
  const mined = points.get("transfer mined (its receipt at the node)")!;
  points.set("confirmed (event), since the transfer's receipt", confirmed - mined);
  points.set(
    "confirmed (event), since its block's timestamp",
    confirmed - (t.inclusion!.timestamp * 1000 - t.sentAtMs) / 1000,
  );
  const head = await transfer.client.getBlockNumber({ cacheTime: 0 });
  points.set("BLOCKS", Number(head - t.inclusion!.block));
  return points;
}

// ---- The two kinds of payment ----

async function direct(stack: Stack, stream: EventStreamClient): Promise<Timeline> {
  const payment = await stack.createPayment({ amount: AMOUNT });
  const t = clocked();
  const hash = await stack.pay(payment.deposit_address, usdc(AMOUNT), { wait: false });
  return follow(
    { stack, stream, paymentId: payment.id, t },
    { client: stack.chain.publicClient, hash },
    perPaymentLimitMs(DIRECT_BLOCKS),
  );
}

const BRIDGE_STATES = ["burned", "attested", "minted", "settled"] as const;

async function anyChain(x: CrossChainStack, stream: EventStreamClient): Promise<Timeline> {
  const { stack } = x;
  // The payer of the tests' rig (funded on the source chain), sending as a wallet would.
  const payer = createWalletClient({
    chain: { ...foundry, id: LOCAL_SOURCE.chainId },
    transport: http(x.local.source.rpcUrl),
    account: privateKeyToAccount(ANVIL_KEY_1),
  });
  const payment = await stack.createPayment({ amount: AMOUNT });
  const t = clocked();
  const hash = await payer.writeContract({
    address: x.source.usdc,
    abi: erc20Abi,
    functionName: "transfer",
    args: [getAddress(payment.deposit_address) as Address, usdc(AMOUNT)],
  });
  const points = await follow(
    { stack, stream, paymentId: payment.id, t },
    { client: x.source.publicClient, hash },
    perPaymentLimitMs(ANY_CHAIN_BLOCKS),
    async (seen) => {
      const state = seen.transfers.find((tr: { chain_id: number }) => tr.chain_id === LOCAL_SOURCE.chainId)?.bridge
        ?.state as (typeof BRIDGE_STATES)[number] | undefined;
      const reached = state ? BRIDGE_STATES.indexOf(state as never) : -1;
      for (const [i, name] of BRIDGE_STATES.entries()) if (i <= reached) t.mark(`bridge ${name} (GET)`);
      if (!t.has("burn mined on the source chain (its receipt)")) {
        const [row] = stack.sql<{ tx_hash: string | null; tx_hashes: string | null }>(
          "SELECT tx_hash, tx_hashes FROM bridges WHERE payment_id = ? ORDER BY created_at LIMIT 1",
          payment.id,
        );
        if (await receiptOf(x.source.publicClient, hashesOf(row)))
          t.mark("burn mined on the source chain (its receipt)");
      }
      if (!t.has("mint mined on the settlement chain (its receipt)")) {
        const hashes = stack
          .sql<{ redeem_tx_hash: string | null }>(
            "SELECT redeem_tx_hash FROM crosschain_burns WHERE payment_id = ? AND redeem_tx_hash IS NOT NULL",
            payment.id,
          )
          .map((row) => row.redeem_tx_hash as Hex);
        // The redeemer sends the mint as soon as it has the attestation (it asks every 250 ms).
        if (hashes.length > 0) t.mark(MINT_SENT);
        if (await receiptOf(stack.chain.publicClient, hashes))
          t.mark("mint mined on the settlement chain (its receipt)");
      }
    },
  );
  points.set(ATTESTATION, points.get(MINT_SENT)! - points.get("bridge burned (GET)")!);
  points.set(LESS_BRIDGE, points.get(CONFIRMED_EVENT)! - ATTEST_MS / 1000);
  return points;
}

const MINT_SENT = "mint sent: attestation received (database)";
const ATTESTATION = "bridge burned (GET) to mint sent: the attestation";
const LESS_BRIDGE = `confirmed (event), less the rig's ${ATTEST_MS / 1000} s attestation`;

// ---- The runs ----

const ROWS: Record<(typeof PHASES)[number], string[]> = {
  direct: [
    "transfer mined (its receipt at the node)",
    "credited: amount_received set (GET)",
    "settling: payment.settling on the event stream",
    "settlement mined (its receipt at the node)",
    CONFIRMED_EVENT,
    "confirmed: status in GET /api/v1/payments/{id}",
    "confirmed (event), since the transfer's receipt",
    "confirmed (event), since its block's timestamp",
  ],
  "any-chain": [
    "transfer mined (its receipt at the node)",
    "credited: amount_received set (GET)",
    "settling: payment.settling on the event stream",
    "burn mined on the source chain (its receipt)",
    "bridge burned (GET)",
    MINT_SENT,
    "bridge attested (GET)",
    "mint mined on the settlement chain (its receipt)",
    "bridge minted (GET)",
    "settlement mined (its receipt at the node)",
    CONFIRMED_EVENT,
    "confirmed: status in GET /api/v1/payments/{id}",
    "confirmed (event), since the transfer's receipt",
    "confirmed (event), since its block's timestamp",
    ATTESTATION,
    LESS_BRIDGE,
  ],
};

interface PhaseResult {
  runs: Timeline[];
  /** Mean seconds between the settlement chain's blocks over the phase, as the chain stamped them. */
  blockInterval: number;
}

async function measured(
  phase: string,
  stack: Stack,
  pay: (stream: EventStreamClient) => Promise<Timeline>,
): Promise<PhaseResult> {
  const stream = await openEventStream(stack.url, stack.apiKey);
  if (stream.status !== 200) throw new Error(`event stream: ${stream.status} ${stream.text}`);
  try {
    const client = stack.chain.publicClient;
    const first = await client.getBlock({ blockTag: "latest" });
    const runs: Timeline[] = [];
    for (let i = 1; i <= RUNS; i++) {
      const points = await pay(stream);
      runs.push(points);
      console.log(
        `${phase} ${i}/${RUNS}: confirmed ${points.get(CONFIRMED_EVENT)!.toFixed(2)} s after sending, ` +
          `${points.get("BLOCKS")} blocks after the transfer's on its chain`,
      );
    }
    const last = await client.getBlock({ blockTag: "latest" });
    const blockInterval = Number(last.timestamp - first.timestamp) / Number(last.number - first.number);
    return { runs, blockInterval };
  } finally {
    await stream.close();
  }
}

async function runDirect(binary: string): Promise<PhaseResult> {
  const stack = await rig(
    startStack({
      subprocess: true,
      binary,
      blockTime: BLOCK_S,
      confirmations: CONFIRMATIONS,
      pollIntervalMs: POLL_MS,
    }),
  );
  await guardServers();
  return measured("direct", stack, (stream) => direct(stack, stream));
}

async function runAnyChain(binary: string): Promise<PhaseResult> {
  // Set up on automining anvils (quick), then switched to Base's pace with its settings.
  const x = await rig(startCrossChainStack({ subprocess: true, binary, attestationDelayMs: ATTEST_MS }));
  await Promise.all([
    x.chain.anvil.rpc("evm_setIntervalMining", [BLOCK_S]),
    x.local.source.rpc("evm_setIntervalMining", [BLOCK_S]),
  ]);
  await x.stack.restart({
    STABLEGATE_CONFIRMATIONS: String(CONFIRMATIONS),
    STABLEGATE_POLL_INTERVAL_MS: String(POLL_MS),
    ...x.sourceEnv({ confirmations: CONFIRMATIONS, pollIntervalMs: POLL_MS }),
  });
  await guardServers();
  await x.sourceOffered(180_000);
  return measured("any-chain", x.stack, (stream) => anyChain(x, stream));
}

function median(sorted: number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function table(phase: (typeof PHASES)[number], result: PhaseResult): string {
  const width = Math.max(...ROWS[phase].map((row) => row.length));
  const lines = [
    `${"seconds since the transfer was sent".padEnd(width)}  ${["min", "median", "max"].map((h) => h.padStart(7)).join("  ")}`,
  ];
  for (const row of ROWS[phase]) {
    const values = result.runs.map((run) => run.get(row)!).sort((a, b) => a - b);
    const cells = [values[0]!, median(values), values.at(-1)!].map((v) => v.toFixed(2).padStart(7));
    lines.push(`${row.padEnd(width)}  ${cells.join("  ")}`);
  }
  const blocks = phase === "direct" ? DIRECT_BLOCKS : ANY_CHAIN_BLOCKS;
  const paced = blocks * BLOCK_S + (phase === "direct" ? 0 : ATTEST_MS / 1000);
  lines.push(
    `floor: one block time, ${BLOCK_S.toFixed(2)} s (a transfer cannot be seen before its block); ` +
      `blocks came ${result.blockInterval.toFixed(2)} s apart on the settlement chain`,
    `blocks alone after the transfer's (no server time): ${blocks} blocks` +
      (phase === "direct" ? "" : ` on the two chains + ${ATTEST_MS / 1000} s of attestation`) +
      ` = ${paced.toFixed(2)} s`,
  );
  return lines.join("\n");
}

const startedAt = performance.now();
const loadAtStart = loadavg();
const results = new Map<string, PromiseSettledResult<PhaseResult>>();
try {
  const binary = await builtBinary();
  console.log(
    `${RUNS} payments of ${AMOUNT} USDC per kind (${PHASES.join(", ")}), one after another, server ${binary} serve ` +
      `(SQLite); blocks every ${BLOCK_S} s on each anvil; STABLEGATE_CONFIRMATIONS=${CONFIRMATIONS} and ` +
      `STABLEGATE_POLL_INTERVAL_MS=${POLL_MS} (the source chain the same); attestation ${ATTEST_MS} ms after the ` +
      `first request; load average ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}`,
  );
  const settled = await Promise.allSettled(
    PHASES.map((phase) => (phase === "direct" ? runDirect(binary) : runAnyChain(binary))),
  );
  for (const [i, phase] of PHASES.entries()) results.set(phase, settled[i]!);
} finally {
  await end();
}

let failed = false;
for (const phase of PHASES) {
  const result = results.get(phase)!;
  console.log(
    `\n${phase === "direct" ? "direct (paid on the settlement chain)" : "any chain (paid on the source chain)"}, ${RUNS} payments`,
  );
  if (result.status === "fulfilled") console.log(table(phase, result.value));
  else {
    failed = true;
    console.log(`failed: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`);
  }
}
console.log(
  `\nrun took ${((performance.now() - startedAt) / 60_000).toFixed(1)} min; load average at start ` +
    `${loadAtStart.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} ` +
    `(${navigator.hardwareConcurrency} cores)`,
);
process.exit(failed ? 1 : 0);
