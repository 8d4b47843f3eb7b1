/**
 * Three `serve` replicas on one PostgreSQL database and one anvil, as real processes. Payments
 * made through any replica are read through any other. The chain lease's holder is killed with
 * -9 in the middle of a burst of payments and settlements; another replica takes the lease
 * over, and afterwards: every payment that got a 201 exists once, every paid payment settled
 * exactly once (one Settled log each) with no nonce left unused, and every event reached a
 * healthy webhook receiver exactly once, except those the killed replica was sending when it
 * died (delivery is at least once across a crash; those arrive again with the same webhook-id).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { depositFactoryV3Abi, factoryV3Address } from "../../src/chain/deposit-v3.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir } from "../support/server.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

interface Replica {
  name: string;
  proc: ServeProcess;
  /** False once killed, or while paused: it answers nothing then. */
  alive: boolean;
}

let chain: TestChain;
let stack: Stack;
let receiver: Receiver;
const dirs: string[] = [];
const replicas: Replica[] = [];

beforeAll(async () => {
  chain = await startChain();
  receiver = startReceiver();
  const databaseUrl = await createTestDatabase();
  // The stack makes the account, pays and mines; its own server is stopped, and three replicas
  // share its database and relayer key, each with a data directory of its own, as on separate
  // machines, and one public address, as behind a load balancer.
  stack = await startStack({
    chain,
    subprocess: true,
    relayerKey: await chain.fundedKey(),
    env: {
      STABLEGATE_DATABASE_URL: databaseUrl,
      STABLEGATE_BASE_URL: "https://pay.example.com",
      STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "true",
    },
  });
  await stack.crash();
  for (let i = 0; i < 3; i++) {
    const dataDir = makeTempDir();
    dirs.push(dataDir);
    const proc = await startServeProcess({ ...stack.env, STABLEGATE_DATA_DIR: dataDir });
    replicas.push({ name: `replica ${i}`, proc, alive: true });
  }
}, 120_000);

