/**
 * A real browser for the checkout tests: Debian's chromium driven by playwright-core, and an
 * injected EIP-1193 test wallet whose `request` runs in the test process, where it signs with
 * an anvil key through viem and sends to the test chain.
 *
 *   const rig = useBrowserRig();   // a chain, the shipped executable and chromium for the file
 *   const context = await newContext(rig.browser, [rig.stack.url]);
 *   const wallet = await installTestWallet(context, { rpcUrl: rig.chain.rpcUrl, privateKey });
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core";
import { type Address, createWalletClient, type Hex, http, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { isExecutable } from "../../scripts/test-prereqs.ts";
import { settingUp, stopAll } from "../../src/lib/teardown.ts";
import { testTokenAbi } from "./chain.ts";
import { perFile, type Started } from "./per-file.ts";
import { type Stack, startStack } from "./stack.ts";
import { startChain, type TestChain } from "./test-chain.ts";

export const ARTIFACTS = resolve(import.meta.dir, "../artifacts");
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** What the checkout and dashboard browser tests run against, beside chromium. */
export interface CheckoutParts {
  chain: TestChain;
  stack: Stack;
}

/** Registers how to stop a part just started; parts are stopped newest first. */
export type Undo = (step: () => unknown) => void;

/** A chain with 0.5 s blocks and the shipped single executable on it, as a merchant runs it. */
export async function startCheckoutParts(undo: Undo, env?: Record<string, string>): Promise<CheckoutParts> {
  const chain = await startChain({ blockTime: 0.5 });
  undo(() => chain.stop());
  const stack = await startStack({ chain, confirmations: 1, pollIntervalMs: 100, subprocess: true, binary: true, env });
  undo(() => stack.stop());
  return { chain, stack };
}

export interface BrowserRigOptions<T extends object> {
  /** What the pages are served by, started beside chromium. Default: startCheckoutParts. */
  start?: (undo: Undo) => Promise<T>;
  /** With the default start: more environment for the server. */
  env?: Record<string, string>;
  executablePath?: string;
}

export type BrowserRig<T extends object = CheckoutParts> = T & { browser: Browser };

/**
 * Starts `start`'s parts and chromium side by side. When a step fails, what the others started is
 * stopped before the error is rethrown; `stop` stops every part, even when stopping one fails.
 */
export async function startBrowserRig<T extends object = CheckoutParts>(
  opts: BrowserRigOptions<T> = {},
): Promise<Started<BrowserRig<T>>> {
  const start = opts.start ?? ((undo: Undo) => startCheckoutParts(undo, opts.env) as Promise<object> as Promise<T>);
  const steps: Array<() => unknown> = [];
  const rig = await settingUp(async (undo) => {
    const both: Undo = (step) => {
      undo(step);
      steps.push(step);
    };
    const launched = launchBrowser(opts).then((browser) => {
      both(() => browser.close());
      return browser;
    });
    launched.catch(() => {}); // its failure is rethrown below, once the parts have started
    // Settled before anything is undone: a browser that launches after a failed start is closed too.
    const parts = await start(both).finally(() => launched.catch(() => {}));
    return { ...parts, browser: await launched };
  });
  return { value: rig, stop: () => stopAll(...steps.reverse()) };
}

/**
 * The browser rig of a test file (see perFile): its beforeAll starts the rig (startBrowserRig) and its
 * afterAll stops whatever of it started. Call it at the top level; read its fields inside tests and hooks.
 *
 *   const rig = useBrowserRig();   // rig.chain, rig.stack, rig.browser
 *   const rig = useBrowserRig({ start: async (undo) => { const server = await startTestServer();
 *     undo(() => server.stop()); return { server }; } });   // rig.server, rig.browser
 */
export function useBrowserRig<T extends object = CheckoutParts>(opts: BrowserRigOptions<T> = {}): BrowserRig<T> {
  return perFile("useBrowserRig()", () => startBrowserRig(opts));
}

/** Where `bun run test` found chromium (scripts/test-prereqs.ts), else Debian's path. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * Headless chromium with everything that phones home turned off. Playwright gives each launch
 * a fresh temporary profile (it refuses a --user-data-dir argument), removed on close.
 */
