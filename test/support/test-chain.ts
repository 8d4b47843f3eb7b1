/**
 * The chain for integration tests: a real anvil with TestUSDC, the deposit factory and a funded
 * payer. One per test file, shared by the servers on it (./stack.ts).
 *
 *   const chain = await startChain();
 *   await chain.pay(depositAddress, usdc("25.00"));
 *   await chain.stop();
 */
import { type Address, getAddress, type Hex, type PublicClient, toHex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { ensureFactory } from "../../src/chain/contracts.ts";
import { ensureFactoryV2 } from "../../src/chain/deposit-v2.ts";
import { ensureFactoryV3 } from "../../src/chain/deposit-v3.ts";
import { ANVIL_KEY_0, ANVIL_KEY_1, type Anvil, startAnvil } from "./anvil.ts";
import { deployTestUsdc, mined, publicClientFor, type TestWallet, testTokenAbi, walletClientFor } from "./chain.ts";

/** The payer starts with 1,000,000 test USDC. */
export const PAYER_FUNDS = 1_000_000_000_000n;

/** Micro-USDC from a decimal string: usdc("25.000001") = 25000001n. */
export function usdc(text: string): bigint {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
}

export const randomAddress = (): Address => getAddress(toHex(crypto.getRandomValues(new Uint8Array(20))));

export interface TestChain {
  anvil: Anvil;
  rpcUrl: string;
  publicClient: PublicClient;
  deployer: TestWallet;
  payer: TestWallet;
  usdc: Address;
  /** anvil_mine: `n` empty blocks (automine only mines when a transaction arrives). */
  mine(n?: number): Promise<void>;
  head(): Promise<bigint>;
  usdcBalance(address: Address): Promise<bigint>;
  /** The payer's USDC transfer; waits for its receipt unless `wait` is false (automine off). */
  pay(to: Address, units: bigint, opts?: { wait?: boolean }): Promise<Hex>;
  /** A fresh private key holding `eth` (default 10) ETH. */
  fundedKey(eth?: bigint): Promise<Hex>;
  setBalance(address: Address, wei: bigint): Promise<void>;
  stop(): Promise<void>;
}

/**
 * anvil, TestUSDC, every deposit factory (unless `factory` is false: a fresh chain, where the server
 * deploys them) and a funded payer (anvil key 1). Blocks come with each transaction (automine)
 * unless `automine` is false or a `blockTime` (seconds) is given.
 */
export async function startChain(
  opts: { blockTime?: number; automine?: boolean; factory?: boolean; slotsInAnEpoch?: number } = {},
): Promise<TestChain> {
  const anvil = await startAnvil({ blockTime: opts.blockTime, slotsInAnEpoch: opts.slotsInAnEpoch });
  try {
    const publicClient = publicClientFor(anvil.rpcUrl);
    const deployer = walletClientFor(anvil.rpcUrl, ANVIL_KEY_0);
    const payer = walletClientFor(anvil.rpcUrl, ANVIL_KEY_1);
    const token = await deployTestUsdc(publicClient, deployer);
    if (opts.factory !== false) {
      await ensureFactory({ publicClient, walletClient: deployer });
      await ensureFactoryV2({ publicClient, walletClient: deployer });
      await ensureFactoryV3({ publicClient, walletClient: deployer });
    }
    await mined(
      publicClient,
      deployer.writeContract({
        address: token,
        abi: testTokenAbi,
        functionName: "mint",
        args: [payer.account.address, PAYER_FUNDS],
      }),
    );
    const setBalance = async (address: Address, wei: bigint) =>
      void (await anvil.rpc("anvil_setBalance", [address, toHex(wei)]));
    if (opts.automine === false) await anvil.rpc("evm_setAutomine", [false]);
    return {
      anvil,
      rpcUrl: anvil.rpcUrl,
      publicClient,
      deployer,
      payer,
      usdc: token,
      mine: async (n = 1) => void (await anvil.rpc("anvil_mine", [toHex(n)])),
      head: () => publicClient.getBlockNumber({ cacheTime: 0 }),
      usdcBalance: (address) =>
        publicClient.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [address] }),
      async pay(to, units, { wait = true } = {}) {
        const hash = await payer.writeContract({
          address: token,
          abi: testTokenAbi,
          functionName: "transfer",
          args: [to, units],
        });
        if (wait) await mined(publicClient, Promise.resolve(hash));
        return hash;
      },
      async fundedKey(eth = 10n) {
        const key = generatePrivateKey();
        await setBalance(walletClientFor(anvil.rpcUrl, key).account.address, eth * 10n ** 18n);
        return key;
      },
      setBalance,
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
