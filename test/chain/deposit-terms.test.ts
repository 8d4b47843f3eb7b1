/**
 * The terms new payments' deposit addresses commit to, from the real configuration, and the calls
 * each factory version's rows get (src/chain/deposit-terms.ts). The addresses themselves are
 * checked against the factories on a real chain in test/chain/deposit-factory-v*.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { type Address, decodeFunctionData, type Hex, zeroAddress } from "viem";
import { depositFactoryAbi, factoryAddress } from "../../src/chain/contracts.ts";
import { newDepositTerms } from "../../src/chain/cross-chain-config.ts";
import {
  bridgeCall,
  bridgesFromSources,
  factoryOf,
  fastBridgeAllowed,
  issueDeposit,
  recoverData,
  settleCall,
  settleData,
  type TermsRow,
} from "../../src/chain/deposit-terms.ts";
import { depositFactoryV2Abi, factoryV2Address } from "../../src/chain/deposit-v2.ts";
import { depositAddressV3, depositFactoryV3Abi, factoryV3Address, fastDomainsOf } from "../../src/chain/deposit-v3.ts";
import { DEFAULT_MAX_BRIDGE_FEE_BPS, loadConfig } from "../../src/config.ts";
import { CCTP_CONTRACTS } from "../../src/lib/chains.ts";

const PAYMENT_ID = `0x${"ab".repeat(32)}` as Hex;
const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Address;
const PAYOUT = "0x1111111111111111111111111111111111111111" as Address;
const FEE_RECIPIENT = "0x2222222222222222222222222222222222222222" as Address;
const params = { paymentId: PAYMENT_ID, token: USDC, payout: PAYOUT, feeRecipient: FEE_RECIPIENT, feeBps: 100 };

const termsFor = (env: Record<string, string>) => {
  const config = loadConfig(env);
  return newDepositTerms(config.crossChain, config.chain.name);
};

describe("new payments' deposit terms", () => {
  test("with source chains: the settlement domain, messenger and bound, fast only from the sources bridged fast", () => {
    // Base (domain 6) settles; Ethereum (0) and Arbitrum (3) are fast sources, Avalanche (1) and
    // Polygon (7) have no fast transfers.
    const env = { STABLEGATE_CHAIN: "base", STABLEGATE_CCTP_SOURCES: "ethereum,arbitrum,avalanche,polygon" };
    expect(termsFor(env)).toEqual({
      settlementDomain: 6,
      tokenMessenger: CCTP_CONTRACTS.mainnet.tokenMessenger,
      maxBridgeFeeBps: DEFAULT_MAX_BRIDGE_FEE_BPS,
      fastDomains: (1n << 0n) | (1n << 3n),
    });
    // The operator's choice of standard takes the source out of the map: nobody can ask fast there.
    expect(termsFor({ ...env, STABLEGATE_BRIDGE_STANDARD: "ethereum" }).fastDomains).toBe(1n << 3n);
    expect(termsFor({ ...env, STABLEGATE_BRIDGE_STANDARD: "ethereum,arbitrum" }).fastDomains).toBe(0n);
    expect(termsFor({ ...env, STABLEGATE_BRIDGE_MAX_FEE_BPS: "4" }).maxBridgeFeeBps).toBe(4);
  });

  test("a custom source is fast unless its domain cannot be in the 256-bit map", () => {
    const custom = (domain: number) =>
      JSON.stringify([{ name: "local", chain_id: 5, domain, usdc: USDC, rpc_url: "http://127.0.0.1:9545" }]);
    const env = {
      STABLEGATE_CHAIN: "custom",
      STABLEGATE_CHAIN_ID: "31337",
      STABLEGATE_USDC_ADDRESS: USDC,
      STABLEGATE_RPC_URL: "http://127.0.0.1:8545",
      STABLEGATE_CCTP_DOMAIN: "9",
    };
    expect(termsFor({ ...env, STABLEGATE_CCTP_CUSTOM_SOURCES: custom(255) }).fastDomains).toBe(1n << 255n);
    const high = loadConfig({ ...env, STABLEGATE_CCTP_CUSTOM_SOURCES: custom(256) });
    expect(high.crossChain!.sources[0]!.finality).toBe("standard");
    expect(newDepositTerms(high.crossChain, high.chain.name).fastDomains).toBe(0n);
  });

  test("without source chains: no messenger, no bound, no fast domain, the chain's CCTP domain or 0", () => {
    const none = { tokenMessenger: zeroAddress, maxBridgeFeeBps: 0, fastDomains: 0n };
    expect(termsFor({ STABLEGATE_CHAIN: "ethereum" })).toEqual({ settlementDomain: 0, ...none });
    expect(termsFor({ STABLEGATE_CHAIN: "arbitrum" })).toEqual({ settlementDomain: 3, ...none });
    expect(
      termsFor({
        STABLEGATE_CHAIN: "custom",
        STABLEGATE_CHAIN_ID: "31337",
        STABLEGATE_USDC_ADDRESS: USDC,
        STABLEGATE_RPC_URL: "http://127.0.0.1:8545",
      }),
    ).toEqual({ settlementDomain: 0, ...none });
  });

  test("are version 3, recorded as the row stores them", () => {
    const bridge = termsFor({ STABLEGATE_CHAIN: "base", STABLEGATE_CCTP_SOURCES: "arbitrum" });
    const issued = issueDeposit(params, bridge);
    expect(issued.deposit).toBe(depositAddressV3({ ...params, ...bridge }));
    expect(issued.fields).toEqual({
      factory_version: 3,
      settlement_domain: 6,
      token_messenger: CCTP_CONTRACTS.mainnet.tokenMessenger,
      max_bridge_fee_bps: DEFAULT_MAX_BRIDGE_FEE_BPS,
      fast_domains: "8",
    });
  });
});

/** A payments row's terms for `version`, as the store reads them back. */
function row(version: 1 | 2 | 3, overrides: Partial<TermsRow> = {}): TermsRow {
  const base = {
    id: PAYMENT_ID,
    token_address: USDC,
    payout_address: PAYOUT,
    fee_recipient: FEE_RECIPIENT,
    fee_bps: 100,
  };
  if (version === 1)
    return {
      ...base,
      factory_version: 1,
      settlement_domain: null,
      token_messenger: null,
      max_bridge_fee_bps: null,
      fast_domains: null,
      ...overrides,
    };
  return {
    ...base,
    factory_version: version,
    settlement_domain: 6,
    token_messenger: CCTP_CONTRACTS.mainnet.tokenMessenger,
    max_bridge_fee_bps: 15,
    fast_domains: version === 3 ? fastDomainsOf([3]).toString() : null,
    ...overrides,
  };
}

