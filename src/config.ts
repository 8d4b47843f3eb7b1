/**
 * The environment, read once at start into one validated object (loadConfig). A bad value stops
 * start-up with one line that names the variable (a ConfigError, exit 78).
 *
 * Where is X configured? Every STABLEGATE_* variable `serve` reads is read in this file, and
 * docs/configuration.md describes each in its one table. The commands that only open the store
 * read STABLEGATE_DATA_DIR and STABLEGATE_DATABASE_URL through src/lib/store-location.ts.
 *
 * This module depends on no capability and no database code (test/layering.test.ts): it reads
 * with the typed readers of src/lib/env.ts and looks chains up in src/lib/chains.ts. Each
 * capability owns the type of the slice it takes, beside its factory: AccountsConfig,
 * EventsConfig, WebhooksConfig, PaymentsConfig, RateLimitsConfig and OpsConfig in the folders'
 * index.ts, ChainSideConfig in src/chain/config.ts, CrossChainConfig in src/chain/cross-chain-config.ts.
 * src/server.ts hands each capability this object, and the type checker holds what is read here
 * to what each slice declares.
 */
import { type Address, getAddress, isAddress } from "viem";
import {
  ATTESTATION_API,
  CCTP_CONTRACTS,
  CHAINS,
  type ChainInfo,
  CUSTOM_SWEEP_FLOOR,
  defaultRpcUrl,
  pollIntervalOf,
} from "./lib/chains.ts";
import {
  address,
  checkedHost,
  duration,
  type Env,
  flag,
  integer,
  ipRanges,
  listenAddress,
  nonEmpty,
  oneOf,
  privateKey,
  url,
} from "./lib/env.ts";
import { ConfigError } from "./lib/errors.ts";
import { parseAmount, typedAmount } from "./lib/money.ts";
import { EMAIL_ADDRESS, parseSmtpUrl, type SmtpTarget } from "./lib/smtp-url.ts";
import { FINAL_TAGS, SPEEDS, type Speed } from "./lib/speed.ts";
import { storeLocationFrom } from "./lib/store-location.ts";
import { urlProblem } from "./lib/url-check.ts";

/** Everything the server reads from the environment, validated once at start. */
export type Config = ReturnType<typeof loadConfig>;

type Fail = (variable: string, problem: string) => never;
const fail: Fail = (variable, problem) => {
  throw new ConfigError(variable, problem);
};

export function loadConfig(env: Env) {
  const port = integer(env, "STABLEGATE_PORT", 1, 65_535) ?? 8080;
  const chain = settlementChain(env);
  const feeBps = integer(env, "STABLEGATE_FEE_BPS", 0, 10_000) ?? 0;
  const feeRecipient = address(env, "STABLEGATE_FEE_RECIPIENT");
  if (feeBps > 0 && !feeRecipient) {
    throw new ConfigError("STABLEGATE_FEE_RECIPIENT", "required when STABLEGATE_FEE_BPS is above 0");
  }
  return {
    /** The data directory, and PostgreSQL instead of the SQLite file there (which still holds the relayer key). */
    ...storeLocationFrom(env),
    host: host(env),
    port,
    baseUrl: baseUrl(env, port),
    chain,
    /** Hex private key that pays settlement gas; undefined: generated into the data dir. */
    relayerKey: privateKey(env, "STABLEGATE_RELAYER_KEY"),
    feeBps,
    feeRecipient,
    paymentWindowMs: duration(env, "STABLEGATE_PAYMENT_WINDOW") ?? 60 * 60_000,
    webhookAllowPrivate: flag(env, "STABLEGATE_WEBHOOK_ALLOW_PRIVATE"),
    logLevel: oneOf(env, "STABLEGATE_LOG_LEVEL", ["debug", "info", "warn", "error"] as const) ?? "info",
    /** The speed policy (docs/speed.md) of accounts that set none. */
    defaultSpeed: defaultSpeed(env),
    /** The block tag the `final` policy reads: `safe` where the operator prefers it to `finalized`. */
    finalTag: oneOf(env, "STABLEGATE_FINAL_BLOCK_TAG", FINAL_TAGS) ?? "finalized",
    /** CCTP V2 funding from other chains; null when no source chain is configured. */
    crossChain: crossChainConfig(env, chain, fail),
    /** GET /metrics (Prometheus); null when off. */
    metrics: metricsConfig(env),
    /**
     * STABLEGATE_METRICS_TOKEN whether or not /metrics is on: it also unlocks /readyz's details.
     * null: those details are never served over HTTP.
     */
    metricsToken: metricsToken(env),
    /** Peers whose X-Forwarded-For is believed (src/http/client-address.ts); none by default. */
    trustedProxies: ipRanges(env, "STABLEGATE_TRUSTED_PROXIES"),
    /** Outgoing email (docs/email.md); null, and nothing is queued, until both variables are set. */
    email: emailConfig(env),
  };
}

/** STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM: both or neither. */
function emailConfig(env: Env): { smtp: SmtpTarget; from: string } | null {
  const raw = nonEmpty(env, "STABLEGATE_SMTP_URL");
  const from = nonEmpty(env, "STABLEGATE_SMTP_FROM");
  const smtp = raw === undefined ? null : parseSmtpUrl("STABLEGATE_SMTP_URL", raw);
  if (from !== undefined && !EMAIL_ADDRESS.test(from))
    throw new ConfigError("STABLEGATE_SMTP_FROM", `must be a bare address such as billing@shop.example, got "${from}"`);
  if (smtp && from === undefined)
    throw new ConfigError(
      "STABLEGATE_SMTP_FROM",
      "required when STABLEGATE_SMTP_URL is set: the address emails come from",
    );
  if (!smtp && from !== undefined)
    throw new ConfigError(
      "STABLEGATE_SMTP_URL",
      "required when STABLEGATE_SMTP_FROM is set: the server that sends them",
    );
  return smtp && from ? { smtp, from } : null;
}

/**
 * STABLEGATE_SPEED, the operator's default speed policy. Exported for the account commands, which
 * show the policy in effect for an account that follows it.
 */
export function defaultSpeed(env: Env): Speed {
  return oneOf(env, "STABLEGATE_SPEED", SPEEDS) ?? "standard";
}

/** A metrics token shorter than this is a password, not a token. */
const MIN_METRICS_TOKEN = 16;

/**
 * Off unless STABLEGATE_METRICS is on or STABLEGATE_METRICS_ADDR names a listener of its own.
 * The main port is public (payers reach the checkout there) and the figures are business data:
 * there, a token is required.
 */
