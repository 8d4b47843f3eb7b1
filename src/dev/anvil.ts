/**
 * A local anvil node from the project's dev dependencies, for `stablegate dev` and the tests
 * (a real chain per test file). The deterministic deployment proxy is predeployed, as on most
 * real chains.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Hex } from "viem";
import { freePort } from "../lib/free-port.ts";
import { drainTail } from "../lib/stream-tail.ts";
import { watchChild } from "./watchdog.ts";

// Source checkouts find node_modules beside src/; the compiled binary looks in the working dir.
const ROOTS = [resolve(import.meta.dir, "../.."), process.cwd()];
const DEFAULT_CHAIN_ID = 31337;

/** Private keys of the first five accounts of anvil's default mnemonic ("test test ... junk"). */
export const ANVIL_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
] as const satisfies readonly Hex[];
export const [ANVIL_KEY_0, ANVIL_KEY_1, ANVIL_KEY_2, ANVIL_KEY_3, ANVIL_KEY_4] = ANVIL_KEYS;

export type Anvil = {
  rpcUrl: string;
  port: number;
  chainId: number;
  /** Raw JSON-RPC call; throws on an RPC error. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** evm_snapshot: an id to pass to `revert`. */
  snapshot(): Promise<Hex>;
  /** evm_revert to a snapshot (which anvil then forgets: take a new one to revert again). */
  revert(id: Hex): Promise<void>;
  stop(): Promise<void>;
};

/**
 * `chainId` (default 31337) lets two anvils stand for two chains, as the CCTP tests need.
 * `slotsInAnEpoch` sets how far anvil's `safe` (one epoch) and `finalized` (two) blocks trail the
 * head; anvil's own default is 32.
 */
export async function startAnvil(
  opts: { blockTime?: number; port?: number; chainId?: number; slotsInAnEpoch?: number } = {},
): Promise<Anvil> {
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  // Anvil cannot pick its own port; another process may grab ours between probe and bind, so retry.
  for (let attempt = 1; ; attempt++) {
    const port = attempt === 1 && opts.port ? opts.port : await freePort();
    const proc = Bun.spawn(
      [
        anvilBinary(),
        "--port",
        String(port),
        "--host",
        "127.0.0.1",
        "--chain-id",
        String(chainId),
        "--silent",
        ...(opts.blockTime ? ["--block-time", String(opts.blockTime)] : []),
        ...(opts.slotsInAnEpoch ? ["--slots-in-an-epoch", String(opts.slotsInAnEpoch)] : []),
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    const watchdog = watchChild(proc.pid);
    // Drained as it comes: anvil would block on a full stderr pipe (and every RPC with it).
    const stderrTail = drainTail(proc.stderr);
    const rpcUrl = `http://127.0.0.1:${port}`;
    const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(rpcUrl, method, params);
    const stop = async () => {
      proc.kill();
      await proc.exited;
      await watchdog.release();
    };
    if (await waitUntilReady(rpcUrl, chainId, proc, 10_000)) {
      return {
        rpcUrl,
        port,
        chainId,
        rpc,
        snapshot: () => rpc<Hex>("evm_snapshot"),
        revert: async (id) => {
          if (!(await rpc<boolean>("evm_revert", [id]))) throw new Error(`evm_revert ${id} failed`);
        },
        stop,
      };
    }
    const stderr = proc.exitCode === null ? "" : await stderrTail();
    await stop();
    if (attempt >= 3) throw new Error(`anvil did not start on port ${port}: ${stderr.trim() || "timed out"}`);
  }
}

/** The platform binary when installed (so that stop() kills anvil itself), else the npm wrapper. */
function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  for (const root of ROOTS) {
    const direct = join(root, "node_modules/@foundry-rs", `anvil-${process.platform}-${arch}`, "bin/anvil");
    if (existsSync(direct)) return direct;
    const wrapper = join(root, "node_modules/.bin/anvil");
    if (existsSync(wrapper)) return wrapper;
  }
  throw new Error("anvil not found: run `bun install` in the project first (it is a dev dependency)");
}

async function waitUntilReady(
  rpcUrl: string,
  chainId: number,
  proc: Bun.Subprocess,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && proc.exitCode === null) {
    try {
      const id = await jsonRpc<Hex>(rpcUrl, "eth_chainId", []);
      if (Number(id) === chainId) return true;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  return false;
}

async function jsonRpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
