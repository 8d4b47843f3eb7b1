/**
 * The real server on a test chain (./test-chain.ts) for integration tests: in-process, or as a
 * `bun src/main.ts serve` subprocess that can be killed, with its own data dir, account and API key.
 *
 *   const chain = await startChain();            // one anvil per test file
 *   const stack = await startStack({ chain });   // one or more servers on it
 *   ...
 *   await stack.stop(); await chain.stop();
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Address, getAddress, type Hex } from "viem";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { Sql } from "../../src/db/engine.ts";
import { createLogger, type LogLevel } from "../../src/lib/log.ts";
import { settingUp } from "../../src/lib/teardown.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { ANVIL_KEY_2 } from "./anvil.ts";
import { createTestClock, type TestClock } from "./clock.ts";
import { type RpcTap, startRpcTap } from "./rpc-tap.ts";
import { REPO_ROOT, startServeProcess } from "./serve-process.ts";
import { api } from "./server.ts";
import { registerServerStore, withServerStore } from "./server-store.ts";
import { defaultTestDatabaseUrl } from "./store-engines.ts";
import { randomAddress, startChain, type TestChain } from "./test-chain.ts";
import { waitFor } from "./wait.ts";

/**
 * The metrics token every stack's server is given (unless its `env` says otherwise): /readyz
 * shows its details, which the tests read, only to a caller who sends it.
 */
export const TEST_METRICS_TOKEN = "test-metrics-token-0123456789";

export interface StackOptions {
  /** Share a chain (one anvil per test file); without it the stack starts and owns one. */
  chain?: TestChain;
  /** For a chain the stack starts itself (see startChain). */
  blockTime?: number;
  automine?: boolean;
  /** For a chain the stack starts itself: how far anvil's finalized block trails the head (two epochs). */
  slotsInAnEpoch?: number;
  confirmations?: number;
  /** STABLEGATE_PAYMENT_WINDOW, such as "2s"; default the server's own. */
  paymentWindow?: string;
  feeBps?: number;
  feeRecipient?: Address;
  /** Default anvil key 2. Two servers alive on one chain need different relayers. */
  relayerKey?: Hex;
  /** The server's RPC, when it must differ from the chain's (a proxy in front of anvil). */
  rpcUrl?: string;
  /** Put an RPC tap (test/support/rpc-tap.ts) between the server and the chain: `stack.tap`. */
  tapRpc?: boolean;
  pollIntervalMs?: number;
  /** Run `bun src/main.ts serve` as a child process instead of in-process. */
  subprocess?: boolean;
  /**
   * With `subprocess`: run the built single executable (`dist/stablegate serve`), built once per
   * test run (see `builtBinary`), or the executable at this path (another build, to compare).
   */
  binary?: boolean | string;
  /** STABLEGATE_LOG_LEVEL; in-process, lines are kept for `logs()` and printed when STACK_LOG=1 is set. */
  logLevel?: LogLevel;
  /** More environment for the server, such as STABLEGATE_WEBHOOK_ALLOW_PRIVATE for a local receiver. */
  env?: Record<string, string>;
  /**
   * A test SMTP server's certificate (PEM) for the in-process server to trust; a subprocess is
   * handed it as NODE_EXTRA_CA_CERTS (a file) in `env`.
   */
  smtpCa?: string;
}

export interface Stack {
  chain: TestChain;
  /** Between the server and the chain, when asked for (`tapRpc`). */
  tap: RpcTap | null;
  /** Where the server listens now (changes on restart). */
  readonly url: string;
  dataDir: string;
  env: Record<string, string>;
  config: Config;
  /** Injected into the in-process server; unused by a subprocess (which has the real time). */
  clock: TestClock;
  accountId: string;
  apiKey: string;
  /** A fresh random address: its balance starts at 0. */
  payout: Address;

  request(
    path: string,
    init?: { method?: string; body?: unknown; auth?: boolean },
  ): Promise<{ status: number; json: any }>;
  createPayment(body: Record<string, unknown>): Promise<any>;
  getPayment(id: string): Promise<any>;
  publicPayment(id: string): Promise<any>;
  /** POST .../sync; `chain` names the chain the transaction is on (the settlement chain when omitted). */
  sync(id: string, txHash: unknown, chain?: string): Promise<{ status: number; json: any }>;
  /** /readyz with its details: sent with the server's metrics token (STABLEGATE_METRICS_TOKEN in `env`). */
  readyz(): Promise<any>;

