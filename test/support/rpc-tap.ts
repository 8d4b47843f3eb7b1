/** A JSON-RPC pass-through in front of an anvil, for the node behaviours anvil alone does not show. */
import { type Address, type Hex, keccak256, parseTransaction, toHex } from "viem";

/**
 * Passes every call on to the node, and can act when a transaction is sent: the hook runs
 * after the node has the transaction and before the sender hears back, which is where a crash
 * leaves a sent transaction the sender never recorded.
 */
export interface RpcTap {
  url: string;
  /** Once, for the next transaction sent to `to`: runs `fn` before the node's answer is passed on; resolves with the transaction's hash after `fn`. */
  onNextSendTo(to: Address, fn: () => Promise<void>): Promise<Hex>;
  /** As onNextSendTo, but the node never gets that transaction: `fn` runs in its stead (a crash before the send). */
  withholdNextSendTo(to: Address, fn: () => Promise<void>): Promise<Hex>;
  /** The params of every call of `method` asked so far, in order. */
  asked(method: string): unknown[][];
  /** Every eth_getLogs block range asked so far, in order, with the error answered in the node's stead (`refuseLogs`). */
  logsAsked: Array<{ from: number; to: number; refused?: string }>;
  /** The next `times` receipts of `hash` the node has are answered as not found, as by a backend behind the one that mined it. */
  lagReceipt(hash: Hex, times: number): void;
  /**
   * Once, when the node first answers a receipt of `hash` as mined: runs `fn` before that answer
   * is passed on, so whoever asked goes on only after it. Resolves once `fn` has run.
   */
  holdReceipt(hash: Hex, fn: () => Promise<void>): Promise<void>;
  /**
   * Runs `fn` (a change to the node, such as anvil_reorg) with no call at the node: calls that
   * arrive meanwhile wait for it, and those already there are answered first. Whoever talks
   * through the tap sees the node before `fn` and after it, never in between, as a real node's
   * switch to another branch is seen; anvil_reorg rolls back and mines the new blocks one at a
   * time, and eth_blockNumber asked during a reorg of 13 blocks answered every height between.
   */
  atomically<T>(fn: () => Promise<T>): Promise<T>;
  /** How many receipts lagReceipt has hidden so far. */
  readonly receiptsHidden: number;
  stop(): void;
}

type Call = { id?: unknown; method: string; params?: unknown[] };

/**
 * `callsBlocksBehind`: eth_call at "latest" is answered from that many blocks back, as a
 * load-balanced provider does when the backend it picks lags the one that served the logs.
 * `refuseLogs`: the error message, if any, to answer an eth_getLogs over [from, to] with instead
 * of passing it on, as a hosted node refuses a range it finds too large.
 */