afterAll(async () => {
  for (const { proc } of replicas) {
    proc.proc.kill("SIGCONT"); // a paused one cannot die
    await proc.stop();
  }
  await stack?.stop();
  receiver?.stop();
  await chain?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A request to one replica, with the API key (or, for /readyz, the metrics token that shows its details). */
const call = (replica: Replica, path: string, body?: unknown) =>
  api(replica.proc.url, path === "/readyz" ? stack.env.STABLEGATE_METRICS_TOKEN! : stack.apiKey)(path, { body });

const alive = () => replicas.filter((r) => r.alive);

/** The replica whose /readyz says it holds the chain lease, and its token; null while none does. */
async function leaseHolder(): Promise<{ replica: Replica; token: number } | null> {
  for (const replica of alive()) {
    const readyz = (await call(replica, "/readyz")).json;
    const lease = readyz.leases.find((l: { name: string }) => l.name === "chain");
    if (lease.held) return { replica, token: lease.token };
  }
  return null;
}

/** A holder other than `previous`, with a newer token: the lease taken over. */
const takenOver = (previous: { token: number }) =>
  waitFor(
    async () => {
      const holder = await leaseHolder();
      return holder && holder.token > previous.token ? holder : null;
    },
    30_000,
    "another replica to take the chain lease over",
  );

/** `count` payments made round-robin through the replicas alive, each paid in full. */
async function burst(count: number, amount: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await call(alive()[i % alive().length]!, "/api/v1/payments", { amount });
    expect(res.status).toBe(201);
    ids.push(res.json.id);
    await stack.pay(res.json.deposit_address, usdc(amount));
  }
  return ids;
}

/** Mines until every payment of `ids` is settled (status confirmed), as a replica alive reports. */
const allConfirmed = (ids: string[]) =>
  stack.mineUntil(
    async () => {
      for (const id of ids)
        if ((await call(alive()[0]!, `/api/v1/payments/${id}`)).json.status !== "confirmed") return false;
      return true;
    },
    90_000,
    "every payment to be settled and confirmed",
  );

/**
 * Each payment of `ids` stored once and settled exactly once (one Settled log, one mined
 * settlement), and no relayer transaction waiting behind a nonce gap.
 */
async function expectSettledOnce(ids: string[]): Promise<void> {
  expect(new Set(ids).size).toBe(ids.length);
  await stack.mine(3); // a duplicate would have every chance to be mined
  const settled = depositFactoryV3Abi.find((x) => x.type === "event" && x.name === "Settled")!;
  for (const id of ids) {
    expect(await stack.sql("SELECT id FROM payments WHERE id = ?", id)).toHaveLength(1);
    const logs = await chain.publicClient.getLogs({
      address: factoryV3Address,
      event: settled,
      args: { paymentId: id as Hex },
      fromBlock: 0n,
    });
    expect([id, logs.length]).toEqual([id, 1]);
    expect(await stack.sql("SELECT id FROM settlements WHERE payment_id = ? AND state = 'mined'", id)).toHaveLength(1);
  }
  const relayer = privateKeyToAccount(stack.env.STABLEGATE_RELAYER_KEY as Hex).address;
  const [latest, pending] = await Promise.all([
    chain.publicClient.getTransactionCount({ address: relayer, blockTag: "latest" }),
    chain.publicClient.getTransactionCount({ address: relayer, blockTag: "pending" }),
  ]);
  expect(pending).toBe(latest);
}

describe("replicas on one PostgreSQL database", () => {
  test("a payment made through one replica is read through every other; one holds the lease, all are ready", async () => {
    const created = await call(alive()[0]!, "/api/v1/payments", { amount: "1.00" });
    expect(created.status).toBe(201);
    for (const replica of alive())
      expect((await call(replica, `/api/v1/payments/${created.json.id}`)).json).toEqual(created.json);
    await waitFor(leaseHolder, 30_000, "a replica to hold the chain lease");
    const holders = [];
    for (const replica of alive()) {
      const readyz = await call(replica, "/readyz");
      expect(readyz.status).toBe(200);
      if (readyz.json.leases[0].held) holders.push(replica.name);
    }
    expect(holders).toHaveLength(1);
  }, 60_000); // run first, it waits out the lease of the stack's own server, killed in beforeAll

  test("kill -9 of the lease holder mid-burst: taken over; every payment once, settled once, each event sent once", async () => {
    const endpoint = await call(alive()[0]!, "/api/v1/webhook_endpoints", { url: receiver.url });
    expect(endpoint.status).toBe(201);
    const first = await waitFor(leaseHolder, 30_000, "a replica to hold the chain lease");
    const ids = await burst(8, "3.00");
    // Some are credited and being settled by the holder when it dies.
    await stack.mineUntil(
      async () => (await call(first.replica, "/api/v1/payments?status=settling")).json.data?.length > 0,
      20_000,
      "a settlement in flight",
    );
    const { holder } = (await stack.sql<{ holder: string }>("SELECT holder FROM leases WHERE name = 'chain'"))[0]!;
    first.replica.alive = false;
    await first.replica.proc.stop(); // SIGKILL
    // Deliveries the dead replica had claimed and not recorded: it may have sent them (see above).
    const claimed = await stack.sql<{ event_id: string }>(
      "SELECT event_id FROM webhook_deliveries WHERE claimed_by = ? AND state = 'pending'",
      holder,
    );
    ids.push(...(await burst(8, "4.00")));
    const next = await takenOver(first);
    expect(next.replica).not.toBe(first.replica);
    await allConfirmed(ids);
    await expectSettledOnce(ids);

    await waitFor(
      async () => (await stack.sql("SELECT id FROM webhook_deliveries WHERE state = 'pending'")).length === 0,
      90_000, // the dead replica's claims lapse after 30 s
      "every webhook delivery to be made",
    );
    const events = await stack.sql<{ id: string }>(
      "SELECT e.id FROM events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE d.endpoint_id = ?",
      endpoint.json.id,
    );
    expect(events.length).toBeGreaterThanOrEqual(ids.length * 2); // settling and confirmed, at least
    const mayRepeat = new Set(claimed.map((row) => row.event_id));
    for (const { id } of events) {
      const received = receiver.hits.filter((hit) => hit.id === id).length;
      if (mayRepeat.has(id)) expect(received).toBeGreaterThanOrEqual(1);
      else expect([id, received]).toEqual([id, 1]);
    }
  }, 240_000);

  test("a holder paused past its lease (SIGSTOP) wakes to find it gone: it settles nothing twice, and steps down", async () => {
    const paused = await waitFor(leaseHolder, 30_000, "a replica to hold the chain lease");
    // Work in its hands when it stops: payments paid, their credits and settlements under way.
    const ids = await burst(3, "2.00");
    paused.replica.alive = false;
    paused.replica.proc.proc.kill("SIGSTOP");
    try {
      await takenOver(paused);
      ids.push(...(await burst(3, "2.50")));
      await allConfirmed(ids);
    } finally {
      paused.replica.proc.proc.kill("SIGCONT");
      paused.replica.alive = true;
    }
    // Awake, it believes it holds the lease until its next renewal is refused; meanwhile its loops
    // go on from where they stopped, and every write they try is fenced.
    await waitFor(
      async () => (await call(paused.replica, "/readyz")).json.leases[0].held === false,
      20_000,
      "the woken replica to step down",
    );
    ids.push(...(await burst(2, "2.75")));
    await allConfirmed(ids);
    await expectSettledOnce(ids);
  }, 240_000);
});
