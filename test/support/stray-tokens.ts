/**
 * Tokens sent to a deposit address by mistake, for the recovery tests: a fresh ERC-20
 * (contracts/test/TestToken.sol) on the cross-chain stack's source chain, minted to an address;
 * and what a recovery must refuse there: a token whose transfer burns the relayer's gas
 * (contracts/test/GasBurnerToken.sol), and a balance no Transfer ever brought.
 */
import { type Address, createWalletClient, encodeAbiParameters, http, keccak256, pad, parseAbi, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import GasBurnerTokenJson from "../../contracts/artifacts/GasBurnerToken.json";
import { type Artifact, artifacts } from "../../src/chain/contracts.ts";
import { SOURCE_FACTORIES } from "../../src/chain/watching/source-readiness.ts";
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

/** The hostile token's ABI: an honest mint, and a transfer that writes `burnSlots` fresh slots. */
export const gasBurnerAbi = parseAbi([
  "function mint(address to, uint256 amount)",
  "function balanceOf(address) view returns (uint256)",
  "function burnSlots() view returns (uint256)",
]);

/**
 * A GasBurnerToken on the source chain with `units` minted to `to` (a real Transfer log to it),
 * whose transfer writes `slots` fresh storage slots: 400 take about 9.5 million gas.
 */
export async function gasBurnerOnSource(x: CrossChainStack, to: Address, units: bigint, slots = 400n) {
  const client = x.source.publicClient;
  const wallet = sourceWallet(x);
  const token = await deployArtifact(client, wallet, GasBurnerTokenJson as Artifact, [slots]);
  await mined(
    client,
    wallet.writeContract({ address: token, abi: gasBurnerAbi, functionName: "mint", args: [to, units] }),
  );
  return token;
}

/**
 * A new TestToken on the source chain whose balance of `owner` is `units`, written straight into
 * its storage: the token says `owner` holds it, but it never logged a Transfer there.
 */
export async function unsentTokenOnSource(x: CrossChainStack, owner: Address, units: bigint) {
  const token = await deployArtifact(x.source.publicClient, sourceWallet(x), artifacts.TestToken, [
    "Unsent",
    "UNSENT",
    18,
    false,
  ]);
  // TestToken's storage: name, symbol, totalSupply, then the balanceOf mapping at slot 3.
  const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner, 3n]));
  await x.local.source.rpc("anvil_setStorageAt", [token, slot, pad(toHex(units), { size: 32 })]);
  return token;
}

/** Waits until the server has deployed the deposit factories on the source chain (it does at start). */
export function sourceFactoryDeployed(x: CrossChainStack): Promise<true> {
  return waitFor(
    async () => {
      for (const { address } of SOURCE_FACTORIES)
        if ((await x.source.publicClient.getCode({ address })) === undefined) return false;
      return true;
    },
    30_000,
    "the deposit factories on the source chain",
  );
}
