/**
 * How long a payer waits: the time from a USDC transfer being sent to the payment's `confirmed`,
 * at Base's pace, under each speed policy (docs/speed.md), for a payment paid on the settlement
 * chain (direct) and one paid with a plain transfer on a source chain (any chain: the deposit
 * address bridges itself through CCTP).
 *
 *   bun bench/time-to-confirmed.ts [--speed fast|standard|final|all] [--runs 20]
 *     [--only direct|any-chain] [--stagger-s 2.6] [--block-time 2] [--confirmations 30]
 *     [--poll-ms 1000] [--attest-ms 8000] [--slots-in-an-epoch 32] [--baseline PATH]
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
 *     has it). It does not wait for a burn's finality as Circle does for a standard transfer
 *     (what `final` payments are bridged with), so `final` any-chain leaves out that wait.
 * The two run side by side, each on its own anvils and server; within each, the policies one after
 * another. The whole default run takes about 14 minutes (the any-chain `final` round is the longest).
 *
 * The settings are what a Base deployment gets now, not the tests' quick ones: the chain table's
 * base row (src/lib/chains.ts), 30 confirmations and the watcher's poll of half a block
 * (pollIntervalOf: 1000 ms), set as STABLEGATE_CONFIRMATIONS and STABLEGATE_POLL_INTERVAL_MS
 * because the rigs' chain is `custom` (whose defaults, 1 confirmation and 1000 ms, no real
 * deployment at Base's pace has); the source chain gets the same (`confirmations`,
 * `poll_interval_ms` of its custom entry): an L2 at Base's pace, as optimism's row is.
 * --confirmations and --poll-ms change both chains. `final` waits for anvil's `finalized` block,
 * which trails the head by two epochs of --slots-in-an-epoch blocks (anvil's own default, 32: 64
 * blocks, 128 s at 2 s blocks): anvil's finality, not Base's, whose finalized block trails the head
 * by many minutes. Both anvils of a rig get the setting, and the output says how far `finalized`
 * trailed the head at the end.
 *
 * --baseline PATH runs an older build instead (one from before speed policies): the standard
 * policy only, created without `speed`, with the poll that build gave a Base deployment (one block
 * time, 2000 ms) unless --poll-ms says otherwise. Run it and the default run in the same sitting
 * to compare the two builds on the same machine.
 *
 * The payments of one policy run concurrently: a new one is started every --stagger-s seconds
 * (default 1.3 block times, so the sends fall at different points of a block), each timed on its
 * own from its own send, and the round ends when all are confirmed. Concurrency must not blur the
 * times, so nothing is timed by polling per payment:
 *   - send: the moment the signed transfer goes to the node (eth_sendRawTransaction; it was signed
 *     before, with its nonce, gas and fees set, so no other call comes between);
 *   - confirmed: the moment payment.confirmed arrives on the event stream
 *     (GET /api/v1/events/stream, which the server pushes as it writes the event, in the same
 *     transaction as the status); frames are stamped within 10 ms of arriving. Each payment's GET
 *     /api/v1/payments/{id} is read only every 2 s (20 payments: 10 requests a second, little
 *     beside the watcher's own work) to check that the API says `confirmed` too;
 *   - inclusion: the moment the transfer's block was first seen at the node (one loop per chain
 *     asks for the head every 50 ms), not the block's timestamp, which anvil keeps in whole
 *     seconds;
 *   - seen: the first event that lets a shop say "payment received": payment.funds_seen (a
 *     transfer seen before it counts), else payment.settling (it counted).
 *
 * The table has per policy: n (payments confirmed), median, p99 (nearest rank: with 20 payments,
 * the largest), min and max of seconds from send to confirmed; then medians from inclusion, the
 * chain's need and what is over it, and seen. The need is what the chains ask of a server that
 * added no time of its own, from the transfer's block, each block counted whole (a transaction
 * sent between two blocks waits less, so "over" can be below zero): the policy's depth on the
 * transfer's block (fast 0, standard --confirmations, final two epochs), then direct: the
 * settlement's block and its depth; any chain: the burn's block on the source chain, the
 * attestation (--attest-ms), the mint's block and the settlement's on the settlement chain, and the
 * settlement's depth. For fast any-chain that need (attestation + 3 blocks) is the bridge's own,
 * and "over" is what the target of 2 s is measured against.
 *
 * Everything it starts (anvils, servers, their data directories) is stopped however the run
 * ends: at the end, on an error, on Ctrl-C (SIGINT), SIGTERM or SIGHUP, or at its time limit. A
 * second Ctrl-C, or kill -9, exits at once: watchdogs then stop the anvils and servers, and only
 * the servers' data directories are left in the temporary directory.
 */
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex, parseGwei } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { liveProcesses } from "../scripts/test-leftovers.ts";
import { watchChild } from "../src/dev/watchdog.ts";
import { CHAINS, pollIntervalOf } from "../src/lib/chains.ts";
import { stopAll } from "../src/lib/teardown.ts";
import { ANVIL_KEY_1 } from "../test/support/anvil.ts";
import { LOCAL_SOURCE, startCrossChainStack } from "../test/support/crosschain.ts";
import { type EventStreamClient, openEventStream } from "../test/support/event-stream.ts";
import { builtBinary, type Stack, startStack } from "../test/support/stack.ts";
import { usdc } from "../test/support/test-chain.ts";