  pay(depositAddress: string, units: bigint, opts?: { wait?: boolean }): Promise<Hex>;
  mine(n?: number): Promise<void>;
  usdcBalance(address: string): Promise<bigint>;
  /** The in-process server's log lines so far (at `logLevel`), parsed. */
  logs(): Array<{ level: LogLevel; msg: string } & Record<string, unknown>>;
  /**
   * Event types of a payment, in the order they were written to the outbox, leaving out
   * payment.funds_seen: whether a transfer is seen before it counts depends on whether the watcher
   * polled before the test mined its confirmations. Tests of that event read `allEvents`.
   */
  events(paymentId: string): Promise<string[]>;
  /** Every event type of a payment, payment.funds_seen included, in outbox order. */
  allEvents(paymentId: string): Promise<string[]>;
  /**
   * A read query on the server's store (its own Db when in-process): a `sql` template, or text
   * whose `?` each stand for the next of `params` (no `?` of its own, then: none in a string literal).
   */
  sql<T = Record<string, unknown>>(
    query: Sql | string,
    ...params: Array<string | number | bigint | null>
  ): Promise<T[]>;
  waitFor<T>(
    fn: () => T | Promise<T>,
    timeoutMs?: number,
    what?: string,
  ): Promise<Exclude<T, false | undefined | null>>;
  /** Mines one block per poll until `fn` holds: confirmations need blocks on an automining chain. */
  mineUntil<T>(
    fn: () => T | Promise<T>,
    timeoutMs?: number,
    what?: string,
  ): Promise<Exclude<T, false | undefined | null>>;
  /** Waits (mining along when `mine`) until the merchant API reports `status`. */
  waitForStatus(id: string, status: string, opts?: { mine?: boolean; timeoutMs?: number }): Promise<any>;
  /** Waits until the settlement chain's watcher has scanned past `block` (its cursor), so "nothing credited" means it. */
  waitScanned(block: bigint, opts?: { mine?: boolean }): Promise<void>;
  /**
   * The newest settle() of a payment once the node has it (a payment turns "settling" just
   * before the broadcast): in the mempool, or mined on an automining chain.
   */
  settlementSent(paymentId: string): Promise<Hex>;