export async function launchBrowser({
  executablePath = CHROMIUM_PATH,
}: {
  executablePath?: string;
} = {}): Promise<Browser> {
  if (!isExecutable(executablePath)) {
    // One line that says what to do, instead of playwright's stack under every browser test.
    throw new Error(
      `no chromium at ${executablePath}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH; \`bun run test\` does this for you`,
    );
  }
  return chromium.launch({
    executablePath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A context that can reach only `origins`; anything else is aborted, so nothing is downloaded. */
export async function newContext(
  browser: Browser,
  origins: string[],
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const allowed = new Set(origins.map((o) => new URL(o).origin));
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    return url.protocol === "data:" || allowed.has(url.origin) ? route.fallback() : route.abort("blockedbyclient");
  });
  return context;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Console errors and CSP violations a page reports; a clean page has none. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (msg) => msg.type() === "error" && problems.push(msg.text()));
  page.on("pageerror", (error) => problems.push(error.message));
  return problems;
}

export interface WalletOptions {
  /** The settlement chain's RPC (anvil, chain id 31337). */
  rpcUrl: string;
  /** Other chains the wallet knows, by chain id (a cross-chain source). */
  otherChains?: Record<number, string>;
  privateKey: Hex;
  /** Where the wallet starts; the page must switch it when this is not the settlement chain. */
  chainId?: number;
  name?: string;
}

type RpcError = { code: number; message: string };

export interface TestWallet {
  address: Address;
  chainId: number;
  /** Every request the page made, in order. */
  calls: Array<{ method: string; params: unknown[] }>;
  /** Answer the next request for `method` with this error instead (4001 = the payer said no). */
  failNext(method: string, error: RpcError): void;
  /** Refuse every chain switch (as a payer who declines it would). */
  refuseSwitch: boolean;
  /** Methods that never answer, like a wallet window left open or a wallet that went away. */
  hang: Set<string>;
  /** Emits an EIP-1193 event ("disconnect", "accountsChanged"...) to the page's listeners. */
  emit(page: Page, event: string, payload?: unknown): Promise<void>;
  /** Every EIP-712 message the page had signed (eth_signTypedData_v4), as it asked, in order. */
  signed: TypedDataRequest[];
  /**
   * Holds the next request for `method` until `release()`: `reached` resolves with its params once
   * the page has asked (a payer who takes a while in the wallet window, while the test acts).
   */
  gate(method: string): { reached: Promise<unknown[]>; release(): void };
}

/** What eth_signTypedData_v4 is handed (JSON-parsed): EIP712Domain among the types, as wallets expect. */
export interface TypedDataRequest {
  domain: Record<string, unknown>;
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: string;
  message: Record<string, unknown>;
}

export const REJECTED: RpcError = { code: 4001, message: "User rejected the request." };
const ICON = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#7c3aed"/><path d="M9 16h14M16 9v14" stroke="#fff" stroke-width="3"/></svg>').toString("base64")}`;

/**
 * Injects an EIP-6963 wallet into every page and frame of `context`. Accounts, chain and
 * sending are answered here; reads (eth_call, receipts) are forwarded to anvil.
 */