// ---- Settings ----

// bench/lib.ts is not imported: it exits at once on SIGINT, before the rigs here are stopped.
const argv = process.argv.slice(2);
function text(name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`--${name} needs a value`);
  return value;
}
function flag(name: string, fallback: number): number {
  const given = text(name);
  if (given === undefined) return fallback;
  const value = Number(given);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

type Policy = "fast" | "standard" | "final";
type Phase = "direct" | "any-chain";

const base = CHAINS.get("base")!;
const BASELINE = text("baseline") === undefined ? undefined : resolve(text("baseline")!);
if (BASELINE !== undefined && !existsSync(BASELINE)) throw new Error(`--baseline: no file at ${BASELINE}`);
const speed = text("speed") ?? "all";
if (!["fast", "standard", "final", "all"].includes(speed))
  throw new Error("--speed takes fast, standard, final or all");
if (BASELINE !== undefined && speed !== "all" && speed !== "standard")
  throw new Error("--baseline runs a build without speed policies: the standard policy only");
const POLICIES: Policy[] =
  BASELINE !== undefined ? ["standard"] : speed === "all" ? ["fast", "standard", "final"] : [speed as Policy];
const RUNS = Math.round(flag("runs", 20));
const BLOCK_S = flag("block-time", base.blockTimeMs / 1000);
const STAGGER_S = flag("stagger-s", 1.3 * BLOCK_S);
const CONFIRMATIONS = flag("confirmations", base.confirmations);
// The build before speed policies polled a built-in chain once per block.
const POLL_MS = flag("poll-ms", BASELINE !== undefined ? base.blockTimeMs : pollIntervalOf(base));
const ATTEST_MS = flag("attest-ms", 8_000);
const SLOTS = Math.round(flag("slots-in-an-epoch", 32));
const only = text("only");
if (only !== undefined && only !== "direct" && only !== "any-chain")
  throw new Error("--only takes direct or any-chain");
const PHASES = (["direct", "any-chain"] as const).filter((phase) => only === undefined || only === phase);
const AMOUNT = "10.00";
/** How often the bench asks each node for its head, to stamp when each block appeared. */
const HEAD_POLL_MS = 50;
/** How often each payment's GET checks the API against the stream (times come from the stream). */
const API_CHECK_MS = 2_000;

/** Blocks a policy waits over a transaction's block before it counts (anvil: finalized = head - 2 epochs). */
const depthOf = (policy: Policy): number => (policy === "fast" ? 0 : policy === "standard" ? CONFIRMATIONS : 2 * SLOTS);

/** What the chains (and the bridge) need from the transfer's block, server aside (see the header). */
function needOf(phase: Phase, policy: Policy): { blocks: number; seconds: number } {
  const depth = depthOf(policy);
  const blocks = phase === "direct" ? depth + 1 + depth : depth + 3 + depth;
  return { blocks, seconds: blocks * BLOCK_S + (phase === "direct" ? 0 : ATTEST_MS / 1000) };
}

const perPaymentLimitMs = (phase: Phase, policy: Policy) => 3 * needOf(phase, policy).seconds * 1000 + 120_000;
const limitMs =
  600_000 + POLICIES.reduce((sum, policy) => sum + RUNS * STAGGER_S * 1000 + perPaymentLimitMs("any-chain", policy), 0);

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

// ---- Clocks: when each block appeared, when each event arrived ----

type Rpc = <T = unknown>(method: string, params?: unknown[]) => Promise<T>;

/** When each block of a chain was first seen at its node (performance.now() ms), from one loop. */
function chainClock(rpc: Rpc) {
  const firstSeen = new Map<bigint, number>();
  let head = -1n;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const number = await rpc<Hex>("eth_blockNumber").then(BigInt, () => null);
      const now = performance.now();
      if (number !== null && number > head) {
        // The first look stamps only the head: the blocks before it appeared at unknown times.
        for (let n = head < 0n ? number : head + 1n; n <= number; n++) firstSeen.set(n, now);
        head = number;
      }
      await Bun.sleep(HEAD_POLL_MS);
    }
  })();
  return {
    seenAt: (block: bigint) => firstSeen.get(block),
    /** Mean seconds between the blocks whose appearance the loop saw (all after its first look). */
    pace(): number {
      const watched = [...firstSeen.keys()].slice(1);
      if (watched.length < 2) return Number.NaN;
      const [first, last] = [watched[0]!, watched.at(-1)!];
      return (firstSeen.get(last)! - firstSeen.get(first)!) / 1000 / Number(last - first);
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
type ChainClock = ReturnType<typeof chainClock>;

/** When each payment's events arrived on the stream, stamped within 10 ms (the stream client keeps frames). */
function eventTimes(stream: EventStreamClient) {
  const arrived = new Map<string, number>();
  const waiting = new Map<string, Array<(at: number) => void>>();
  let read = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    for (; read < stream.frames.length; read++) {
      const frame = stream.frames[read]!;
      if (frame.data === undefined) continue;
      const event = JSON.parse(frame.data) as { type: string; data: { payment?: { id: string } } };
      const key = `${event.data.payment?.id}/${event.type}`;
      if (arrived.has(key)) continue;
      arrived.set(key, now);
      for (const wake of waiting.get(key) ?? []) wake(now);
      waiting.delete(key);
    }
  }, 10);
  return {
    at: (paymentId: string, type: string) => arrived.get(`${paymentId}/${type}`),
    arrival(paymentId: string, type: string): Promise<number> {
      const key = `${paymentId}/${type}`;
      const at = arrived.get(key);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
    },
    async stop() {
      clearInterval(ticker);
      await stream.close();
    },
  };
}
type EventTimes = ReturnType<typeof eventTimes>;

