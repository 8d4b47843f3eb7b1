import type { Address, Chain } from "viem";
import * as viemChains from "viem/chains";

/** The floor of a custom chain, whose gas nothing here knows: one cent. */
export const CUSTOM_SWEEP_FLOOR = 10_000n;

export interface ChainInfo {
  name: string;
  chainId: number;
  usdc: Address;
  /**
   * The `standard` speed policy's depth: blocks on top of a transfer before it counts
   * (docs/speed.md says where each figure comes from). STABLEGATE_CONFIRMATIONS overrides it.
   */
  confirmations: number;
  blockTimeMs: number;
  /**
   * Micro-USDC below which a deposit address's funds here are not worth the relayer's gas to
   * move (sweep or bridge): about twenty times a settlement's cost at ordinary gas prices, so
   * a stranger's dust cannot make the operator pay. STABLEGATE_SWEEP_FLOOR overrides it.
   */
  sweepFloor: bigint;
  /**
   * A conservative (high) price of the chain's native coin, in micro-USDC per whole coin: what
   * gasless payments' floor converts the relayer's gas at (docs/gasless.md). Set well above the
   * going price so a rally does not turn the floor into a subsidy; a floor too high only sends
   * small payers to a plain transfer.
   */
  nativePrice: bigint;
  cctpDomain: number;
  testnet: boolean;
  /** CCTP fast transfer is only offered from chains whose finality is slow enough to need it. */
  fastSource: boolean;
  /** Block explorer origin; its pages are `/tx/<hash>` and `/address/<address>`. */
  explorer: string;
  viem: Chain;
}

type Row = Omit<ChainInfo, "testnet" | "viem">;

const MAINNETS: Array<[Row, Chain]> = [
  [
    {
      name: "ethereum",
      chainId: 1,
      usdc: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      confirmations: 12,
      blockTimeMs: 12_000,
      sweepFloor: 5_000_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 0,
      fastSource: true,
      explorer: "https://etherscan.io",
    },
    viemChains.mainnet,
  ],
  [
    {
      name: "avalanche",
      chainId: 43114,
      usdc: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
      confirmations: 1,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 200_000_000n, // AVAX at 200 USD
      cctpDomain: 1,
      fastSource: false,
      explorer: "https://snowtrace.io",
    },
    viemChains.avalanche,
  ],
  [
    {
      name: "optimism",
      chainId: 10,
      usdc: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
      confirmations: 30,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 2,
      fastSource: true,
      explorer: "https://optimistic.etherscan.io",
    },
    viemChains.optimism,
  ],
  [
    {
      name: "arbitrum",
      chainId: 42161,
      usdc: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
      confirmations: 300,
      blockTimeMs: 1_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 3,
      fastSource: true,
      explorer: "https://arbiscan.io",
    },
    viemChains.arbitrum,
  ],
  [
    {
      name: "base",
      chainId: 8453,
      usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      confirmations: 30,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 6,
      fastSource: true,
      explorer: "https://basescan.org",
    },
    viemChains.base,
  ],
  [
    {
      name: "polygon",
      chainId: 137,
      usdc: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      confirmations: 50,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 5_000_000n, // POL at 5 USD
      cctpDomain: 7,
      fastSource: false,
      explorer: "https://polygonscan.com",
    },
    viemChains.polygon,
  ],
];

const TESTNETS: Array<[Row, Chain]> = [
  [
    {
      name: "sepolia",
      chainId: 11155111,
      usdc: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
      confirmations: 12,
      blockTimeMs: 12_000,
      sweepFloor: 5_000_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 0,
      fastSource: true,
      explorer: "https://sepolia.etherscan.io",
    },
    viemChains.sepolia,
  ],
  [
    {
      name: "avalanche-fuji",
      chainId: 43113,
      usdc: "0x5425890298aed601595a70AB815c96711a31Bc65",
      confirmations: 1,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 200_000_000n, // AVAX at 200 USD
      cctpDomain: 1,
      fastSource: false,
      explorer: "https://testnet.snowtrace.io",
    },
    viemChains.avalancheFuji,
  ],
  [
    {
      name: "optimism-sepolia",
      chainId: 11155420,
      usdc: "0x5fd84259d66Cd46123540766Be93DFE6D43130D7",
      confirmations: 30,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 2,
      fastSource: true,
      explorer: "https://optimism-sepolia.blockscout.com",
    },
    viemChains.optimismSepolia,
  ],
  [
    {
      name: "arbitrum-sepolia",
      chainId: 421614,
      usdc: "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d",
      confirmations: 300,
      blockTimeMs: 1_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 3,
      fastSource: true,
      explorer: "https://sepolia.arbiscan.io",
    },
    viemChains.arbitrumSepolia,
  ],
  [
    {
      name: "base-sepolia",
      chainId: 84532,
      usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      confirmations: 30,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 10_000_000_000n, // ETH at 10,000 USD
      cctpDomain: 6,
      fastSource: true,
      explorer: "https://sepolia.basescan.org",
    },
    viemChains.baseSepolia,
  ],
  [
    {
      name: "polygon-amoy",
      chainId: 80002,
      usdc: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
      confirmations: 50,
      blockTimeMs: 2_000,
      sweepFloor: 100_000n,
      nativePrice: 5_000_000n, // POL at 5 USD
      cctpDomain: 7,
      fastSource: false,
      explorer: "https://amoy.polygonscan.com",
    },
    viemChains.polygonAmoy,
  ],
];

/**
 * Built-in settlement chains (USDC and CCTP addresses checked against Circle's docs).
 * Confirmations trade speed against reorg risk: about a minute of blocks on L2s, 12 on
 * Ethereum, a few minutes on Polygon PoS; override with STABLEGATE_CONFIRMATIONS.
 */
export const CHAINS: ReadonlyMap<string, ChainInfo> = new Map(
  [
    ...MAINNETS.map(([row, chain]) => ({ ...row, testnet: false, viem: chain })),
    ...TESTNETS.map(([row, chain]) => ({ ...row, testnet: true, viem: chain })),
  ].map((info) => [info.name, info]),
);

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

/** Circle's attestation service for each network. */
export const ATTESTATION_API = {
  mainnet: "https://iris-api.circle.com",
  testnet: "https://iris-api-sandbox.circle.com",
} as const;

export function defaultRpcUrl(info: ChainInfo): string {
  const url = info.viem.rpcUrls.default.http[0];
  if (!url) throw new Error(`no public RPC known for ${info.name}`);
  return url;
}

/** How often a watcher asks a built-in chain for its head: twice a block, so a block is seen within half of one. */
export const pollIntervalOf = (info: Pick<ChainInfo, "blockTimeMs">): number => Math.max(250, info.blockTimeMs / 2);
