/**
 * Tokens sent to a deposit address by mistake, for the recovery tests: a fresh ERC-20
 * (contracts/test/TestToken.sol) on the cross-chain stack's source chain, minted to an address.
 */
import { type Address, createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { artifacts } from "../../src/chain/contracts.ts";
import { factoryV2Address } from "../../src/chain/deposit-v2.ts";
import { ANVIL_KEY_3 } from "./anvil.ts";
import { deployArtifact, mined, type TestWallet, testTokenAbi } from "./chain.ts";
import { type CrossChainStack, LOCAL_SOURCE } from "./crosschain.ts";
import { waitFor } from "./wait.ts";

/** A wallet on the source chain (anvil key 3, funded there as on every anvil), apart from the payer's. */
export function sourceWallet(x: CrossChainStack): TestWallet {
  return createWalletClient({
    chain: { ...foundry, id: LOCAL_SOURCE.chainId },
    transport: http(x.local.source.rpcUrl),
    account: privateKeyToAccount(ANVIL_KEY_3),
  }) as TestWallet;
}

/** A new ERC-20 on the source chain with `units` minted to `to`; returns its address. */
export async function strayTokenOnSource(x: CrossChainStack, to: Address, units: bigint, decimals = 18) {
  const client = x.source.publicClient;
  const wallet = sourceWallet(x);
  const token = await deployArtifact(client, wallet, artifacts.TestToken, ["Stray", "STRAY", decimals, false]);
  await mined(
    client,
    wallet.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [to, units] }),
  );
  return token;
}

/** Waits until the server has deployed the version 2 factory on the source chain (its recoverer does at start). */
export function sourceFactoryDeployed(x: CrossChainStack): Promise<true> {
  return waitFor(
    async () => (await x.source.publicClient.getCode({ address: factoryV2Address })) !== undefined,
    30_000,
    "the version 2 factory on the source chain",
  );
}