/**
 * The payer (anvil key 1) on one chain: transfers signed ahead with their nonce, gas and fees, sent
 * one at a time in the order asked, so a send is one call and concurrent payments never share a nonce.
 */
function payerOn(chain: { rpc: Rpc; chainId: number; usdc: Address }) {
  const account = privateKeyToAccount(ANVIL_KEY_1);
  let nonce: number | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    send(to: Address, units: bigint): Promise<{ hash: Hex; sentAt: number }> {
      const turn = queue.then(async () => {
        nonce ??= Number(await chain.rpc<Hex>("eth_getTransactionCount", [account.address, "pending"]));
        const raw = await account.signTransaction({
          type: "eip1559",
          chainId: chain.chainId,
          to: chain.usdc,
          data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, units] }),
          nonce,
          gas: 100_000n,
          maxFeePerGas: parseGwei("100"),
          maxPriorityFeePerGas: parseGwei("1"),
        });
        const sentAt = performance.now();
        const hash = await chain.rpc<Hex>("eth_sendRawTransaction", [raw]);
        nonce++;
        return { hash, sentAt };
      });
      queue = turn.catch(() => {});
      return turn;
    },
  };
}

// ---- One payment, timed ----

interface Rig {
  phase: Phase;
  stack: Stack;
  events: EventTimes;
  /** The chain the payer sends on: the settlement chain (direct) or the source chain (any chain). */
  paid: { rpc: Rpc; clock: ChainClock; payer: ReturnType<typeof payerOn> };
  /** Every chain of the rig, by name, for the block pace and how far `finalized` trails. */
  chains: Array<{ name: string; rpc: Rpc; clock: ChainClock }>;
}