describe("each version's calls", () => {
  test("settle and recover go to the row's own factory, with its terms", () => {
    expect([1, 2, 3].map((v) => factoryOf({ factory_version: v as 1 | 2 | 3 }))).toEqual([
      factoryAddress,
      factoryV2Address,
      factoryV3Address,
    ]);
    const v3 = decodeFunctionData({ abi: depositFactoryV3Abi, data: settleData(row(3)) });
    expect(v3).toEqual({
      functionName: "settle",
      args: [
        {
          paymentId: PAYMENT_ID,
          token: USDC,
          payout: PAYOUT,
          feeRecipient: FEE_RECIPIENT,
          feeBps: 100,
          settlementDomain: 6,
          tokenMessenger: CCTP_CONTRACTS.mainnet.tokenMessenger,
          maxBridgeFeeBps: 15,
          fastDomains: 8n,
        },
      ],
    });
    expect(settleCall(row(3)).address).toBe(factoryV3Address);
    expect(decodeFunctionData({ abi: depositFactoryV2Abi, data: settleData(row(2)) }).functionName).toBe("settle");
    expect(decodeFunctionData({ abi: depositFactoryAbi, data: settleData(row(1)) }).args).toEqual([
      PAYMENT_ID,
      USDC,
      PAYOUT,
      FEE_RECIPIENT,
      100,
    ]);
    const recovered = decodeFunctionData({ abi: depositFactoryV3Abi, data: recoverData(row(3), zeroAddress) });
    expect(recovered.functionName).toBe("recover");
    expect(recovered.args?.[1]).toBe(zeroAddress);
  });

  test("bridgeCall: to the row's factory for versions 2 and 3, never for version 1", () => {
    const v3 = bridgeCall(row(3), USDC, 150n, 2000);
    expect(v3.to).toBe(factoryV3Address);
    const decoded = decodeFunctionData({ abi: depositFactoryV3Abi, data: v3.data });
    expect(decoded.functionName).toBe("bridge");
    expect(decoded.args?.slice(1)).toEqual([USDC, 150n, 2000]);
    const v2 = bridgeCall(row(2), USDC, 150n, 1000);
    expect(v2.to).toBe(factoryV2Address);
    expect(decodeFunctionData({ abi: depositFactoryV2Abi, data: v2.data }).args?.slice(1)).toEqual([USDC, 150n, 1000]);
    expect(() => bridgeCall(row(1), USDC, 0n, 2000)).toThrow("version 1");
  });

  test("who bridges, and from where fast finality may be asked", () => {
    expect(bridgesFromSources(row(1))).toBe(false);
    expect(bridgesFromSources(row(2))).toBe(true);
    expect(bridgesFromSources(row(3))).toBe(true);
    expect(bridgesFromSources(row(3, { token_messenger: zeroAddress }))).toBe(false);
    // Version 2 lets any caller choose; version 3 only from its committed domains (here 3).
    expect(fastBridgeAllowed(row(2), 0)).toBe(true);
    expect(fastBridgeAllowed(row(3), 3)).toBe(true);
    expect(fastBridgeAllowed(row(3), 0)).toBe(false);
    expect(fastBridgeAllowed(row(3), 300)).toBe(false);
    expect(fastBridgeAllowed(row(1), 3)).toBe(false);
    expect(() => fastDomainsOf([256])).toThrow("0 to 255");
  });
});