export async function installTestWallet(context: BrowserContext, opts: WalletOptions): Promise<TestWallet> {
  const account = privateKeyToAccount(opts.privateKey);
  const rpcs = new Map<number, string>([
    [foundry.id, opts.rpcUrl],
    ...Object.entries(opts.otherChains ?? {}).map(([id, url]) => [Number(id), url] as [number, string]),
  ]);
  const known = new Set([...rpcs.keys(), opts.chainId ?? foundry.id]);
  const rpcUrl = () => {
    const url = rpcs.get(wallet.chainId);
    if (!url) throw { code: -32603, message: `the test wallet has no RPC for chain ${wallet.chainId}` };
    return url;
  };
  const failures = new Map<string, RpcError>();
  const gates = new Map<string, { reached: (params: unknown[]) => void; released: Promise<void> }>();
  const wallet: TestWallet = {
    address: account.address,
    chainId: opts.chainId ?? foundry.id,
    calls: [],
    failNext: (method, error) => void failures.set(method, error),
    refuseSwitch: false,
    hang: new Set(),
    emit: (page, event, payload) =>
      page.evaluate(([e, p]) => (window as any).__stablegateTestWalletEmit(e, p), [event, payload] as const),
    signed: [],
    gate(method) {
      let reached!: (params: unknown[]) => void;
      let release!: () => void;
      const reachedP = new Promise<unknown[]>((resolve) => (reached = resolve));
      gates.set(method, { reached, released: new Promise<void>((resolve) => (release = resolve)) });
      return { reached: reachedP, release };
    },
  };

  async function handle(method: string, params: unknown[]): Promise<unknown> {
    const failure = failures.get(method);
    if (failure) {
      failures.delete(method);
      throw failure;
    }
    if (wallet.hang.has(method)) return new Promise(() => {});
    const gate = gates.get(method);
    if (gate) {
      gates.delete(method);
      gate.reached(params);
      await gate.released;
    }
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address];
      case "eth_chainId":
        return toHex(wallet.chainId);
      case "wallet_switchEthereumChain": {
        const id = Number((params[0] as { chainId: string }).chainId);
        if (wallet.refuseSwitch) throw REJECTED;
        if (!known.has(id)) throw { code: 4902, message: `Unrecognized chain ID ${id}` };
        wallet.chainId = id;
        return null;
      }
      case "wallet_addEthereumChain": {
        const id = Number((params[0] as { chainId: string }).chainId);
        known.add(id);
        wallet.chainId = id;
        return null;
      }
      case "eth_sendTransaction": {
        const tx = params[0] as { to: Address; data?: Hex; value?: Hex };
        const client = createWalletClient({
          chain: { ...foundry, id: wallet.chainId },
          transport: http(rpcUrl()),
          account,
        });
        return client.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ? BigInt(tx.value) : 0n });
      }
      case "eth_signTypedData_v4": {
        const [signer, json] = params as [string, string];
        if (signer.toLowerCase() !== account.address.toLowerCase())
          throw { code: 4100, message: `the test wallet cannot sign for ${signer}` };
        const request = JSON.parse(json) as TypedDataRequest;
        wallet.signed.push(request);
        return account.signTypedData(typedDataForViem(request));
      }
      default:
        return forward(rpcUrl(), method, params);
    }
  }

  await context.exposeFunction("__stablegateTestWallet", async (method: string, params: unknown[]) => {
    wallet.calls.push({ method, params });
    try {
      return { result: (await handle(method, params ?? [])) ?? null };
    } catch (error) {
      const e = error as Partial<RpcError> & { shortMessage?: string };
      return {
        error: {
          code: typeof e.code === "number" ? e.code : -32603,
          message: e.shortMessage ?? e.message ?? String(error),
        },
      };
    }
  });
  await context.addInitScript(
    ({ name, icon }) => {
      const bridge = (
        window as unknown as Record<
          string,
          (m: string, p: unknown[]) => Promise<{ result?: unknown; error?: RpcError }>
        >
      ).__stablegateTestWallet!;
      const listeners: Record<string, Array<(payload: unknown) => void>> = {};
      const provider = {
        async request(args: { method: string; params?: unknown[] }) {
          const out = await bridge(args.method, args.params ?? []);
          if (out.error) throw Object.assign(new Error(out.error.message), { code: out.error.code });
          return out.result;
        },
        on(event: string, fn: (payload: unknown) => void) {
          (listeners[event] ??= []).push(fn);
        },
        removeListener(event: string, fn: (payload: unknown) => void) {
          listeners[event] = (listeners[event] ?? []).filter((f) => f !== fn);
        },
      };
      (window as any).__stablegateTestWalletEmit = (event: string, payload: unknown) =>
        (listeners[event] ?? []).forEach((fn) => {
          fn(payload);
        });
      const detail = Object.freeze({
        info: { uuid: "6f1c4a52-test-wallet", name, icon, rdns: "test.stablegate.wallet" },
        provider,
      });
      const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
      window.addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    { name: opts.name ?? "Test Wallet", icon: ICON },
  );
  return wallet;
}

/**
 * The JSON a page hands eth_signTypedData_v4, as viem signs it: EIP712Domain left to viem (which
 * derives it from the domain), integers from their decimal strings, as a wallet reads them.
 */
function typedDataForViem(request: TypedDataRequest) {
  const { EIP712Domain: _domain, ...types } = request.types;
  const fields = types[request.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(request.message).map(([name, value]) => {
      const type = fields.find((f) => f.name === name)?.type ?? "";
      return [name, /^u?int\d*$/.test(type) ? BigInt(value as string) : value];
    }),
  );
  const domain = { ...request.domain };
  if (domain.chainId !== undefined) domain.chainId = Number(domain.chainId);
  return { domain, types, primaryType: request.primaryType, message } as Parameters<
    ReturnType<typeof privateKeyToAccount>["signTypedData"]
  >[0];
}

async function forward(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: RpcError };
  if (body.error) throw body.error;
  return body.result;
}

/** A new key with ETH for gas (`eth`, default 10; 0n: none at all) and `units` of test USDC. */
export async function fundedPayerKey(chain: TestChain, units: bigint, eth?: bigint): Promise<Hex> {
  const key = await chain.fundedKey(eth);
  if (units > 0n) {
    const hash = await chain.deployer.writeContract({
      address: chain.usdc,
      abi: testTokenAbi,
      functionName: "mint",
      args: [privateKeyToAccount(key).address, units],
    });
    await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }
  return key;
}