/** Seconds from the transfer's send, and from its block's appearance, to each point. */
interface Sample {
  fromSend: number;
  fromInclusion: number;
  seen: number;
}

async function onePayment(r: Rig, policy: Policy): Promise<Sample> {
  const payment = await r.stack.createPayment({ amount: AMOUNT, ...(BASELINE === undefined ? { speed: policy } : {}) });
  if (BASELINE === undefined && payment.speed !== policy)
    throw new Error(`payment created with speed ${payment.speed}, asked for ${policy}`);
  const { hash, sentAt } = await r.paid.payer.send(getAddress(payment.deposit_address), usdc(AMOUNT));
  const confirmedAt = await confirmation(r, payment.id, perPaymentLimitMs(r.phase, policy));
  const receipt = await r.paid.rpc<{ blockNumber: Hex; status: Hex } | null>("eth_getTransactionReceipt", [hash]);
  if (receipt?.status !== "0x1")
    throw new Error(`transfer ${hash} for ${payment.id}: ${receipt ? "reverted" : "no receipt"}`);
  const includedAt = r.paid.clock.seenAt(BigInt(receipt.blockNumber));
  if (includedAt === undefined) throw new Error(`block ${BigInt(receipt.blockNumber)} of ${hash} was never seen`);
  const seenAt = r.events.at(payment.id, "payment.funds_seen") ?? r.events.at(payment.id, "payment.settling")!;
  return {
    fromSend: (confirmedAt - sentAt) / 1000,
    fromInclusion: (confirmedAt - includedAt) / 1000,
    seen: (seenAt - sentAt) / 1000,
  };
}

/** When payment.confirmed arrived; the API, read every API_CHECK_MS, must say confirmed as well. */
async function confirmation(r: Rig, paymentId: string, limitMs: number): Promise<number> {
  const deadline = performance.now() + limitMs;
  const arrived = r.events.arrival(paymentId, "payment.confirmed");
  let apiFirst: number | undefined;
  for (;;) {
    const at = await Promise.race([arrived, Bun.sleep(API_CHECK_MS).then(() => undefined)]);
    const { status } = await r.stack.getPayment(paymentId);
    if (at !== undefined) {
      if (status !== "confirmed") throw new Error(`${paymentId}: payment.confirmed arrived, the API says ${status}`);
      return at;
    }
    if (status === "confirmed") apiFirst ??= performance.now();
    if (apiFirst !== undefined && performance.now() - apiFirst > 5_000)
      throw new Error(`${paymentId}: confirmed in the API, no payment.confirmed on the stream after 5 s`);
    if (performance.now() > deadline)
      throw new Error(`${paymentId} not confirmed within ${Math.round(limitMs / 1000)} s (status ${status})`);
  }
}

// ---- The rounds ----

interface RoundResult {
  policy: Policy;
  samples: Sample[];
  errors: string[];
}

interface PhaseResult {
  rounds: RoundResult[];
  /** Seconds between blocks as the bench saw them appear, per chain. */
  pace: string;
  /** How far each chain's `finalized` block trailed its head at the end. */
  finalized: string;
}

/** RUNS payments of one policy, one started every STAGGER_S, each timed on its own. */
async function round(r: Rig, policy: Policy): Promise<RoundResult> {
  const start = performance.now();
  const tasks: Array<Promise<Sample>> = [];
  let done = 0;
  for (let i = 0; i < RUNS && !ending; i++) {
    await Bun.sleep(Math.max(0, start + i * STAGGER_S * 1000 - performance.now()));
    tasks.push(
      onePayment(r, policy).then((sample) => {
        done++;
        console.log(
          `${r.phase} ${policy} ${done}/${RUNS}: ${sample.fromSend.toFixed(2)} s from send, ` +
            `${sample.fromInclusion.toFixed(2)} s from inclusion`,
        );
        return sample;
      }),
    );
  }
  const settled = await Promise.allSettled(tasks);
  return {
    policy,
    samples: settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : [])),
    errors: settled.flatMap((s) =>
      s.status === "rejected" ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : [],
    ),
  };
}

