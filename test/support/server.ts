/**
 * The real server over real HTTP against a real SQLite file in a temp dir (or a real PostgreSQL
 * database: `databaseUrl`, or STABLEGATE_TEST_ENGINE=postgres for every server of a run). One per test file:
 * `const server = await startTestServer()` in beforeAll, `server.stop()` in afterAll.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccountsService } from "../../src/accounts/service.ts";
import { createAccountStore } from "../../src/accounts/store.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server.ts";
import type { Resolver } from "../../src/webhooks/url-guard.ts";
import { rawRequest } from "./raw-request.ts";
import { startServeProcess } from "./serve-process.ts";
import { registerServerStore } from "./server-store.ts";
import { defaultTestDatabaseUrl } from "./store-engines.ts";

/** Any address will do: these servers never reach a chain. */
export const TEST_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const TEST_PAYOUT = "0x1111111111111111111111111111111111111111";
export const TEST_BASE_URL = "https://pay.example.test";

/**
 * Webhook DNS for tests: names ending in the listed suffixes resolve to the given addresses,
 * anything else does not resolve. Public names point at documentation-free public IPs.
 */
export const testResolver: Resolver = async (hostname) => {
  const table: Record<string, string[]> = {
    "hooks.example.com": ["93.184.215.14"],
    "hooks2.example.com": ["93.184.215.15", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "private.example.com": ["10.0.0.5"],
    "loopback.example.com": ["127.0.0.1"],
    "linklocal.example.com": ["169.254.10.10"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": ["93.184.215.14", "192.168.1.1"],
    "ula.example.com": ["fd00::1"],
  };
  return table[hostname] ?? [];
};

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
}

export interface TestServer {
  /** Where the server listens (not baseUrl, which only shapes pay_url). */
  url: string;
  dataDir: string;
  config: Config;
  running: RunningServer;
  stop(): Promise<void>;
  /**
   * Creates an account with its first key, as `stablegate account create` does, through the
   * server's own store: a second SQLite connection in this process could wait (blocking the
   * thread) for a transaction of the server's that cannot go on while the thread is blocked.
   */
  createAccount(name?: string, payoutAddress?: string): Promise<TestAccount>;
  /** The CLI's environment for this server's data dir. */
  env: Record<string, string>;
}

export function testEnv(dataDir: string, databaseUrl: string | null = null): Record<string, string> {
  return {
    STABLEGATE_DATA_DIR: dataDir,
    ...(databaseUrl ? { STABLEGATE_DATABASE_URL: databaseUrl } : {}),
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: "31337",
    STABLEGATE_USDC_ADDRESS: TEST_USDC,
    STABLEGATE_RPC_URL: "http://127.0.0.1:1",
    STABLEGATE_LOG_LEVEL: "error",
  };
}

export function makeTempDir(prefix = "stablegate-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestServer(
  overrides: Partial<Config> = {},
  options: ServerOptions = {},
): Promise<TestServer> {
  const dataDir = makeTempDir();
  const databaseUrl = overrides.databaseUrl === undefined ? await defaultTestDatabaseUrl() : overrides.databaseUrl;
  const env = testEnv(dataDir, databaseUrl);
  const config: Config = {
    ...loadConfig(env),
    port: 0,
    host: "127.0.0.1",
    baseUrl: TEST_BASE_URL,
    ...overrides,
    dataDir,
    databaseUrl,
  };
  const running = await startServer(config, { resolve: testResolver, log: silentLogger, ...options });
  registerServerStore(env, running.db);
  let accounts = 0;
  return {
    url: running.url,
    dataDir,
    config,
    running,
    env,
    async stop() {
      registerServerStore(env, null);
      try {
        await running.stop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    async createAccount(name = `Merchant ${++accounts}`, payoutAddress = TEST_PAYOUT) {
      const service = createAccountsService({
        store: createAccountStore(running.db),
        clock: systemClock,
        ids: randomIds,
        defaultSpeed: config.defaultSpeed,
      });
      const out = await service.createAccount({ name, payoutAddress });
      return { accountId: out.account.id, apiKey: out.api_key, keyId: out.key_id };
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed body; undefined when it is not JSON. */
  json: any;
  text: string;
}

export interface ApiRequest {
  method?: string;
  /** Objects are JSON-encoded; strings are sent as they are (for malformed bodies). */
  body?: unknown;
  headers?: Record<string, string>;
  /** "manual": the answer is the redirect itself (its status and Location), not the page it points to. */
  redirect?: RequestRedirect;
}

/**
 * The one way tests call the server over HTTP: `api(url, key)(path, req)` sends `key` as the bearer
 * (null sends no Authorization header), JSON-encodes an object body, and answers status, headers,
 * text and parsed JSON. GET without a body, POST with one, unless `req.method` says otherwise.
 */
export function api(url: string, key: string | null) {
  const send = rawApi(url, key);
  return async (path: string, req: ApiRequest = {}): Promise<ApiResponse> => toApiResponse(await send(path, req));
}

/** As `api`, answering fetch's own Response: for a body read as it streams, or left unread. */
export function rawApi(url: string, key: string | null) {
  return (path: string, req: ApiRequest = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...req.headers };
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (req.body !== undefined) {
      body = typeof req.body === "string" ? req.body : JSON.stringify(req.body);
      headers["content-type"] ??= "application/json";
    }
    const method = req.method ?? (body === undefined ? "GET" : "POST");
    // fetch sends no body with a GET; the server still takes one (and refuses one past the limit).
    if (body !== undefined && method === "GET") return rawRequest(url + path, { method, headers, body });
    return fetch(url + path, { method, headers, body, redirect: req.redirect });
  };
}

export async function toApiResponse(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export type Api = ReturnType<typeof api>;

/** Asserts nothing about the body beyond the error shape: exactly one string field `error`. */
export function isErrorBody(json: unknown): boolean {
  return (
    typeof json === "object" &&
    json !== null &&
    Object.keys(json).length === 1 &&
    typeof (json as { error?: unknown }).error === "string" &&
    (json as { error: string }).error.length > 0
  );
}

export interface ServerProcess {
  url: string;
  env: Record<string, string>;
  /** Resident and peak resident memory of the process, in MB, from /proc (Linux). */
  memory(): { rssMb: number; peakMb: number };
  stop(): Promise<void>;
}

/**
 * `stablegate serve` as a child process (startServeProcess) on a fresh data dir, for measuring the server
 * alone, such as its memory under load. With no `overrides` there is no chain (the RPC points at a
 * closed port); pass STABLEGATE_RPC_URL and STABLEGATE_USDC_ADDRESS to give it one.
 */
export async function spawnTestServer(overrides: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = makeTempDir();
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  const env = { ...testEnv(dataDir), STABLEGATE_BASE_URL: TEST_BASE_URL, ...overrides };
  const serve = await startServeProcess(env).catch((error) => {
    removeDir();
    throw error;
  });
  const stop = async () => {
    await serve.stop();
    removeDir();
  };
  const statusKb = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${serve.proc.pid}/status`, "utf8"))?.[1]);
  return {
    url: serve.url,
    env,
    memory: () => ({ rssMb: statusKb("VmRSS") / 1024, peakMb: statusKb("VmHWM") / 1024 }),
    stop,
  };
}
