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
import { depositFactoryAbi, factoryAddress } from "../../src/chain/contracts.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type ServeProcess, startServeProcess } from "../support/serve-process.ts";
import { makeTempDir } from "../support/server.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

interface Replica {
  name: string;
  url: () => string;
  kill(): Promise<void>;
  alive: boolean;
}

let chain: TestChain;
let stack: Stack;
let receiver: Receiver;
const others: ServeProcess[] = [];
const dirs: string[] = [];
let replicas: Replica[] = [];

beforeAll(async () => {
  chain = await startChain();
  receiver = startReceiver();
  const databaseUrl = await createTestDatabase();
  // Replica 0 is the stack's own server process; 1 and 2 share its database and relayer key,
  // each with a data directory of its own, as on separate machines.
  stack = await startStack({
    chain,
    subprocess: true,
    relayerKey: await chain.fundedKey(),
    // One public address for all, as behind a load balancer.
    env: {
      STABLEGATE_DATABASE_URL: databaseUrl,
      STABLEGATE_BASE_URL: "https://pay.example.com",
      STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "true",
    },
  });
  for (let i = 1; i <= 2; i++) {
    const dataDir = makeTempDir();
    dirs.push(dataDir);
    others.push(await startServeProcess({ ...stack.env, STABLEGATE_DATA_DIR: dataDir }));
  }
  replicas = [
    { name: "replica 0", url: () => stack.url, kill: () => stack.crash(), alive: true },
    ...others.map((proc, i) => ({
      name: `replica ${i + 1}`,
      url: () => proc.url,
      kill: () => proc.stop(),
      alive: true,
    })),
  ];
}, 120_000);

afterAll(async () => {
  for (const proc of others) await proc.stop();
  await stack?.stop();
  receiver?.stop();
  await chain?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function call(replica: Replica, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(replica.url() + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** The replica whose /readyz says it holds the chain lease, and its token; null while none does. */
async function leaseHolder(): Promise<{ replica: Replica; token: number } | null> {
  for (const replica of replicas.filter((r) => r.alive)) {
    const readyz = (await call(replica, "/readyz")).json;
    const lease = readyz.leases.find((l: { name: string }) => l.name === "chain");
    if (lease.held) return { replica, token: lease.token };
  }
  return null;
}

describe("replicas on one PostgreSQL database", () => {
  test("a payment made through one replica is read through every other", async () => {
    const created = await call(replicas[1]!, "/api/v1/payments", { amount: "1.00" });
    expect(created.status).toBe(201);
    for (const replica of replicas)
      expect((await call(replica, `/api/v1/payments/${created.json.id}`)).json).toEqual(created.json);
    // One holder, and the others ready all the same (a load balancer keeps them in rotation).
    const holders = [];
    for (const replica of replicas) {
      const readyz = await call(replica, "/readyz");
      expect(readyz.status).toBe(200);
      if (readyz.json.leases[0].held) holders.push(replica.name);
    }
    expect(holders.length).toBeLessThanOrEqual(1);
  });

  test("kill -9 of the lease holder mid-burst: taken over; every payment once, settled once, each event sent once", async () => {
    const endpoint = await call(replicas[2]!, "/api/v1/webhook_endpoints", { url: receiver.url });
    expect(endpoint.status).toBe(201);
    const first = await waitFor(leaseHolder, 30_000, "a replica to hold the chain lease");

    const created: Array<{ id: string; deposit_address: string }> = [];
    const burst = async (count: number, amount: string) => {
      for (let i = 0; i < count; i++) {
        const alive = replicas.filter((r) => r.alive);
        const replica = alive[i % alive.length]!;
        const res = await call(replica, "/api/v1/payments", { amount });
        expect(res.status).toBe(201);
        created.push(res.json);
        await stack.pay(res.json.deposit_address, usdc(amount));
      }
    };
    await burst(8, "3.00");
    // Some are credited and being settled by the holder when it dies.
    await stack.mineUntil(
      async () => (await call(first.replica, "/api/v1/payments?status=settling")).json.data?.length > 0,
      20_000,
      "a settlement in flight",
    );
    first.replica.alive = false;
    await first.replica.kill();
    // Claims the dead replica held on webhook deliveries: those may be sent twice (see above).
    const claimed: Array<{ event_id: string }> = []; // TODO claims
    await burst(8, "4.00");

    const next = await waitFor(
      async () => {
        const holder = await leaseHolder();
        return holder && holder.token > first.token ? holder : null;
      },
      30_000,
      "another replica to take the chain lease over",
    );
    expect(next.replica).not.toBe(first.replica);

    const survivor = replicas.find((r) => r.alive)!;
    await stack.mineUntil(
      async () => {
        for (const payment of created) {
          if ((await call(survivor, `/api/v1/payments/${payment.id}`)).json.status !== "confirmed") return false;
        }
        return true;
      },
      90_000,
      "every payment to be settled and confirmed",
    );

    // Every 201 exists once.
    const ids = created.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const stored = stack.sql<{ id: string }>("SELECT id FROM payments");
    for (const id of ids) expect(stored.filter((row) => row.id === id)).toHaveLength(1);

    // Settled exactly once each, on chain and in the store; the relayer has no transaction
    // waiting behind a nonce gap.
    await stack.mine(3);
    for (const id of ids) {
      const logs = await chain.publicClient.getLogs({
        address: factoryAddress,
        event: depositFactoryAbi.find((x) => x.type === "event" && x.name === "Settled")!,
        args: { paymentId: id as Hex },
        fromBlock: 0n,
      });
      expect(logs).toHaveLength(1);
      const mined = stack.sql("SELECT id FROM settlements WHERE payment_id = ? AND state = 'mined'", id);
      expect(mined).toHaveLength(1);
    }
    const relayer = privateKeyToAccount(stack.env.STABLEGATE_RELAYER_KEY as Hex).address;
    const [latest, pending] = await Promise.all([
      chain.publicClient.getTransactionCount({ address: relayer, blockTag: "latest" }),
      chain.publicClient.getTransactionCount({ address: relayer, blockTag: "pending" }),
    ]);
    expect(pending).toBe(latest);

    // Every event reached the receiver: exactly once, unless the dead replica was sending it.
    await waitFor(
      () => stack.sql("SELECT id FROM webhook_deliveries WHERE state = 'pending'").length === 0,
      60_000,
      "every webhook delivery to be made",
    );
    const events = stack.sql<{ id: string }>("SELECT id FROM events WHERE account_id = ?", stack.accountId);
    const mayRepeat = new Set(claimed.map((row) => row.event_id));
    for (const { id } of events) {
      const received = receiver.hits.filter((hit) => hit.id === id).length;
      if (mayRepeat.has(id)) expect(received).toBeGreaterThanOrEqual(1);
      else expect([id, received]).toEqual([id, 1]);
    }
    expect(events.length).toBeGreaterThanOrEqual(ids.length * 2); // settling and confirmed, at least
  }, 240_000);
});
