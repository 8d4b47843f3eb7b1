import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { ConfigError } from "../src/lib/errors.ts";
import { parseIpRange } from "../src/lib/ip-address.ts";

const CUSTOM = {
  STABLEGATE_CHAIN: "custom",
  STABLEGATE_CHAIN_ID: "31337",
  STABLEGATE_USDC_ADDRESS: "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
  STABLEGATE_RPC_URL: "http://127.0.0.1:8545",
};
const RELAYER_KEY = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/** Runs loadConfig, expecting a ConfigError; returns it. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("loadConfig defaults", () => {
  test("an empty environment gives the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      dataDir: "./stablegate-data",
      host: "0.0.0.0",
      port: 8080,
      baseUrl: "http://localhost:8080",
      relayerKey: undefined,
      feeBps: 0,
      feeRecipient: undefined,
      paymentWindowMs: 60 * 60_000,
      webhookAllowPrivate: false,
      logLevel: "info",
      defaultSpeed: "standard",
      finalTag: "finalized",
    });
    expect(config.chain.name).toBe("base-sepolia");
    expect(config.chain.chainId).toBe(84532);
    expect(config.chain.usdc).toBe("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
    expect(config.chain.rpcUrl).toMatch(/^https:\/\//);
    expect(config.chain.confirmations).toBeGreaterThan(0);
    expect(config.chain.pollIntervalMs).toBeGreaterThan(0);
  });

  test("each built-in chain's standard depth and watcher poll: the chain table's figures (docs/speed.md)", () => {
    const of = (name: string) => {
      const { confirmations, pollIntervalMs } = loadConfig({ STABLEGATE_CHAIN: name }).chain;
      return { confirmations, pollIntervalMs };
    };
    // Twice a block (at least every 250 ms); the depth as docs/speed.md gives its sources.
    expect(of("base")).toEqual({ confirmations: 30, pollIntervalMs: 1_000 });
    expect(of("ethereum")).toEqual({ confirmations: 12, pollIntervalMs: 6_000 });
    expect(of("polygon")).toEqual({ confirmations: 50, pollIntervalMs: 1_000 });
    expect(of("arbitrum")).toEqual({ confirmations: 300, pollIntervalMs: 500 });
    expect(of("avalanche")).toEqual({ confirmations: 1, pollIntervalMs: 1_000 });
    expect(loadConfig({ STABLEGATE_CHAIN: "base", STABLEGATE_CONFIRMATIONS: "4" }).chain.confirmations).toBe(4);
  });

  test("empty and blank variables count as unset", () => {
    expect(loadConfig({ STABLEGATE_PORT: "", STABLEGATE_CHAIN: "  " })).toMatchObject({
      port: 8080,
      chain: { name: "base-sepolia" },
    });
  });

  test("the port shapes the default base URL; a base URL loses its trailing slash", () => {
    expect(loadConfig({ STABLEGATE_PORT: "9000" }).baseUrl).toBe("http://localhost:9000");
    expect(loadConfig({ STABLEGATE_BASE_URL: "https://pay.example.com/" }).baseUrl).toBe("https://pay.example.com");
  });

  test("a custom chain takes its id, USDC and RPC from the environment, 1 confirmation by default", () => {
    const config = loadConfig(CUSTOM);
    expect(config.chain).toMatchObject({
      name: "custom",
      chainId: 31337,
      usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", // checksummed
      rpcUrl: "http://127.0.0.1:8545",
      confirmations: 1,
    });
  });

  test("sweep floors: the chain table's (Ethereum above L2s), one cent on a custom chain, overridden for all or per chain", () => {
    expect(loadConfig({ STABLEGATE_CHAIN: "ethereum" }).chain.sweepFloor).toBe(5_000_000n);
    expect(loadConfig({ STABLEGATE_CHAIN: "base" }).chain.sweepFloor).toBe(100_000n);
    expect(loadConfig(CUSTOM).chain.sweepFloor).toBe(10_000n);
    expect(loadConfig({ ...CUSTOM, STABLEGATE_SWEEP_FLOOR: "2" }).chain.sweepFloor).toBe(2_000_000n);
    const perChain = {
      STABLEGATE_SWEEP_FLOOR: "base=0.5, ethereum=20.00",
      STABLEGATE_CCTP_SOURCES: "ethereum,arbitrum",
    };
    const config = loadConfig({ STABLEGATE_CHAIN: "base", ...perChain });
    expect(config.chain.sweepFloor).toBe(500_000n);
    expect(config.crossChain!.redeemFloor).toBe(500_000n);
    expect(config.crossChain!.sources.map((s) => [s.name, s.sweepFloor])).toEqual([
      ["ethereum", 20_000_000n],
      ["arbitrum", 100_000n],
    ]);
  });

  test("built-in chains can be overridden", () => {
    const config = loadConfig({
      STABLEGATE_CHAIN: "base",
      STABLEGATE_CONFIRMATIONS: "5",
      STABLEGATE_RPC_URL: "wss://rpc.example.com",
    });
    expect(config.chain).toMatchObject({
      name: "base",
      chainId: 8453,
      confirmations: 5,
      rpcUrl: "wss://rpc.example.com",
    });
  });

  test("durations, fee, flags, relayer key", () => {
    const config = loadConfig({
      STABLEGATE_PAYMENT_WINDOW: "90s",
      STABLEGATE_FEE_BPS: "150",
      STABLEGATE_FEE_RECIPIENT: "0x3333333333333333333333333333333333333333",
      STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on",
      STABLEGATE_RELAYER_KEY: RELAYER_KEY.toUpperCase(),
      STABLEGATE_LOG_LEVEL: "debug",
    });
    expect(config.paymentWindowMs).toBe(90_000);
    expect(config.feeBps).toBe(150);
    expect(config.feeRecipient).toBe("0x3333333333333333333333333333333333333333");
    expect(config.webhookAllowPrivate).toBe(true);
    expect(config.relayerKey).toBe(`0x${RELAYER_KEY}`);
    expect(config.logLevel).toBe("debug");
    expect(loadConfig({ STABLEGATE_PAYMENT_WINDOW: "2h" }).paymentWindowMs).toBe(7_200_000);
  });
});

describe("loadConfig: each bad value names its variable first", () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ["port abc", { STABLEGATE_PORT: "abc" }, "STABLEGATE_PORT"],
    ["port 0", { STABLEGATE_PORT: "0" }, "STABLEGATE_PORT"],
    ["port 65536", { STABLEGATE_PORT: "65536" }, "STABLEGATE_PORT"],
    ["port -1", { STABLEGATE_PORT: "-1" }, "STABLEGATE_PORT"],
    ["chain nope", { STABLEGATE_CHAIN: "nope" }, "STABLEGATE_CHAIN"],
    ["custom without chain id", { ...CUSTOM, STABLEGATE_CHAIN_ID: "" }, "STABLEGATE_CHAIN_ID"],
    ["custom without USDC address", { ...CUSTOM, STABLEGATE_USDC_ADDRESS: "" }, "STABLEGATE_USDC_ADDRESS"],
    ["custom without RPC URL", { ...CUSTOM, STABLEGATE_RPC_URL: "" }, "STABLEGATE_RPC_URL"],
    ["chain id abc", { ...CUSTOM, STABLEGATE_CHAIN_ID: "abc" }, "STABLEGATE_CHAIN_ID"],
    ["fee bps 5 without recipient", { STABLEGATE_FEE_BPS: "5" }, "STABLEGATE_FEE_RECIPIENT"],
    ["fee bps 10001", { STABLEGATE_FEE_BPS: "10001" }, "STABLEGATE_FEE_BPS"],
    ["fee bps 1.5", { STABLEGATE_FEE_BPS: "1.5" }, "STABLEGATE_FEE_BPS"],
    ["window 5x", { STABLEGATE_PAYMENT_WINDOW: "5x" }, "STABLEGATE_PAYMENT_WINDOW"],
    ["window 0s", { STABLEGATE_PAYMENT_WINDOW: "0s" }, "STABLEGATE_PAYMENT_WINDOW"],
    ["window 60", { STABLEGATE_PAYMENT_WINDOW: "60" }, "STABLEGATE_PAYMENT_WINDOW"],
    ["bad USDC address", { ...CUSTOM, STABLEGATE_USDC_ADDRESS: "0x1234" }, "STABLEGATE_USDC_ADDRESS"],
    [
      "bad fee recipient",
      { STABLEGATE_FEE_BPS: "5", STABLEGATE_FEE_RECIPIENT: "not-an-address" },
      "STABLEGATE_FEE_RECIPIENT",
    ],
    ["bad RPC URL scheme", { STABLEGATE_RPC_URL: "ftp://rpc.example.com" }, "STABLEGATE_RPC_URL"],
    ["bad base URL", { STABLEGATE_BASE_URL: "pay.example.com" }, "STABLEGATE_BASE_URL"],
    ["bad flag", { STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "maybe" }, "STABLEGATE_WEBHOOK_ALLOW_PRIVATE"],
    ["bad log level", { STABLEGATE_LOG_LEVEL: "loud" }, "STABLEGATE_LOG_LEVEL"],
    ["speed instant", { STABLEGATE_SPEED: "instant" }, "STABLEGATE_SPEED"],
    ["speed in capitals", { STABLEGATE_SPEED: "FAST" }, "STABLEGATE_SPEED"],
    ["final block tag latest", { STABLEGATE_FINAL_BLOCK_TAG: "latest" }, "STABLEGATE_FINAL_BLOCK_TAG"],
    ["bad confirmations", { STABLEGATE_CONFIRMATIONS: "many" }, "STABLEGATE_CONFIRMATIONS"],
    ["sweep floor not an amount", { STABLEGATE_SWEEP_FLOOR: "cheap" }, "STABLEGATE_SWEEP_FLOOR"],
    ["sweep floor with three decimals", { STABLEGATE_SWEEP_FLOOR: "0.001" }, "STABLEGATE_SWEEP_FLOOR"],
    ["sweep floor entry without a chain", { STABLEGATE_SWEEP_FLOOR: "base=0.10,=1" }, "STABLEGATE_SWEEP_FLOOR"],
    ["sweep floor entry with a bad amount", { STABLEGATE_SWEEP_FLOOR: "base=-1" }, "STABLEGATE_SWEEP_FLOOR"],
    ["trusted proxy not an address", { STABLEGATE_TRUSTED_PROXIES: "caddy" }, "STABLEGATE_TRUSTED_PROXIES"],
    ["trusted proxy prefix too long", { STABLEGATE_TRUSTED_PROXIES: "10.0.0.0/33" }, "STABLEGATE_TRUSTED_PROXIES"],
    [
      "trusted proxies with an empty entry",
      { STABLEGATE_TRUSTED_PROXIES: "10.0.0.1,,::1" },
      "STABLEGATE_TRUSTED_PROXIES",
    ],
    ["bad poll interval", { STABLEGATE_POLL_INTERVAL_MS: "10" }, "STABLEGATE_POLL_INTERVAL_MS"],
    ["bad relayer key", { STABLEGATE_RELAYER_KEY: "0x1234" }, "STABLEGATE_RELAYER_KEY"],
    ["host with an underscore", { STABLEGATE_HOST: "not_a_host" }, "STABLEGATE_HOST"],
    ["host that is no IPv4 address", { STABLEGATE_HOST: "999.1.1.1" }, "STABLEGATE_HOST"],
    ["host with a port", { STABLEGATE_HOST: "127.0.0.1:8080" }, "STABLEGATE_HOST"],
    ["websocket base URL", { STABLEGATE_BASE_URL: "ws://pay.example.com" }, "STABLEGATE_BASE_URL"],
    ["base URL without a host", { STABLEGATE_BASE_URL: "https://" }, "STABLEGATE_BASE_URL"],
    ["ftp CCTP source RPC", { STABLEGATE_CCTP_SOURCES: "sepolia=ftp://rpc.example.com" }, "STABLEGATE_CCTP_SOURCES"],
    [
      "websocket CCTP source RPC",
      { STABLEGATE_CCTP_SOURCES: "sepolia=wss://rpc.example.com" },
      "STABLEGATE_CCTP_SOURCES",
    ],
    [
      "gopher attestation API",
      { STABLEGATE_CCTP_SOURCES: "sepolia", STABLEGATE_CCTP_API_URL: "gopher://iris.example.com" },
      "STABLEGATE_CCTP_API_URL",
    ],
    [
      "gopher attestation API, cross-chain off",
      { STABLEGATE_CCTP_API_URL: "gopher://iris.example.com" },
      "STABLEGATE_CCTP_API_URL",
    ],
    [
      "custom CCTP source with an ftp RPC",
      {
        STABLEGATE_CCTP_CUSTOM_SOURCES: JSON.stringify([
          { name: "local", chain_id: 5, domain: 9, usdc: CUSTOM.STABLEGATE_USDC_ADDRESS, rpc_url: "ftp://x.example" },
        ]),
      },
      "STABLEGATE_CCTP_CUSTOM_SOURCES",
    ],
    ...[
      { poll_interval_ms: 0 },
      { poll_interval_ms: 3_600_001 },
      { confirmations: 10_001 },
      { confirmations: -1 },
      { confirmations: "2" },
    ].map((bad): [string, Record<string, string>, string] => [
      `custom CCTP source with ${JSON.stringify(bad)}`,
      {
        STABLEGATE_CCTP_CUSTOM_SOURCES: JSON.stringify([
          {
            name: "local",
            chain_id: 5,
            domain: 9,
            usdc: CUSTOM.STABLEGATE_USDC_ADDRESS,
            rpc_url: "http://x.example",
            ...bad,
          },
        ]),
      },
      "STABLEGATE_CCTP_CUSTOM_SOURCES",
    ]),
    // One letter's case flipped from the checksummed 0x036CbD53842c5426634e7929541eC2318f3dCF7e.
    [
      "fee recipient with a wrong checksum",
      { STABLEGATE_FEE_BPS: "5", STABLEGATE_FEE_RECIPIENT: "0x036cbD53842c5426634e7929541eC2318f3dCF7e" },
      "STABLEGATE_FEE_RECIPIENT",
    ],
    [
      "USDC address with a wrong checksum",
      { ...CUSTOM, STABLEGATE_USDC_ADDRESS: "0x036CbD53842c5426634e7929541eC2318f3dCF7E" },
      "STABLEGATE_USDC_ADDRESS",
    ],
  ];

  test.each(cases)("%s", (_name, env, variable) => {
    const error = configError(env);
    expect(error.message.startsWith(`${variable}:`)).toBe(true);
    expect(error.message).not.toContain("\n");
  });
});

describe("loadConfig accepts what it should", () => {
  test("hosts: IPv4, IPv6 and names", () => {
    for (const host of ["0.0.0.0", "127.0.0.1", "::", "::1", "localhost", "stablegate-1.internal"])
      expect(loadConfig({ STABLEGATE_HOST: host }).host).toBe(host);
  });

  test("trusted proxies: none by default; IPv4 and IPv6 addresses and CIDR ranges, comma-separated", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    const { trustedProxies } = loadConfig({ STABLEGATE_TRUSTED_PROXIES: " 172.30.0.0/24, 10.1.2.3 ,fd00::/8,::1" });
    expect(trustedProxies).toEqual([
      parseIpRange("172.30.0.0/24")!,
      parseIpRange("10.1.2.3/32")!,
      parseIpRange("fd00::/8")!,
      parseIpRange("::1/128")!,
    ]);
  });

  test("each speed policy and final block tag, around spaces", () => {
    for (const speed of ["fast", "standard", "final"] as const)
      expect(loadConfig({ STABLEGATE_SPEED: ` ${speed} ` }).defaultSpeed).toBe(speed);
    for (const tag of ["finalized", "safe"] as const)
      expect(loadConfig({ STABLEGATE_FINAL_BLOCK_TAG: tag }).finalTag).toBe(tag);
    // The refusal lists what is allowed.
    expect(configError({ STABLEGATE_SPEED: "instant" }).message).toBe(
      'STABLEGATE_SPEED: must be one of fast, standard, final, got "instant"',
    );
    expect(configError({ STABLEGATE_FINAL_BLOCK_TAG: "latest" }).message).toBe(
      'STABLEGATE_FINAL_BLOCK_TAG: must be one of finalized, safe, got "latest"',
    );
  });

  test("an all-lower-case fee recipient has no checksum to check and is stored checksummed", () => {
    const config = loadConfig({
      STABLEGATE_FEE_BPS: "5",
      STABLEGATE_FEE_RECIPIENT: "0x036cbd53842c5426634e7929541ec2318f3dcf7e",
    });
    expect(config.feeRecipient).toBe("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
  });

  test("http(s) CCTP source RPCs and attestation API", () => {
    const config = loadConfig({
      STABLEGATE_CCTP_SOURCES: "sepolia=https://rpc.example.com/key",
      STABLEGATE_CCTP_API_URL: "http://127.0.0.1:9999/",
    });
    expect(config.crossChain?.sources.map((s) => s.rpcUrl)).toEqual(["https://rpc.example.com/key"]);
    expect(config.crossChain?.apiUrl).toBe("http://127.0.0.1:9999");
  });
});

describe("loadConfig never repeats secrets", () => {
  test.each([
    ["one byte short", RELAYER_KEY.slice(2)],
    ["one byte long", `${RELAYER_KEY}ff`],
    ["a non-hex character", `${RELAYER_KEY.slice(0, -1)}g`],
    ["0x and a non-hex character", `0x${RELAYER_KEY.slice(0, -1)}z`],
  ])("a relayer key that is %s is refused without echoing it", (_name, key) => {
    const error = configError({ STABLEGATE_RELAYER_KEY: key });
    expect(error.message.startsWith("STABLEGATE_RELAYER_KEY:")).toBe(true);
    expect(error.message).not.toContain(key);
    expect(error.message).not.toContain(RELAYER_KEY.slice(8, 24));
  });

  test("a malformed RPC URL (which may embed a provider key) is not echoed", () => {
    const secret = "provider-secret-abc123";
    const error = configError({ STABLEGATE_RPC_URL: `ftp://rpc.example.com/${secret}` });
    expect(error.message).not.toContain(secret);
  });
});
