/** viem clients and contract deployment against a test anvil (see ./anvil.ts). */
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseAbi,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { type Artifact, artifacts } from "../../src/chain/contracts.ts";
import type { Anvil } from "../../src/dev/anvil.ts";
import { waitFor } from "./wait.ts";

export type TestWallet = WalletClient<Transport, Chain, Account>;

/** The public client polls fast so receipts on an automining anvil come back promptly. */
export function publicClientFor(rpcUrl: string): PublicClient {
  return createPublicClient({ chain: foundry, transport: http(rpcUrl), pollingInterval: 20 });
}

export function walletClientFor(rpcUrl: string, privateKey: Hex): TestWallet {
  return createWalletClient({ chain: foundry, transport: http(rpcUrl), account: privateKeyToAccount(privateKey) });
}

/** Deploys an artifact with constructor args and waits for it; returns the contract address. */
export async function deployArtifact(
  publicClient: PublicClient,
  walletClient: TestWallet,
  artifact: Artifact,
  args: readonly unknown[] = [],
): Promise<Address> {
  const hash = await walletClient.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) {
    throw new Error(`deploying ${artifact.contractName} failed (tx ${hash})`);
  }
  return getAddress(receipt.contractAddress);
}

/** USDC look-alike: 6 decimals, anyone may `mint` and `setBlocked`. */
export function deployTestUsdc(publicClient: PublicClient, walletClient: TestWallet): Promise<Address> {
  return deployArtifact(publicClient, walletClient, artifacts.TestUSDC);
}

/** Another ERC-20 (see contracts/test/TestToken.sol); `returnsNothing` mimics USDT's transfer. */
export function deployTestToken(
  publicClient: PublicClient,
  walletClient: TestWallet,
  opts: { name?: string; symbol?: string; decimals?: number; returnsNothing?: boolean } = {},
): Promise<Address> {
  const { name = "Test Token", symbol = "TEST", decimals = 18, returnsNothing = false } = opts;
  return deployArtifact(publicClient, walletClient, artifacts.TestToken, [name, symbol, decimals, returnsNothing]);
}

/** Sends a transaction built by `send` and fails unless it is mined successfully. */
export async function mined(publicClient: PublicClient, send: Promise<Hex>) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash: await send });
  if (receipt.status !== "success") throw new Error(`tx ${receipt.transactionHash} reverted`);
  return receipt;
}

/**
 * The transaction once the node has it. The server records a transaction before it sends it (so
 * that a crash cannot lose it), so a hash read from its records may not have reached the node yet.
 */
export function atNode(publicClient: PublicClient, hash: Hex) {
  return waitFor(
    () => publicClient.getTransaction({ hash }).catch(() => undefined),
    15_000,
    `transaction ${hash} to reach the node`,
  );
}

/** ABI for the test tokens, typed for viem (TestToken and TestUSDC share it). */
export const testTokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 amount)",
  "function setBlocked(address account, bool isBlocked)",
  "function transfer(address to, uint256 amount) returns (bool)",
  "function blocked(address) view returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

/**
 * What a reorg past their deployment leaves of contracts: no code and no nonce at each address,
 * as if the blocks that deployed them were gone.
 */
export async function undeploy(anvil: Pick<Anvil, "rpc">, addresses: Address[]): Promise<void> {
  for (const address of addresses) {
    await anvil.rpc("anvil_setCode", [address, "0x"]);
    await anvil.rpc("anvil_setNonce", [address, "0x0"]);
  }
}