async function measured(r: Omit<Rig, "events">): Promise<PhaseResult> {
  const stream = await openEventStream(r.stack.url, r.stack.apiKey);
  if (stream.status !== 200) throw new Error(`event stream: ${stream.status} ${stream.text}`);
  const events = eventTimes(stream);
  try {
    const rounds: RoundResult[] = [];
    for (const policy of POLICIES) rounds.push(await round({ ...r, events }, policy));
    const pace = r.chains.map(({ name, clock }) => `${name} ${clock.pace().toFixed(2)} s`).join(", ");
    const finalized = (
      await Promise.all(
        r.chains.map(async ({ name, rpc }) => {
          const [head, final] = await Promise.all([
            rpc<{ number: Hex }>("eth_getBlockByNumber", ["latest", false]),
            rpc<{ number: Hex }>("eth_getBlockByNumber", ["finalized", false]),
          ]);
          return `${name} ${BigInt(head.number) - BigInt(final.number)} blocks`;
        }),
      )
    ).join(", ");
    return { rounds, pace, finalized };
  } finally {
    await events.stop();
  }
}

/** A clock per chain, stopped with the rig. */
function clocked(rpc: Rpc): ChainClock {
  const clock = chainClock(rpc);
  stops.push(() => clock.stop());
  return clock;
}

async function runDirect(binary: string): Promise<PhaseResult> {
  const stack = await rig(
    startStack({
      subprocess: true,
      binary,
      blockTime: BLOCK_S,
      slotsInAnEpoch: SLOTS,
      confirmations: CONFIRMATIONS,
      pollIntervalMs: POLL_MS,
    }),
  );
  await guardServers();
  const { anvil } = stack.chain;
  const clock = clocked(anvil.rpc);
  return measured({
    phase: "direct",
    stack,
    paid: { rpc: anvil.rpc, clock, payer: payerOn({ rpc: anvil.rpc, chainId: anvil.chainId, usdc: stack.chain.usdc }) },
    chains: [{ name: "settlement chain", rpc: anvil.rpc, clock }],
  });
}

async function runAnyChain(binary: string): Promise<PhaseResult> {
  // Set up on automining anvils (quick), then switched to Base's pace with its settings.
  const x = await rig(
    startCrossChainStack({ subprocess: true, binary, attestationDelayMs: ATTEST_MS, slotsInAnEpoch: SLOTS }),
  );
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
  const source = x.local.source;
  const sourceClock = clocked(source.rpc);
  return measured({
    phase: "any-chain",
    stack: x.stack,
    paid: {
      rpc: source.rpc,
      clock: sourceClock,
      payer: payerOn({ rpc: source.rpc, chainId: LOCAL_SOURCE.chainId, usdc: x.source.usdc }),
    },
    chains: [
      { name: "source chain", rpc: source.rpc, clock: sourceClock },
      { name: "settlement chain", rpc: x.chain.anvil.rpc, clock: clocked(x.chain.anvil.rpc) },
    ],
  });
}

