/**
 * The deposit contracts' own tests (test/chain/deposit-factory-v*.test.ts) on two anvils with the
 * local CCTP rig (src/dev/crosschain-stack.ts): the settlement chain (31337, domain 6) and a
 * source chain (31338, domain 3), the test TokenMessengerV2 at the same address on both, and the
 * local attestation service. No server: the tests call the factories themselves.
 *
 *   const chains = await startContractChains();
 *   await chains.settlement.stranger.writeContract(...);
 *   await chains.stop();
 */
import { expect } from "bun:test";
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  toHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { CCTP_DEPLOYER_KEY, cctpAddresses, testTokenMessengerV2Abi } from "../../src/dev/cctp-rig.ts";
import { LOCAL_SOURCE, type LocalCrossChain, startLocalCrossChain } from "../../src/dev/crosschain-stack.ts";
import { settingUp, stopAll } from "../../src/lib/teardown.ts";
import { ANVIL_KEY_0, ANVIL_KEY_1, startAnvil } from "./anvil.ts";
import { deployTestUsdc, mined, publicClientFor, testTokenAbi, walletClientFor } from "./chain.ts";
import { waitFor } from "./wait.ts";

/** One chain as the tests use it: a public client, the deployer (key 0) and a stranger (key 1). */
function clientsOn(rpcUrl: string, chainId: number) {
  const chain = { ...foundry, id: chainId };
  const transport = http(rpcUrl);
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 20 }) as PublicClient,
    deployer: createWalletClient({ chain, transport, account: privateKeyToAccount(ANVIL_KEY_0) }),
    stranger: createWalletClient({ chain, transport, account: privateKeyToAccount(ANVIL_KEY_1) }),
  };
}
export type Side = ReturnType<typeof clientsOn> & { usdc: Address; rpcUrl: string };

export interface ContractChains {
  settlement: Side;
  source: Side;
  local: LocalCrossChain;
  stop(): Promise<void>;
}

/** Both anvils, each chain's TestUSDC, the CCTP rig and the attestation service; stopped again if setup fails. */
export function startContractChains(): Promise<ContractChains> {
  return settingUp(async (undo) => {
    const settlementAnvil = await startAnvil();
    undo(() => settlementAnvil.stop());
    const publicClient = publicClientFor(settlementAnvil.rpcUrl);
    const deployer = walletClientFor(settlementAnvil.rpcUrl, ANVIL_KEY_0);
    // As on real chains, the two USDCs get different addresses (the rig deploys the source one at
    // the deployer's nonce 0 there).
    await mined(publicClient, deployer.sendTransaction({ to: deployer.account.address, value: 0n }));
    const usdc = await deployTestUsdc(publicClient, deployer);
    const local = await startLocalCrossChain({
      destination: { rpcUrl: settlementAnvil.rpcUrl, usdc },
      deployerKey: ANVIL_KEY_0,
      payer: privateKeyToAccount(ANVIL_KEY_1).address,
      attestationDelayMs: 0,
    });
    undo(() => local.stop());
    return {
      settlement: { ...clientsOn(settlementAnvil.rpcUrl, foundry.id), usdc, rpcUrl: settlementAnvil.rpcUrl },
      source: {
        ...clientsOn(local.source.rpcUrl, LOCAL_SOURCE.chainId),
        usdc: getAddress(local.sourceUsdc),
        rpcUrl: local.source.rpcUrl,
      },
      local,
      stop: () =>
        stopAll(
          () => local.stop(),
          () => settlementAnvil.stop(),
        ),
    };
  });
}

export const randomHex = (bytes: number): Hex => toHex(crypto.getRandomValues(new Uint8Array(bytes)));
export const randomAddress = (): Address => getAddress(randomHex(20));

export const balanceOf = (side: Side, token: Address, account: Address) =>
  side.publicClient.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [account] });

/** Mints test tokens (TestUSDC, TestToken: anyone may). */
export const mint = (side: Side, token: Address, to: Address, amount: bigint) =>
  mined(
    side.publicClient,
    side.deployer.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [to, amount] }),
  );

type MessengerSetting = {
  functionName: "setMaxBurnAmountPerMessage" | "setMinFee" | "removeLocalMinter" | "addLocalMinter";
  args: readonly unknown[];
};

/** Runs `body` with the source chain's messenger set as Circle's owner may set it, then sets it back. */
export async function withSourceMessenger(
  chains: ContractChains,
  change: MessengerSetting,
  restore: MessengerSetting,
  body: () => Promise<void>,
) {
  const owner = createWalletClient({
    chain: { ...foundry, id: LOCAL_SOURCE.chainId },
    transport: http(chains.source.rpcUrl),
    account: privateKeyToAccount(CCTP_DEPLOYER_KEY),
  });
  const messenger = { address: cctpAddresses.tokenMessenger, abi: testTokenMessengerV2Abi } as const;
  const write = (s: MessengerSetting) =>
    mined(chains.source.publicClient, owner.writeContract({ ...messenger, ...s } as never));
  await write(change);
  try {
    await body();
  } finally {
    await write(restore);
  }
}

/** Expects a contract call to revert; with `errorName`, with that custom error, else with `reason`. */
export async function expectRevert(call: Promise<unknown>, expected: { errorName: string } | { reason: string }) {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BaseError);
  const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
  expect(reverted).toBeInstanceOf(ContractFunctionRevertedError);
  const { data, reason } = reverted as ContractFunctionRevertedError;
  if ("errorName" in expected) expect(data?.errorName).toBe(expected.errorName);
  else expect(reason).toBe(expected.reason);
}

/** The attested message for a source transaction, once the local attestation service has signed it. */
export async function attestation(chains: ContractChains, txHash: Hex): Promise<{ message: Hex; attestation: Hex }> {
  const url = `${chains.local.attestation.url}/v2/messages/${LOCAL_SOURCE.domain}?transactionHash=${txHash}`;
  return waitFor(
    async () => {
      const res = await fetch(url);
      if (!res.ok) return undefined;
      const { messages } = (await res.json()) as { messages: { message: Hex; attestation: Hex; status: string }[] };
      return messages[0]?.status === "complete" ? messages[0] : undefined;
    },
    30_000,
    `the attestation of ${txHash}`,
  );
}
