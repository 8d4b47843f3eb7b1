import { type Address, getAddress, isAddress } from "viem";
import { urlProblem } from "../lib/url-check.ts";
import { CHAINS, type ChainInfo, defaultRpcUrl } from "./chains.ts";
import { type BridgeTerms, withoutBridging } from "./deposit-terms.ts";
import { fastDomainsOf } from "./deposit-v3.ts";
import { SWEEP_FLOOR_VARIABLE, sweepFloors } from "./sweep-floor.ts";

/** Source chains and the attestation service are reached over HTTP. */
const HTTP = ["http:", "https:"];

/** Circle's CCTP V2 contracts: the same addresses on every supported chain of a network. */
export const CCTP_CONTRACTS = {
  mainnet: {
    tokenMessenger: "0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d",
    messageTransmitter: "0x81D40F21F12A8F0E3252Bccb954D722d4c464B64",
  },
  testnet: {
    tokenMessenger: "0x8FE6B999Dc680CcFDD5Bf7EB0974218be2542DAA",
    messageTransmitter: "0xE737e5cEBEEBa77EFE34D4aa090756590b1CE275",
  },
} as const satisfies Record<string, { tokenMessenger: Address; messageTransmitter: Address }>;

export const ATTESTATION_API = {
  mainnet: "https://iris-api.circle.com",
  testnet: "https://iris-api-sandbox.circle.com",
} as const;

export interface CctpSource {
  name: string;
  chainId: number;
  domain: number;
  usdc: Address;
  rpcUrl: string;
  /** Typical seconds from burn to attestation; fast is null where the chain cannot be a fast source. */
  fastSeconds: number | null;
  standardSeconds: number;
  /** Blocks on top of a plain transfer to a deposit address before it is credited. */
  confirmations: number;
  /** How often its watcher polls. */
  pollIntervalMs: number;
  /** How deposit addresses' funds on it are bridged: fast where Circle offers it, unless the operator says standard. */
  finality: "fast" | "standard";
  /** Micro-USDC below which a deposit address's funds here are not bridged at the relayer's cost. */
  sweepFloor: bigint;
}

export interface CrossChainConfig {
  sources: CctpSource[];
  apiUrl: string;
  /** CCTP domain of the settlement chain (the destination). */
  domain: number;
  tokenMessenger: Address;
  messageTransmitter: Address;
  /**
   * Bound on the CCTP fee a new payment's deposit address may pay to bridge itself to the
   * settlement chain, in basis points; committed in the address's salt (DepositFactoryV2, V3).
   */
  maxBridgeFeeBps: number;
  /**
   * The settlement chain's sweep floor: a payer's burn smaller than this (and than what is due) is
   * not redeemed at the relayer's cost.
   */
  redeemFloor: bigint;
}

/**
 * The bridge terms new payments' deposit addresses commit to (version 3, src/chain/deposit-terms.ts):
 * with source chains, the settlement domain, messenger and fee bound, and fast finality from
 * exactly the sources bridged fast (fast-capable and not in STABLEGATE_BRIDGE_STANDARD), so
 * nobody can make an address pay the fast fee from anywhere else. Without source chains, no
 * messenger: the addresses never bridge.
 */
export function newDepositTerms(crossChain: CrossChainConfig | null, settlementName: string): BridgeTerms {
  if (!crossChain) return withoutBridging(CHAINS.get(settlementName)?.cctpDomain ?? 0);
  return {
    settlementDomain: crossChain.domain,
    tokenMessenger: crossChain.tokenMessenger,
    maxBridgeFeeBps: crossChain.maxBridgeFeeBps,
    fastDomains: fastDomainsOf(crossChain.sources.filter((s) => s.finality === "fast").map((s) => s.domain)),
  };
}

/** Default bridge-fee bound: above Circle's highest fast-transfer fee (14 bps, from Linea). */
export const DEFAULT_MAX_BRIDGE_FEE_BPS = 15;

type Env = Record<string, string | undefined>;
type Fail = (variable: string, problem: string) => never;

/**
 * Cross-chain funding is on when STABLEGATE_CCTP_SOURCES names source chains ("base,arbitrum"
 * or "base=https://rpc..." to choose the RPC) or STABLEGATE_CCTP_CUSTOM_SOURCES defines
 * unlisted ones (local test chains) as JSON.
 */
export function crossChainConfig(
  env: Env,
  settlement: { name: string; chainId: number },
  fail: Fail,
): CrossChainConfig | null {
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
  const sources: CctpSource[] = [...listed.map((entry) => listedSource(entry, fail)), ...custom].map((s) => ({
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

function listedSource(entry: string, fail: Fail): Omit<CctpSource, "sweepFloor"> {
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
    pollIntervalMs: info.blockTimeMs,
    finality: info.fastSource ? "fast" : "standard",
  };
}

/** Typical CCTP times (Circle's figures): fast about 8 s from L2s, 20 s from Ethereum. */
function typicalSeconds(info: ChainInfo): { fastSeconds: number | null; standardSeconds: number } {
  if (!info.fastSource) return { fastSeconds: null, standardSeconds: 8 };
  return { fastSeconds: info.cctpDomain === 0 ? 20 : 8, standardSeconds: 16 * 60 };
}

function customSources(env: Env, fail: Fail): Array<Omit<CctpSource, "sweepFloor">> {
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
      fastSeconds: 8,
      standardSeconds: 16 * 60,
      // The settlement chain's bounds (STABLEGATE_CONFIRMATIONS, STABLEGATE_POLL_INTERVAL_MS): a
      // watcher polling every 0 ms would spin.
      confirmations: item.confirmations === undefined ? 1 : within("confirmations", 0, 10_000),
      pollIntervalMs: item.poll_interval_ms === undefined ? 1_000 : within("poll_interval_ms", 50, 3_600_000),
      // A deposit address commits its fast domains as a 256-bit map: a higher domain bridges standard.
      finality: domain < 256 ? "fast" : "standard",
    };
  });
}

function addressOr(env: Env, name: string, fallback: Address, fail: Fail): Address {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!isAddress(raw, { strict: false })) fail(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`);
  return getAddress(raw);
}
