/**
 * Crashes and outages: the server killed with -9 between crediting and settling resumes from its
 * data dir and settles exactly once; an RPC that answers 503 or drops connections degrades
 * /readyz and delays crediting, never loses it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Hex, parseEventLogs } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { depositFactoryV3Abi, factoryV3Address } from "../../src/chain/deposit-v3.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { settlerRanSince, waitFor } from "../support/wait.ts";

let chain: TestChain;

beforeAll(async () => {
  chain = await startChain();
});

afterAll(async () => {
  await chain?.stop();
});

describe("kill -9", () => {
  let stack: Stack;
  let relayerKey: Hex;

  beforeAll(async () => {
    // A relayer without ETH: the credit happens, the settlement cannot be paid for.
    relayerKey = generatePrivateKey();
    stack = await startStack({ chain, subprocess: true, relayerKey });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  test("a payment credited before the crash settles exactly once after the restart", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    await stack.pay(payment.deposit_address, usdc("25.00"));
    const credited = await stack.mineUntil(
      async () => {
        const p = await stack.getPayment(payment.id);
        return p.amount_received === "25.00" ? p : undefined;
      },
      15_000,
      "the payment to be credited",
    );
    // The settler signs and stores settle() before broadcasting it (so a crash can only lead to
    // a rebroadcast of the same nonce): the payment is settling, but the node refused the
    // transaction for want of gas money and nothing moved.
    expect(["pending", "settling"]).toContain(credited.status);
    await stack.waitForStatus(payment.id, "settling");
    await settlerRanSince(stack); // it tried to broadcast again
    const [stored] = await stack.sql<{ state: string; nonce: number; tx_hash: Hex }>(
      "SELECT state, nonce, tx_hash FROM settlements WHERE payment_id = ?",
      payment.id,
    );
    expect(stored).toMatchObject({ state: "submitted", nonce: 0 });
    expect(await chain.publicClient.getTransaction({ hash: stored!.tx_hash }).catch(() => null)).toBeNull();
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(usdc("25.00"));
    expect(await stack.usdcBalance(stack.payout)).toBe(0n);
    expect((await stack.getPayment(payment.id)).status).toBe("settling");

    await stack.crash();
    const relayer = privateKeyToAccount(relayerKey).address;
    await chain.setBalance(relayer, 10n ** 18n);
    await stack.restart();

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 20_000 });
    expect(confirmed.amount_received).toBe("25.00");
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);

    // Give a duplicate every chance to appear (a whole settlement round after the blocks), then
    // count: one mined settlement, one Settled log.
    await stack.mine(5);
    await settlerRanSince(stack);
    const rows = await stack.sql<{ state: string }>("SELECT state FROM settlements WHERE payment_id = ?", payment.id);
    expect(rows.filter((r) => r.state === "mined")).toHaveLength(1);
    expect(rows.filter((r) => r.state === "submitted")).toHaveLength(0);
    const logs = await settledLogs(payment.id);
    expect(logs).toHaveLength(1);
    expect(parseEventLogs({ abi: depositFactoryV3Abi, logs, eventName: "Settled" })[0]!.args.amount).toBe(
      usdc("25.00"),
    );
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  });
});

describe("kill -9 while the settlement waits for its confirmations", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ chain, subprocess: true, relayerKey: await chain.fundedKey() });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  test("the restarted server finds the mined settlement and confirms without sending another", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    await stack.pay(payment.deposit_address, usdc("25.00"));
    await stack.mine(2);
    await stack.waitForStatus(payment.id, "settling");
    // settle() is broadcast right after "settling" is stored, and mined at once (automine); with 0
    // of its 2 confirmations the server has not yet seen it land.
    const sent = await stack.settlementSent(payment.id);
    expect((await chain.publicClient.waitForTransactionReceipt({ hash: sent, timeout: 5_000 })).status).toBe("success");
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect((await stack.getPayment(payment.id)).status).toBe("settling");

    await stack.crash();
    await stack.mine(3);
    await stack.restart();

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.00");
    await stack.mine(5);
    await settlerRanSince(stack);
    expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
      { state: "mined" },
    ]);
    expect(await settledLogs(payment.id)).toHaveLength(1);
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  });
});

describe("RPC outage", () => {
  let proxy: RpcProxy;
  let stack: Stack;

  beforeAll(async () => {
    proxy = startRpcProxy(chain.anvil.port);
    stack = await startStack({ chain, rpcUrl: proxy.url });
  });

  afterAll(async () => {
    await stack?.stop();
    proxy?.stop();
  });

  test("503s and dropped connections degrade /readyz; once the RPC is back the payment confirms", async () => {
    await waitFor(async () => (await stack.readyz()).chain.ok === true, 5_000, "/readyz to report the chain ok");
    const payment = await stack.createPayment({ amount: "25.00" });

    proxy.mode = "503";
    const during503 = await waitFor(
      async () => {
        const ready = await stack.readyz();
        return ready.chain.ok === false ? ready : undefined;
      },
      5_000,
      "/readyz to report the outage",
    );
    expect(during503.ok).toBe(true); // the API and its store still serve
    expect(typeof during503.chain.last_error).toBe("string");
    expect(during503.chain.last_error.length).toBeGreaterThan(0);

    // Paid while the server cannot see the chain (the payer talks to the node directly); the
    // payer's sync is told to come back later, and nothing is recorded.
    const paid = await stack.pay(payment.deposit_address, usdc("25.00"));
    expect(await stack.sync(payment.id, paid)).toEqual({
      status: 503,
      json: { error: "the chain cannot be reached right now; try again shortly" },
    });
    await stack.mine(3);
    // The watcher has asked the node again since the payment was mined (and was refused).
    const polled = proxy.refused;
    await waitFor(() => proxy.refused >= polled + 2, 5_000, "the server to poll the node again");
    expect(await stack.getPayment(payment.id)).toMatchObject({ status: "pending", amount_received: null });

    proxy.mode = "drop";
    const before = proxy.refused;
    await waitFor(() => proxy.refused > before, 5_000, "the server to hit a dropped connection");
    const duringDrop = await stack.readyz();
    expect(duringDrop.chain.ok).toBe(false);
    expect(typeof duringDrop.chain.last_error).toBe("string");
    expect(await stack.getPayment(payment.id)).toMatchObject({ status: "pending", amount_received: null });

    proxy.mode = "up";
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 20_000 });
    expect(confirmed.amount_received).toBe("25.00");
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    await waitFor(async () => (await stack.readyz()).chain.last_error === null, 5_000, "/readyz to recover");
  });
});

function settledLogs(paymentId: string) {
  return chain.publicClient.getLogs({
    address: factoryV3Address,
    event: depositFactoryV3Abi.find((x) => x.type === "event" && x.name === "Settled")!,
    args: { paymentId: paymentId as Hex },
    fromBlock: 0n,
    toBlock: "latest",
  });
}

interface RpcProxy {
  url: string;
  /** up: pass through; 503: answer every request 503; drop: cut every connection. */
  mode: "up" | "503" | "drop";
  /** Requests answered 503 or connections cut so far. */
  readonly refused: number;
  stop(): void;
}