function metricsConfig(env: Env) {
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

/** Schemes a JSON-RPC endpoint may use. */
const RPC_PROTOCOLS = ["http:", "https:", "ws:", "wss:"] as const;

/** STABLEGATE_CHAIN from the chain table, or `custom`, with the overrides of its RPC, confirmations... */
function settlementChain(env: Env) {
  const name = nonEmpty(env, "STABLEGATE_CHAIN") ?? "base-sepolia";
  const chainId = integer(env, "STABLEGATE_CHAIN_ID", 1, Number.MAX_SAFE_INTEGER);
  const usdc = address(env, "STABLEGATE_USDC_ADDRESS");
  const rpcUrl = url(env, "STABLEGATE_RPC_URL", RPC_PROTOCOLS);
  const confirmations = integer(env, "STABLEGATE_CONFIRMATIONS", 0, 10_000);
  const pollIntervalMs = integer(env, "STABLEGATE_POLL_INTERVAL_MS", 50, 3_600_000);
  const floorOf = sweepFloors(env[SWEEP_FLOOR_VARIABLE], fail);
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
      // Nothing here knows what a custom chain's native coin is worth: its floor is the sweep floor.
      nativePrice: null,
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
    pollIntervalMs: pollIntervalMs ?? pollIntervalOf(known),
    /** Micro-USDC below which late funds are not swept at the relayer's cost (ChainInfo.sweepFloor). */
    sweepFloor: floorOf(name),
    /** Micro-USDC per native coin, high on purpose, for gasless payments' floor (ChainInfo.nativePrice). */
    nativePrice: known.nativePrice,
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

const SWEEP_FLOOR_VARIABLE = "STABLEGATE_SWEEP_FLOOR";

/**
 * STABLEGATE_SWEEP_FLOOR: the USDC below which a deposit address's funds are not moved at the
 * relayer's cost (see `ChainInfo.sweepFloor`). One amount for every chain ("0.50"), or one per
 * chain name ("ethereum=5.00,base=0.10"), the chain table's (or a custom chain's one cent)
 * elsewhere. Returns the floor of each chain by name.
 */
function sweepFloors(raw: string | undefined, fail: Fail): (chainName: string) => bigint {
  const text = raw?.trim();
  const fallback = (name: string) => CHAINS.get(name)?.sweepFloor ?? CUSTOM_SWEEP_FLOOR;
  if (!text) return fallback;
  const amount = (value: string, where: string) =>
    parseAmount(typedAmount(value) ?? "") ??
    fail(SWEEP_FLOOR_VARIABLE, `${where}must be an amount in USDC such as 0.50, got "${value}"`);
  if (!text.includes("=")) {
    const all = amount(text, "");
    return () => all;
  }
  const byName = new Map<string, bigint>();
  for (const entry of text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf("=");
    const name = entry.slice(0, eq).trim();
    if (eq < 0 || !/^[a-z0-9-]{1,40}$/.test(name))
      fail(SWEEP_FLOOR_VARIABLE, `must be an amount, or chain=amount pairs separated by commas, got "${entry}"`);
    byName.set(name, amount(entry.slice(eq + 1).trim(), `${name}: `));
  }
  return (name) => byName.get(name) ?? fallback(name);
}

/** Source chains and the attestation service are reached over HTTP. */
const HTTP = ["http:", "https:"];

/** Default bridge-fee bound: above Circle's highest fast-transfer fee (14 bps, from Linea). */
export const DEFAULT_MAX_BRIDGE_FEE_BPS = 15;

/** How a source chain's deposit addresses bridge: fast where Circle offers it, unless the operator says standard. */
const finality = (fast: boolean): "fast" | "standard" => (fast ? "fast" : "standard");

/**
 * Cross-chain funding (the type is CrossChainConfig, src/chain/cross-chain-config.ts) is on when
 * STABLEGATE_CCTP_SOURCES names source chains ("base,arbitrum" or "base=https://rpc..." to choose
 * the RPC) or STABLEGATE_CCTP_CUSTOM_SOURCES defines unlisted ones (local test chains) as JSON.
 */
export function crossChainConfig(env: Env, settlement: { name: string; chainId: number }, fail: Fail) {
  const listed = (env.STABLEGATE_CCTP_SOURCES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const custom = customSources(env, fail);
  const apiUrlText = env.STABLEGATE_CCTP_API_URL?.trim();
  const apiUrlProblem = apiUrlText ? urlProblem(apiUrlText, HTTP) : null;
  if (apiUrlProblem) fail("STABLEGATE_CCTP_API_URL", apiUrlProblem);
  if (listed.length === 0 && custom.length === 0) return null;

  const destination = CHAINS.get(settlement.name);
  const floorOf = sweepFloors(env[SWEEP_FLOOR_VARIABLE], fail);
  const sources = [...listed.map((entry) => listedSource(entry, fail)), ...custom].map((s) => ({
    ...s,
    sweepFloor: floorOf(s.name),
  }));
  const testnet = destination ? destination.testnet : !sources.some((s) => CHAINS.get(s.name)?.testnet === false);
  for (const source of sources) {
    const info = CHAINS.get(source.name);
    if (info && info.testnet !== testnet)
      fail(
        "STABLEGATE_CCTP_SOURCES",
        `${source.name} is a ${info.testnet ? "testnet" : "mainnet"}, the settlement chain is not`,
      );
    if (source.chainId === settlement.chainId)
      fail("STABLEGATE_CCTP_SOURCES", `${source.name} is the settlement chain itself`);
  }
  if (new Set(sources.map((s) => s.name)).size !== sources.length)
    fail("STABLEGATE_CCTP_SOURCES", "a source chain is named twice");
  for (const name of (env.STABLEGATE_BRIDGE_STANDARD ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const source = sources.find((s) => s.name === name);
    if (!source) fail("STABLEGATE_BRIDGE_STANDARD", `${name} is not an enabled source chain`);
    source.finality = "standard";
  }

  const domainText = env.STABLEGATE_CCTP_DOMAIN?.trim();
  let domain = destination?.cctpDomain;
  if (domainText) {
    if (!/^\d{1,9}$/.test(domainText)) fail("STABLEGATE_CCTP_DOMAIN", `must be a whole number, got "${domainText}"`);
    domain = Number(domainText);
  }
  if (domain === undefined)
    fail(
      "STABLEGATE_CCTP_DOMAIN",
      "required for cross-chain funding when STABLEGATE_CCTP_SOURCES is set on a custom chain",
    );
  if (sources.some((s) => s.domain === domain))
    fail("STABLEGATE_CCTP_SOURCES", "a source chain has the settlement chain's CCTP domain");

  const network = testnet ? "testnet" : "mainnet";
  const boundText = env.STABLEGATE_BRIDGE_MAX_FEE_BPS?.trim();
  if (boundText && !(/^\d{1,5}$/.test(boundText) && Number(boundText) <= 10_000))
    fail("STABLEGATE_BRIDGE_MAX_FEE_BPS", `must be a whole number of basis points from 0 to 10000, got "${boundText}"`);
  return {
    maxBridgeFeeBps: boundText ? Number(boundText) : DEFAULT_MAX_BRIDGE_FEE_BPS,
    sources,
    apiUrl: apiUrlText ? apiUrlText.replace(/\/+$/, "") : ATTESTATION_API[network],
    domain,
    tokenMessenger: addressOr(env, "STABLEGATE_CCTP_TOKEN_MESSENGER", CCTP_CONTRACTS[network].tokenMessenger, fail),
    messageTransmitter: addressOr(
      env,
      "STABLEGATE_CCTP_MESSAGE_TRANSMITTER",
      CCTP_CONTRACTS[network].messageTransmitter,
      fail,
    ),
    redeemFloor: floorOf(settlement.name),
  };
}

function listedSource(entry: string, fail: Fail) {
  const eq = entry.indexOf("=");
  const name = eq < 0 ? entry : entry.slice(0, eq).trim();
  const info = CHAINS.get(name);
  if (!info) fail("STABLEGATE_CCTP_SOURCES", `unknown chain "${name}"; use names from the chain table`);
  const rpcUrl = eq < 0 ? defaultRpcUrl(info) : entry.slice(eq + 1).trim();
  const problem = urlProblem(rpcUrl, HTTP);
  if (problem) fail("STABLEGATE_CCTP_SOURCES", `the RPC URL for ${name} ${problem}`);
  return {
    name,
    chainId: info.chainId,
    domain: info.cctpDomain,
    usdc: info.usdc,
    rpcUrl,
    ...typicalSeconds(info),
    confirmations: info.confirmations,
    pollIntervalMs: pollIntervalOf(info),
    finality: finality(info.fastSource),
  };
}

/** Typical CCTP times (Circle's figures): fast about 8 s from L2s, 20 s from Ethereum. */
function typicalSeconds(info: ChainInfo): { fastSeconds: number | null; standardSeconds: number } {
  if (!info.fastSource) return { fastSeconds: null, standardSeconds: 8 };
  return { fastSeconds: info.cctpDomain === 0 ? 20 : 8, standardSeconds: 16 * 60 };
}

function customSources(env: Env, fail: Fail) {
  const raw = env.STABLEGATE_CCTP_CUSTOM_SOURCES?.trim();
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    fail("STABLEGATE_CCTP_CUSTOM_SOURCES", "must be a JSON array");
  }
  if (!Array.isArray(parsed)) fail("STABLEGATE_CCTP_CUSTOM_SOURCES", "must be a JSON array");
  return parsed.map((item: Record<string, unknown>, i) => {
    const where = `entry ${i + 1}`;
    const name =
      typeof item.name === "string" && /^[a-z0-9-]{1,40}$/.test(item.name)
        ? item.name
        : fail("STABLEGATE_CCTP_CUSTOM_SOURCES", `${where}: name must be lower-case letters, digits and dashes`);
    if (CHAINS.has(name))
      fail(
        "STABLEGATE_CCTP_CUSTOM_SOURCES",
        `${where}: ${name} is a built-in chain; list it in STABLEGATE_CCTP_SOURCES`,
      );
    const int = (key: string) =>
      Number.isSafeInteger(item[key]) && (item[key] as number) >= 0
        ? (item[key] as number)
        : fail("STABLEGATE_CCTP_CUSTOM_SOURCES", `${where}: ${key} must be a whole number`);
    const within = (key: string, min: number, max: number) =>
      Number.isSafeInteger(item[key]) && (item[key] as number) >= min && (item[key] as number) <= max
        ? (item[key] as number)
        : fail("STABLEGATE_CCTP_CUSTOM_SOURCES", `${where}: ${key} must be a whole number from ${min} to ${max}`);
    const usdc =
      typeof item.usdc === "string" && isAddress(item.usdc, { strict: false })
        ? getAddress(item.usdc)
        : fail("STABLEGATE_CCTP_CUSTOM_SOURCES", `${where}: usdc must be an address`);
    const rpcProblem = typeof item.rpc_url === "string" ? urlProblem(item.rpc_url, HTTP) : "must be a string";
    const rpcUrl =
      rpcProblem === null
        ? (item.rpc_url as string)
        : fail("STABLEGATE_CCTP_CUSTOM_SOURCES", `${where}: rpc_url ${rpcProblem}`);
    const domain = int("domain");
    return {
      name,
      chainId: int("chain_id"),
      domain,
      usdc,
      rpcUrl,
      fastSeconds: 8 as number | null,
      standardSeconds: 16 * 60,
      // The settlement chain's bounds (STABLEGATE_CONFIRMATIONS, STABLEGATE_POLL_INTERVAL_MS): a
      // watcher polling every 0 ms would spin.
      confirmations: item.confirmations === undefined ? 1 : within("confirmations", 0, 10_000),
      pollIntervalMs: item.poll_interval_ms === undefined ? 1_000 : within("poll_interval_ms", 50, 3_600_000),
      // A deposit address commits its fast domains as a 256-bit map: a higher domain bridges standard.
      finality: finality(domain < 256),
    };
  });
}

function addressOr(env: Env, name: string, fallback: Address, fail: Fail): Address {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!isAddress(raw, { strict: false })) fail(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`);
  return getAddress(raw);
}