export function startRpcTap(
  upstream: string,
  opts: { callsBlocksBehind?: number; refuseLogs?: (from: number, to: number) => string | undefined } = {},
): RpcTap {
  const logsAsked: RpcTap["logsAsked"] = [];
  const calls: Call[] = [];
  const lagging = new Map<string, number>();
  let receiptsHidden = 0;
  let holding: { hash: string; fn: () => Promise<void>; done: () => void } | null = null;
  let hook: { to: Address; fn: () => Promise<void>; sent: (hash: Hex) => void; withhold: boolean } | null = null;
  const ask = (body: string) =>
    fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body });

  async function behind(call: Call): Promise<Call> {
    const lag = opts.callsBlocksBehind;
    const tag = call.params?.[1];
    if (!lag || call.method !== "eth_call" || (tag !== undefined && tag !== "latest")) return call;
    const head = Number(
      (
        (await (await ask(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber" }))).json()) as {
          result: Hex;
        }
      ).result,
    );
    return { ...call, params: [call.params![0], toHex(Math.max(0, head - lag))] };
  }

  /** Records an eth_getLogs call; the refusal to answer it with, if any. */
  function logsRefusal(call: Call): string | undefined {
    if (call.method !== "eth_getLogs") return undefined;
    const filter = call.params?.[0] as { fromBlock?: Hex; toBlock?: Hex };
    const asked = { from: Number(filter.fromBlock), to: Number(filter.toBlock) };
    const refused = opts.refuseLogs?.(asked.from, asked.to);
    logsAsked.push(refused ? { ...asked, refused } : asked);
    return refused;
  }

  /** The node's answer to a receipt call, or "not found" while lagReceipt says so. */
  function lagged(call: Call, text: string): string {
    const hash = String(call.params?.[0]).toLowerCase();
    const left = lagging.get(hash) ?? 0;
    if (left === 0 || (JSON.parse(text) as { result?: unknown }).result == null) return text;
    lagging.set(hash, left - 1);
    receiptsHidden++;
    return JSON.stringify({ jsonrpc: "2.0", id: call.id, result: null });
  }

  /** Runs holdReceipt's `fn` if this is the first answer showing its receipt mined. */
  async function held(call: Call, text: string): Promise<void> {
    const armed = holding;
    if (!armed || String(call.params?.[0]).toLowerCase() !== armed.hash) return;
    if ((JSON.parse(text) as { result?: unknown }).result == null) return;
    holding = null;
    await armed.fn();
    armed.done();
  }

  /** The eth_sendRawTransaction to `to` among the call(s), if any. */
  const sendTo = (parsed: Call | Call[], to: Address) =>
    [parsed]
      .flat()
      .find(
        (c) =>
          c.method === "eth_sendRawTransaction" &&
          parseTransaction(c.params![0] as Hex).to?.toLowerCase() === to.toLowerCase(),
      );

  let gate: Promise<void> | null = null;
  let atNode = 0;
  let drained: (() => void) | null = null;

  async function atomically<T>(fn: () => Promise<T>): Promise<T> {
    while (gate) await gate;
    let open = () => {};
    gate = new Promise<void>((resolve) => void (open = resolve));
    try {
      if (atNode > 0) await new Promise<void>((resolve) => void (drained = resolve));
      return await fn();
    } finally {
      gate = null;
      open();
    }
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      while (gate) await gate;
      atNode++;
      try {
        return await pass(req);
      } finally {
        if (--atNode === 0 && drained) {
          drained();
          drained = null;
        }
      }
    },
  });

  async function pass(req: Request): Promise<Response> {
    let body = await req.text();
    const parsed = JSON.parse(body) as Call | Call[];
    calls.push(...[parsed].flat());
    const refusal = Array.isArray(parsed) ? undefined : logsRefusal(parsed);
    if (refusal && !Array.isArray(parsed))
      return Response.json({ jsonrpc: "2.0", id: parsed.id, error: { code: -32000, message: refusal } });
    if (opts.callsBlocksBehind)
      body = JSON.stringify(Array.isArray(parsed) ? await Promise.all(parsed.map(behind)) : await behind(parsed));
    if (hook?.withhold) {
      const armed = hook;
      const sent = sendTo(parsed, armed.to);
      if (sent) {
        hook = null;
        await armed.fn();
        armed.sent(keccak256(sent.params![0] as Hex));
        return Response.json({
          jsonrpc: "2.0",
          id: sent.id,
          error: { code: -32000, message: "withheld by the tap" },
        });
      }
    }
    const answer = await ask(body);
    let text = await answer.text();
    if (!Array.isArray(parsed) && parsed.method === "eth_getTransactionReceipt") {
      text = lagged(parsed, text);
      await held(parsed, text);
    }
    const armed = hook;
    if (armed) {
      const sent = sendTo(parsed, armed.to);
      if (sent) {
        hook = null;
        await armed.fn();
        armed.sent(keccak256(sent.params![0] as Hex));
      }
    }
    return new Response(text, { status: answer.status, headers: { "content-type": "application/json" } });
  }

  return {
    url: `http://127.0.0.1:${server.port}`,
    onNextSendTo: (to, fn) => new Promise<Hex>((sent) => void (hook = { to, fn, sent, withhold: false })),
    withholdNextSendTo: (to, fn) => new Promise<Hex>((sent) => void (hook = { to, fn, sent, withhold: true })),
    asked: (method) => calls.filter((c) => c.method === method).map((c) => c.params ?? []),
    logsAsked,
    lagReceipt: (hash, times) => void lagging.set(hash.toLowerCase(), times),
    holdReceipt: (hash, fn) => new Promise<void>((done) => void (holding = { hash: hash.toLowerCase(), fn, done })),
    atomically,
    get receiptsHidden() {
      return receiptsHidden;
    },
    stop: () => void server.stop(true),
  };
}
