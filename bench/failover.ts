/**
 * Failover of the chain lease: how long the chain side stays without a holder when its holder
 * dies. Two `serve` replicas share one PostgreSQL database (the suite's embedded server, durable
 * settings), one anvil with the contracts, one relayer key and one public address, each with a
 * data directory of its own. Each round finds the holder through /readyz, stops it, and times
 * until the other replica's /readyz says it holds the lease (polled every 50 ms); the stopped
 * one is then started again on its data directory, and takes part in the next round.
 *
 *   bun bench/failover.ts [--kills 10] [--handovers 3]
 *
 * `--kills`: kill -9, as a crash or a lost machine: the lease must lapse unrenewed (LEASE_TTL_MS
 * in src/leases/lease.ts), then the other replica takes it on its next try (every 2 s). The aim is
 * within 15 s. `--handovers`: SIGTERM, a clean stop: the holder releases the lease as it stops.
 * Loopback only; everything it starts is stopped however the run ends, within a time limit.
 */
import { rmSync } from "node:fs";
import { LEASE_TTL_MS } from "../src/leases/lease.ts";
import { createTestDatabase } from "../test/support/postgres.ts";
import { type ServeProcess, startServeProcess } from "../test/support/serve-process.ts";
import { makeTempDir } from "../test/support/server.ts";
import { TEST_METRICS_TOKEN } from "../test/support/stack.ts";
import { startChain } from "../test/support/test-chain.ts";
import { numberFlag, percentile } from "./lib.ts";

const KILLS = numberFlag(process.argv, "kills", 10);
const HANDOVERS = numberFlag(process.argv, "handovers", 3);
const limitMs = (KILLS + HANDOVERS) * 45_000 + 120_000;
setTimeout(() => {
  console.error(`bench: time limit of ${limitMs / 1000} s reached; stopping`);
  process.exit(1);
}, limitMs).unref();

const chain = await startChain();
const dirs = [makeTempDir(), makeTempDir()];
const replicas: ServeProcess[] = [];
try {
  const env = {
    STABLEGATE_DATABASE_URL: await createTestDatabase("durable"),
    STABLEGATE_RELAYER_KEY: await chain.fundedKey(),
    STABLEGATE_BASE_URL: "https://pay.example.test",
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: String(chain.anvil.chainId),
    STABLEGATE_USDC_ADDRESS: chain.usdc,
    STABLEGATE_RPC_URL: chain.rpcUrl,
    STABLEGATE_POLL_INTERVAL_MS: "500",
    STABLEGATE_LOG_LEVEL: "error",
    // /readyz shows the leases only to a caller with the metrics token.
    STABLEGATE_METRICS_TOKEN: TEST_METRICS_TOKEN,
  };
  const start = (i: number) => startServeProcess({ ...env, STABLEGATE_DATA_DIR: dirs[i]! });
  for (let i = 0; i < 2; i++) replicas.push(await start(i));

  console.log(
    `Stablegate lease failover: 2 replicas on one PostgreSQL database, lease TTL ${LEASE_TTL_MS / 1000} s; ` +
      `${KILLS} kill -9 and ${HANDOVERS} SIGTERM of the holder`,
  );
  const kills = await rounds(KILLS, "SIGKILL", start);
  const handovers = await rounds(HANDOVERS, "SIGTERM", start);
  console.log();
  summarise("kill -9 (the lease lapses)", kills, 15_000);
  summarise("SIGTERM (released at stop)", handovers, null);
  process.exitCode = kills.every((ms) => ms <= 15_000) ? 0 : 1;
} finally {
  for (const replica of replicas) await replica.stop();
  await chain.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

/**
 * `count` rounds of stopping the holder with `signal` and starting it again (`start(i)`, on its
 * data directory) once the other holds the lease; the milliseconds until the other held it.
 */
async function rounds(
  count: number,
  signal: "SIGKILL" | "SIGTERM",
  start: (i: number) => Promise<ServeProcess>,
): Promise<number[]> {
  const times: number[] = [];
  for (let round = 1; round <= count; round++) {
    const holder = await until(async () => {
      for (let i = 0; i < replicas.length; i++) if ((await lease(i))?.held) return i;
      return null;
    }, "a replica to hold the lease");
    const other = 1 - holder;
    // At a random moment of the holder's renewal cycle and the other's cycle of tries, as a crash
    // would come: stopping right after a restart would line the cycles up the same way every round.
    await Bun.sleep(Math.random() * 6_000);
    const stopped = Date.now();
    replicas[holder]!.proc.kill(signal);
    await replicas[holder]!.exited;
    await until(async () => (await lease(other))?.held === true || null, "the other replica to take the lease");
    const ms = Date.now() - stopped;
    times.push(ms);
    console.log(
      `  ${signal.padEnd(7)} round ${String(round).padStart(2)}: replica ${other} held the lease after ${ms} ms`,
    );
    replicas[holder] = await start(holder);
  }
  return times;
}

async function lease(i: number): Promise<{ held: boolean } | null> {
  try {
    const res = await fetch(`${replicas[i]!.url}/readyz`, {
      headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` },
    });
    const readyz = (await res.json()) as { leases: Array<{ held: boolean }> };
    return readyz.leases[0] ?? null;
  } catch {
    return null; // stopped, or starting
  }
}

async function until<T>(fn: () => Promise<T | null>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await fn();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within 60 s`);
    await Bun.sleep(50);
  }
}

function summarise(name: string, times: number[], aimMs: number | null): void {
  if (times.length === 0) return;
  const sorted = [...times].sort((a, b) => a - b);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const aim = aimMs === null ? "" : `  ${sorted.at(-1)! <= aimMs ? "MET   " : "MISSED"} aim: within ${s(aimMs)}`;
  console.log(
    `${name.padEnd(30)} min ${s(sorted[0]!)}, median ${s(percentile(sorted, 0.5))}, max ${s(sorted.at(-1)!)}${aim}`,
  );
}