  /** The in-process server's loop rounds (see test/support/wait.ts); refused for a subprocess. */
  activity: RunningServer["activity"];
  /** kill -9 of the server subprocess, leaving the data dir as it is; refused in-process (see `subprocess`). */
  crash(): Promise<void>;
  /** Starts the server again on the same data dir, with `env` changes if given. */
  restart(envChanges?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/** A server on the chain (started here unless given); what it started is stopped again if it fails. */
export function startStack(opts: StackOptions = {}): Promise<Stack> {
  return settingUp(async (undo) => {
    const chain =
      opts.chain ??
      (await startChain({ blockTime: opts.blockTime, automine: opts.automine, slotsInAnEpoch: opts.slotsInAnEpoch }));
    if (!opts.chain) undo(() => chain.stop());
    const tap = opts.tapRpc ? startRpcTap(chain.rpcUrl) : null;
    undo(() => tap?.stop());
    const dataDir = mkdtempSync(join(tmpdir(), "stablegate-stack-"));
    undo(() => rmSync(dataDir, { recursive: true, force: true }));
    return createStack(opts, chain, tap, dataDir);
  });
}

async function createStack(opts: StackOptions, chain: TestChain, tap: RpcTap | null, dataDir: string): Promise<Stack> {
  const ownsChain = !opts.chain;
  const payout = randomAddress();
  const databaseUrl = await defaultTestDatabaseUrl();
  const env: Record<string, string> = {
    STABLEGATE_DATA_DIR: dataDir,
    ...(databaseUrl ? { STABLEGATE_DATABASE_URL: databaseUrl } : {}),
    STABLEGATE_HOST: "127.0.0.1",
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: String(chain.anvil.chainId),
    STABLEGATE_USDC_ADDRESS: chain.usdc,
    STABLEGATE_RPC_URL: tap?.url ?? opts.rpcUrl ?? chain.rpcUrl,
    STABLEGATE_CONFIRMATIONS: String(opts.confirmations ?? 2),
    STABLEGATE_POLL_INTERVAL_MS: String(opts.pollIntervalMs ?? 100),
    STABLEGATE_RELAYER_KEY: opts.relayerKey ?? ANVIL_KEY_2,
    STABLEGATE_LOG_LEVEL: opts.logLevel ?? "error",
    STABLEGATE_METRICS_TOKEN: TEST_METRICS_TOKEN,
    ...(opts.paymentWindow ? { STABLEGATE_PAYMENT_WINDOW: opts.paymentWindow } : {}),
    ...(opts.feeBps !== undefined ? { STABLEGATE_FEE_BPS: String(opts.feeBps) } : {}),
    ...(opts.feeRecipient ? { STABLEGATE_FEE_RECIPIENT: opts.feeRecipient } : {}),
    ...opts.env,
  };
  const created = (await runAccountCommand(
    "account",
    ["create", "--name", "Stack Shop", "--payout-address", payout],
    env,
  )) as {
    account: { id: string };
    api_key: string;
  };
  const clock = createTestClock();
  const logLines: string[] = [];
  const log = createLogger(opts.logLevel ?? (process.env.STACK_LOG ? "debug" : "error"), (line) => {
    logLines.push(line);
    if (process.env.STACK_LOG) process.stdout.write(line);
  });

  let config = { ...loadConfig(env), port: 0 };
  let url = "";
  let inProcess: RunningServer | null = null;
  let child: Bun.Subprocess<"ignore", "pipe", "pipe"> | null = null;

  async function launch(): Promise<void> {
    config = { ...loadConfig(env), port: 0 };
    if (!opts.subprocess) {
      inProcess = await startServer(config, { clock, log, smtpTls: opts.smtpCa ? { ca: opts.smtpCa } : undefined });
      registerServerStore(env, inProcess.db);
      url = inProcess.url;
      return;
    }
    const started = await startServeProcess(env, {
      command: opts.binary ? [typeof opts.binary === "string" ? opts.binary : await builtBinary(), "serve"] : undefined,
    });
    child = started.proc;
    url = started.url;
  }

  async function halt(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
    if (inProcess) {
      const running = inProcess;
      inProcess = null;
      registerServerStore(env, null);
      await running.stop();
    }
    if (child) {
      const proc = child;
      child = null;
      proc.kill(signal);
      await proc.exited;
    }
  }

  await launch();

  /** The merchant API with this stack's key (`auth: false` sends none); a body that is not JSON comes back as text. */
  async function request(path: string, init: { method?: string; body?: unknown; auth?: boolean } = {}) {
    const res = await api(url, init.auth === false ? null : created.api_key)(path, init);
    return { status: res.status, json: res.json ?? res.text };
  }

  const allEvents = async (paymentId: string) =>
    (await sql<{ type: string }>("SELECT type FROM events WHERE payment_id = ? ORDER BY seq", paymentId)).map(
      (r) => r.type,
    );

  async function ok(path: string, init?: { method?: string; body?: unknown; auth?: boolean }, expected = 200) {
    const res = await request(path, init);
    if (res.status !== expected)
      throw new Error(`${init?.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  }

  async function sql<T>(query: Sql | string, ...params: Array<string | number | bigint | null>): Promise<T[]> {
    let statement = query;
    if (typeof statement === "string") {
      const parts = statement.split("?");
      if (parts.length !== params.length + 1) throw new Error(`${params.length} parameters for: ${statement}`);
      statement = new Sql(parts, params);
    }
    return withServerStore(env, (db) => db.all<T>(statement));
  }

  const mineUntil = <T>(fn: () => T | Promise<T>, timeoutMs = 15_000, what = "condition") =>
    waitFor(
      async () => {
        const value = await fn();
        if (value === undefined || value === false || value === null) await chain.mine(1);
        return value;
      },
      timeoutMs,
      what,
      60,
    );

  const stack: Stack = {
    chain,
    tap,
    get url() {
      return url;
    },
    dataDir,
    env,
    get config() {
      return config;
    },
    clock,
    accountId: created.account.id,
    apiKey: created.api_key,
    payout,

    request,
    createPayment: (body) => ok("/api/v1/payments", { body }, 201),
    getPayment: (id) => ok(`/api/v1/payments/${id}`),
    publicPayment: (id) => ok(`/api/public/payments/${id}`, { auth: false }),
    sync: (id, txHash, chain) =>
      request(`/api/public/payments/${id}/sync`, {
        body: chain === undefined ? { tx_hash: txHash } : { tx_hash: txHash, chain },
        auth: false,
      }),
    async readyz() {
      const res = await fetch(`${url}/readyz`, {
        headers: { authorization: `Bearer ${env.STABLEGATE_METRICS_TOKEN}` },
      });
      const body = await res.json();
      if (res.status === 401) throw new Error(`/readyz refused the metrics token: ${JSON.stringify(body)}`);
      return body;
    },

    pay: (depositAddress, units, payOpts) => chain.pay(getAddress(depositAddress), units, payOpts),
    mine: (n) => chain.mine(n),
    usdcBalance: (address) => chain.usdcBalance(getAddress(address)),
    logs: () => logLines.map((line) => JSON.parse(line)),
    events: async (paymentId) => (await allEvents(paymentId)).filter((type) => type !== "payment.funds_seen"),
    allEvents,
    sql,
    waitFor: (fn, timeoutMs, what) => waitFor(fn, timeoutMs, what),
    mineUntil,
    async waitForStatus(id, status, { mine = false, timeoutMs = 15_000 } = {}) {
      let seen = "never read";
      const check = async () => {
        const payment = await stack.getPayment(id);
        seen = payment.status;
        return payment.status === status ? payment : undefined;
      };
      const waiting = mine
        ? mineUntil(check, timeoutMs, `status ${status}`)
        : waitFor(check, timeoutMs, `status ${status}`);
      // What it was instead says where it stuck.
      return waiting.catch((error: Error) => {
        throw new Error(`${error.message}; the payment's status was ${seen}`);
      });
    },
    activity() {
      if (!inProcess)
        throw new Error("activity() needs an in-process stack: a subprocess reports its loops only through /readyz");
      return inProcess.activity();
    },

    async waitScanned(block, { mine = true } = {}) {
      const check = async () =>
        (
          await sql<{ block_number: number }>(
            "SELECT block_number FROM chain_cursor WHERE chain_id = ?",
            chain.anvil.chainId,
          )
        )[0]?.block_number;
      const scanned = async () => {
        const at = await check();
        return at !== undefined && BigInt(at) >= block;
      };
      await (mine
        ? mineUntil(scanned, 15_000, `cursor at block ${block}`)
        : waitFor(scanned, 15_000, `cursor at block ${block}`));
    },

    settlementSent: (paymentId) =>
      waitFor(
        async () => {
          const [row] = await sql<{ tx_hash: Hex }>(
            "SELECT tx_hash FROM settlements WHERE payment_id = ? ORDER BY id DESC LIMIT 1",
            paymentId,
          );
          return row && (await chain.publicClient.getTransaction({ hash: row.tx_hash }).catch(() => null))
            ? row.tx_hash
            : undefined;
        },
        10_000,
        `a settlement of ${paymentId} to reach the node`,
      ),

    async crash() {
      // Stopping an in-process server is graceful (its loops finish, the database closes), which
      // would let a crash test pass without ever testing a crash.
      if (!opts.subprocess)
        throw new Error(
          "stack.crash() needs a subprocess stack (startStack({ subprocess: true })): an in-process server cannot be killed abruptly",
        );
      await halt("SIGKILL");
    },
    async restart(envChanges = {}) {
      await halt("SIGTERM");
      Object.assign(env, envChanges);
      await launch();
    },
    async stop() {
      try {
        await halt("SIGTERM");
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        tap?.stop();
        if (ownsChain) await chain.stop();
      }
    },
  };
  return stack;
}

let building: Promise<string> | null = null;

/**
 * `bun run build`, once per test process: the tests that need the shipped binary share it.
 * STABLEGATE_TEST_BINARY names another executable to run instead (an older build, to see a test
 * fail without a fix: `git worktree add /tmp/before <commit>`, `bun install && bun run build` there).
 */
export function builtBinary(): Promise<string> {
  const other = process.env.STABLEGATE_TEST_BINARY;
  if (other) return Promise.resolve(resolve(other));
  building ??= (async () => {
    const build = Bun.spawn([process.execPath, "run", "build"], { cwd: REPO_ROOT, stdout: "ignore", stderr: "pipe" });
    if ((await build.exited) !== 0) throw new Error(`bun run build failed: ${await new Response(build.stderr).text()}`);
    return join(REPO_ROOT, "dist/stablegate");
  })();
  return building;
}