// ---- The figures ----

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
function median(values: number[]): number {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
/** Nearest rank: the smallest value at or above which lie 1% of the values. */
const p99 = (values: number[]) => sorted(values)[Math.ceil(0.99 * values.length) - 1]!;

const COLUMNS = ["policy", "n", "median", "p99", "min", "max", "incl.", "need", "over", "seen"];
const WIDTHS = [17, 3, 7, 7, 7, 7, 7, 7, 7, 7];
const row = (cells: string[]) =>
  cells.map((cell, i) => (i === 0 ? cell.padEnd(WIDTHS[i]!) : cell.padStart(WIDTHS[i]!))).join(" ");
const s2 = (value: number) => value.toFixed(2);

function table(phase: Phase, result: PhaseResult): string {
  const lines = [
    `${" ".repeat(WIDTHS[0]! + 1)}${"seconds from send to confirmed".padEnd(40)}  medians (s)`,
    row(COLUMNS),
  ];
  for (const { policy, samples, errors } of result.rounds) {
    const need = needOf(phase, policy);
    const label = BASELINE === undefined ? policy : `${policy} baseline`;
    if (samples.length === 0) lines.push(row([label, "0", ...COLUMNS.slice(2).map(() => "-")]));
    else {
      const send = samples.map((s) => s.fromSend);
      const inclusion = median(samples.map((s) => s.fromInclusion));
      lines.push(
        row([
          label,
          String(samples.length),
          ...[median(send), p99(send), Math.min(...send), Math.max(...send)].map(s2),
          s2(inclusion),
          s2(need.seconds),
          s2(inclusion - need.seconds),
          s2(median(samples.map((s) => s.seen))),
        ]),
      );
    }
    if (errors.length > 0) lines.push(`  ${errors.length} of ${RUNS} not measured; first: ${errors[0]}`);
  }
  lines.push(...targets(phase, result));
  lines.push(`blocks appeared every: ${result.pace}`);
  if (POLICIES.includes("final"))
    lines.push(
      `finalized trailed the head at the end by: ${result.finalized} (anvil's finality, ` +
        `--slots-in-an-epoch ${SLOTS}; not Base's, whose finalized block trails by many minutes)`,
    );
  return lines.join("\n");
}

/** The fast policy's targets: direct within two blocks and half a second, any chain within 2 s of the bridge. */
function targets(phase: Phase, result: PhaseResult): string[] {
  const fast = result.rounds.find((r) => r.policy === "fast");
  if (!fast || fast.samples.length === 0) return [];
  const send = median(fast.samples.map((s) => s.fromSend));
  const inclusion = median(fast.samples.map((s) => s.fromInclusion));
  if (phase === "direct")
    return [
      `fast: median from send ${s2(send)} s (target < 5 s)`,
      `fast: median from inclusion ${s2(inclusion)} s (target <= 2 block times + 0.5 s = ${s2(2 * BLOCK_S + 0.5)} s)`,
    ];
  const bridge = needOf("any-chain", "fast").seconds;
  return [
    `fast: the bridge's own need ${s2(bridge)} s = ${ATTEST_MS / 1000} s attestation + 3 blocks of ${BLOCK_S} s ` +
      "(the burn's on the source chain, the mint's and the settlement's on the settlement chain)",
    `fast: median minus the bridge's own need ${s2(inclusion - bridge)} s from inclusion (target < 2 s), ` +
      `${s2(send - bridge)} s from send`,
  ];
}

const startedAt = performance.now();
const loadAtStart = loadavg();
const results = new Map<Phase, PromiseSettledResult<PhaseResult>>();
try {
  const binary = BASELINE ?? (await builtBinary());
  console.log(
    `time to confirmed: ${RUNS} payments of ${AMOUNT} USDC per policy (${POLICIES.join(", ")}) and kind ` +
      `(${PHASES.join(", ")}), one started every ${STAGGER_S} s; server ${binary} serve (SQLite` +
      `${BASELINE === undefined ? "" : "; a build without speed policies, payments created without speed"}); ` +
      `blocks every ${BLOCK_S} s on each anvil` +
      (POLICIES.includes("final")
        ? `, finalized ${2 * SLOTS} blocks behind the head (--slots-in-an-epoch ${SLOTS}: anvil's finality, not Base's)`
        : "") +
      `; STABLEGATE_CONFIRMATIONS=${CONFIRMATIONS}, ` +
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
    `\n${phase === "direct" ? "direct (paid on the settlement chain)" : "any chain (paid on the source chain)"}`,
  );
  if (result.status === "fulfilled") {
    console.log(table(phase, result.value));
    if (result.value.rounds.some((r) => r.errors.length > 0)) failed = true;
  } else {
    failed = true;
    console.log(`failed: ${result.reason instanceof Error ? result.reason.message : String(result.reason)}`);
  }
}
console.log(
  "\nincl.: from the transfer's block first seen at the node; need: the chains' own time from that block, " +
    "server aside; over: incl. - need; seen: to payment.funds_seen (else payment.settling) on the stream",
);
console.log(
  `run took ${((performance.now() - startedAt) / 60_000).toFixed(1)} min; load average at start ` +
    `${loadAtStart.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} ` +
    `(${navigator.hardwareConcurrency} cores)`,
);
process.exit(failed ? 1 : 0);
