import { isIP } from "node:net";
import { type Address, getAddress, type Hex, isAddress, isHex } from "viem";
import { CHAINS, defaultRpcUrl } from "./chain/chains.ts";
import { type CrossChainConfig, crossChainConfig } from "./chain/cross-chain-config.ts";
import { SWEEP_FLOOR_VARIABLE, sweepFloors } from "./chain/sweep-floor.ts";
import { storeLocationFrom } from "./db/open.ts";
import { parseDuration } from "./lib/duration.ts";
import { ConfigError } from "./lib/errors.ts";
import { type IpRange, parseIpRange } from "./lib/ip-address.ts";
import type { LogLevel } from "./lib/log.ts";
import { urlProblem } from "./lib/url-check.ts";

/** Everything the server reads from the environment, validated once at start. */
export interface Config {
  dataDir: string;
  /** PostgreSQL instead of the SQLite file in dataDir (which still holds the generated relayer key). */
  databaseUrl: string | null;
  host: string;
  port: number;
  baseUrl: string;
  chain: {
    name: string;
    chainId: number;
    rpcUrl: string;
    usdc: Address;
    confirmations: number;
    pollIntervalMs: number;
    /** Micro-USDC below which late funds are not swept at the relayer's cost (src/chain/sweep-floor.ts). */
    sweepFloor: bigint;
  };
  /** Hex private key that pays settlement gas; undefined: generated into the data dir. */
  relayerKey: Hex | undefined;
  feeBps: number;
  feeRecipient: Address | undefined;
  paymentWindowMs: number;
  webhookAllowPrivate: boolean;
  logLevel: LogLevel;
  /** CCTP V2 funding from other chains; null when no source chain is configured. */
  crossChain: CrossChainConfig | null;
  /** GET /metrics (Prometheus); null when off. */
  metrics: MetricsConfig | null;
  /**
   * STABLEGATE_METRICS_TOKEN whether or not /metrics is on: it also unlocks /readyz's details.
   * null: those details are never served over HTTP.
   */
  metricsToken: string | null;
  /** Peers whose X-Forwarded-For is believed (src/http/client-address.ts); none by default. */
  trustedProxies: IpRange[];
}

export interface MetricsConfig {
  /** A listener of its own for /metrics; null: on the main port, beside the API. */
  listen: { host: string; port: number } | null;
  /** Bearer token a scrape must present; required on the main port, optional on a listener of its own. */
  token: string | null;
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env): Config {
  const port = integer(env, "STABLEGATE_PORT", 1, 65_535) ?? 8080;
  const chain = chainConfig(env);
  const feeBps = integer(env, "STABLEGATE_FEE_BPS", 0, 10_000) ?? 0;
  const feeRecipient = address(env, "STABLEGATE_FEE_RECIPIENT");
  if (feeBps > 0 && !feeRecipient) {
    throw new ConfigError("STABLEGATE_FEE_RECIPIENT", "required when STABLEGATE_FEE_BPS is above 0");
  }
  return {
    ...storeLocationFrom(env),
    host: host(env),
    port,
    baseUrl: baseUrl(env, port),
    chain,
    relayerKey: privateKey(env, "STABLEGATE_RELAYER_KEY"),
    feeBps,
    feeRecipient,
    paymentWindowMs: duration(env, "STABLEGATE_PAYMENT_WINDOW") ?? 60 * 60_000,
    webhookAllowPrivate: flag(env, "STABLEGATE_WEBHOOK_ALLOW_PRIVATE"),
    logLevel: oneOf(env, "STABLEGATE_LOG_LEVEL", ["debug", "info", "warn", "error"] as const) ?? "info",
    crossChain: crossChainConfig(env, chain, (variable, problem) => {
      throw new ConfigError(variable, problem);
    }),
    metrics: metricsConfig(env),
    metricsToken: metricsToken(env),
    trustedProxies: ipRanges(env, "STABLEGATE_TRUSTED_PROXIES"),
  };
}

/** A metrics token shorter than this is a password, not a token. */
const MIN_METRICS_TOKEN = 16;

/**
 * Off unless STABLEGATE_METRICS is on or STABLEGATE_METRICS_ADDR names a listener of its own.
 * The main port is public (payers reach the checkout there) and the figures are business data:
 * there, a token is required.
 */
function metricsConfig(env: Env): MetricsConfig | null {
  const switchedOff = nonEmpty(env, "STABLEGATE_METRICS") !== undefined && !flag(env, "STABLEGATE_METRICS");
  const listen = listenAddress(env, "STABLEGATE_METRICS_ADDR");
  if (listen && switchedOff)
    throw new ConfigError("STABLEGATE_METRICS_ADDR", "is set while STABLEGATE_METRICS is off; unset one of them");
  if (!listen && !flag(env, "STABLEGATE_METRICS")) return null;
  const token = metricsToken(env);
  if (token === null && !listen)
    throw new ConfigError(
      "STABLEGATE_METRICS_TOKEN",
      "required when /metrics is on the main port (STABLEGATE_METRICS=on); " +
        "or serve it on a private address with STABLEGATE_METRICS_ADDR",
    );
  return { listen, token };
}

/** The operator's bearer token for /metrics and /readyz's details, checked whenever it is set. */
function metricsToken(env: Env): string | null {
  const token = nonEmpty(env, "STABLEGATE_METRICS_TOKEN") ?? null;
  // The value is a secret: the messages never repeat it.
  if (token !== null && (token.length < MIN_METRICS_TOKEN || !/^[\x21-\x7e]+$/.test(token)))
    throw new ConfigError(
      "STABLEGATE_METRICS_TOKEN",
      `must be at least ${MIN_METRICS_TOKEN} printable characters with no spaces`,
    );
  return token;
}