type ProxySocket = import("bun").Socket<{ upstream: import("bun").Socket<unknown> | null; queued: Uint8Array[] }>;

/** A TCP pass-through to anvil that can be switched to fail the way real RPC providers do. */
function startRpcProxy(targetPort: number): RpcProxy {
  const clients = new Set<ProxySocket>();
  let refused = 0;
  const proxy: RpcProxy = {
    url: "",
    mode: "up",
    get refused() {
      return refused;
    },
    stop() {
      for (const client of clients) client.terminate();
      listener.stop(true);
    },
  };

  function refuse(client: ProxySocket): boolean {
    if (proxy.mode === "up") return false;
    refused++;
    if (proxy.mode === "503") {
      client.write(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 11\r\nconnection: close\r\n\r\nunavailable",
      );
      client.end();
    } else {
      client.terminate();
    }
    client.data.upstream?.terminate();
    return true;
  }

  const listener = Bun.listen<{ upstream: import("bun").Socket<unknown> | null; queued: Uint8Array[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { upstream: null, queued: [] };
        clients.add(client);
        if (refuse(client)) return;
        void Bun.connect({
          hostname: "127.0.0.1",
          port: targetPort,
          socket: {
            open(upstream) {
              client.data.upstream = upstream;
              for (const chunk of client.data.queued) upstream.write(chunk);
              client.data.queued = [];
            },
            data(_upstream, chunk) {
              client.write(chunk);
            },
            close() {
              client.end();
            },
            error() {
              client.terminate();
            },
          },
        }).catch(() => client.terminate());
      },
      data(client, chunk) {
        if (refuse(client)) return;
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.queued.push(new Uint8Array(chunk));
      },
      close(client) {
        clients.delete(client);
        client.data.upstream?.end();
      },
      error(client) {
        clients.delete(client);
        client.data.upstream?.terminate();
      },
    },
  });
  proxy.url = `http://127.0.0.1:${listener.port}`;
  return proxy;
}