/** `host:port`, an IPv6 host in brackets (`[::1]:9464`). */
function listenAddress(env: Env, name: string): { host: string; port: number } | null {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return null;
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/i.exec(raw);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || !host || port < 1 || port > 65_535)
    throw new ConfigError(name, `must be host:port (such as 127.0.0.1:9464 or [::1]:9464), got "${raw}"`);
  return { host: checkedHost(name, host), port };
}

function chainConfig(env: Env): Config["chain"] {
  const name = nonEmpty(env, "STABLEGATE_CHAIN") ?? "base-sepolia";
  const chainId = integer(env, "STABLEGATE_CHAIN_ID", 1, Number.MAX_SAFE_INTEGER);
  const usdc = address(env, "STABLEGATE_USDC_ADDRESS");
  const rpcUrl = url(env, "STABLEGATE_RPC_URL", RPC_PROTOCOLS);
  const confirmations = integer(env, "STABLEGATE_CONFIRMATIONS", 0, 10_000);
  const pollIntervalMs = integer(env, "STABLEGATE_POLL_INTERVAL_MS", 50, 3_600_000);
  const floorOf = sweepFloors(env[SWEEP_FLOOR_VARIABLE], (variable, problem) => {
    throw new ConfigError(variable, problem);
  });
  if (name === "custom") {
    if (chainId === undefined) throw new ConfigError("STABLEGATE_CHAIN_ID", "required when STABLEGATE_CHAIN is custom");
    if (!usdc) throw new ConfigError("STABLEGATE_USDC_ADDRESS", "required when STABLEGATE_CHAIN is custom");
    if (!rpcUrl) throw new ConfigError("STABLEGATE_RPC_URL", "required when STABLEGATE_CHAIN is custom");
    return {
      name,
      chainId,
      usdc,
      rpcUrl,
      confirmations: confirmations ?? 1,
      pollIntervalMs: pollIntervalMs ?? 1_000,
      sweepFloor: floorOf(name),
    };
  }
  const known = CHAINS.get(name);
  if (!known) {
    throw new ConfigError(
      "STABLEGATE_CHAIN",
      `unknown chain "${name}"; use one of ${[...CHAINS.keys()].join(", ")} or custom`,
    );
  }
  return {
    name,
    chainId: chainId ?? known.chainId,
    usdc: usdc ?? known.usdc,
    rpcUrl: rpcUrl ?? defaultRpcUrl(known),
    confirmations: confirmations ?? known.confirmations,
    pollIntervalMs: pollIntervalMs ?? known.blockTimeMs,
    sweepFloor: floorOf(name),
  };
}

function baseUrl(env: Env, port: number): string {
  // Payers open pay_url in a browser: only http(s) makes sense there.
  const value = url(env, "STABLEGATE_BASE_URL", ["http:", "https:"]) ?? `http://localhost:${port}`;
  return value.replace(/\/+$/, "");
}

function host(env: Env): string {
  const raw = nonEmpty(env, "STABLEGATE_HOST");
  return raw === undefined ? "0.0.0.0" : checkedHost("STABLEGATE_HOST", raw);
}

/** An IP address or a host name (letters, digits and dashes between dots). */
function checkedHost(name: string, raw: string): string {
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
  const hostname = raw.length <= 253 && raw.split(".").every((part) => label.test(part)) && !/^[\d.]+$/.test(raw);
  if (isIP(raw) === 0 && !hostname) throw new ConfigError(name, `must be an IP address or a host name, got "${raw}"`);
  return raw;
}

/** Comma-separated addresses and CIDR ranges, IPv4 or IPv6 (`172.30.0.0/24, ::1`). */
function ipRanges(env: Env, name: string): IpRange[] {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return [];
  return raw.split(",").map((entry) => {
    const range = parseIpRange(entry.trim());
    if (!range)
      throw new ConfigError(
        name,
        `must be IP addresses or CIDR ranges separated by commas (such as 172.30.0.0/24,::1), got "${entry.trim()}"`,
      );
    return range;
  });
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function address(env: Env, name: string): Address | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!isAddress(raw, { strict: false }))
    throw new ConfigError(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`);
  // Mixed case carries an EIP-55 checksum; a wrong one means a typo, and funds may go there.
  if (!isAddress(raw, { strict: true }))
    throw new ConfigError(
      name,
      `has mixed case but a wrong EIP-55 checksum, got "${raw}"; check it, or give it in lower case`,
    );
  return getAddress(raw);
}

function privateKey(env: Env, name: string): Hex | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const hex = raw.startsWith("0x") ? raw : `0x${raw}`;
  // The value is a secret: the message never repeats it.
  if (!isHex(hex) || hex.length !== 66) throw new ConfigError(name, "must be a 32-byte hex private key");
  return hex.toLowerCase() as Hex;
}

/** Schemes a JSON-RPC endpoint may use. */
const RPC_PROTOCOLS = ["http:", "https:", "ws:", "wss:"] as const;

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const problem = urlProblem(raw, protocols);
  if (problem) throw new ConfigError(name, problem);
  return raw;
}

function duration(env: Env, name: string): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(name, `must be a duration such as 90s, 60m or 2h, got "${raw}"`);
  return ms;
}

function flag(env: Env, name: string): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined || ["0", "false", "off", "no"].includes(raw)) return false;
  if (["1", "true", "on", "yes"].includes(raw)) return true;
  throw new ConfigError(name, `must be on or off, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[]): T | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}
