import { type Address, createPublicClient, createWalletClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { artifacts } from "../chain/contracts.ts";
import { settingUp, stopAll } from "../lib/teardown.ts";
import { type Anvil, startAnvil } from "./anvil.ts";
import { type AttestationService, startAttestationService } from "./attestation-service.ts";
import { CCTP_DEV_ATTESTER_KEY, cctpAddresses, deployCctp } from "./cctp-rig.ts";

/** The local source chain pretends to be Arbitrum's domain; the settlement chain, Base's. */
export const LOCAL_SOURCE = { name: "local-source", chainId: 31338, domain: 3 } as const;
export const LOCAL_DESTINATION_DOMAIN = 6;

export interface LocalCrossChain {
  source: Anvil;
  sourceUsdc: Address;
  attestation: AttestationService;
  /** What the server needs to accept burns from the local source chain. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface LocalCrossChainOptions {
  destination: { rpcUrl: string; usdc: Address };
  deployerKey: Hex;
  payer: Address;
  attestationDelayMs?: number;
  port?: number;
  /** The source anvil's epoch (see startAnvil): how far its finalized block trails the head. */
  slotsInAnEpoch?: number;
}

/**
 * A second local chain with test USDC and the CCTP rig on both chains, plus a local
 * attestation service: cross-chain funding end to end, offline. `deployerKey` must be the key
 * that deployed the settlement chain's test USDC (it deploys the source one the same way).
 */
export function startLocalCrossChain(args: LocalCrossChainOptions): Promise<LocalCrossChain> {
  return settingUp(async (undo) => {
    const source = await startAnvil({
      chainId: LOCAL_SOURCE.chainId,
      port: args.port,
      slotsInAnEpoch: args.slotsInAnEpoch,
    });
    undo(() => source.stop());
    return deployOnto(source, args);
  });
}

/** Test USDC and the rig on both chains, then the attestation service: the part that can fail. */
async function deployOnto(source: Anvil, args: LocalCrossChainOptions): Promise<LocalCrossChain> {
  const clientsFor = (rpcUrl: string, chainId: number) => {
    const chain = { ...foundry, id: chainId };
    return {
      publicClient: createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 100 }),
      walletClient: createWalletClient({
        chain,
        transport: http(rpcUrl),
        account: privateKeyToAccount(args.deployerKey),
      }),
    };
  };
  const src = clientsFor(source.rpcUrl, LOCAL_SOURCE.chainId);
  const dst = clientsFor(
    args.destination.rpcUrl,
    await createPublicClient({ transport: http(args.destination.rpcUrl) }).getChainId(),
  );

  const usdcHash = await src.walletClient.deployContract({
    abi: artifacts.TestUSDC.abi,
    bytecode: artifacts.TestUSDC.bytecode,
  });
  const sourceUsdc = (await src.publicClient.waitForTransactionReceipt({ hash: usdcHash })).contractAddress!;
  await src.publicClient.waitForTransactionReceipt({
    hash: await src.walletClient.writeContract({
      address: sourceUsdc,
      abi: artifacts.TestUSDC.abi,
      functionName: "mint",
      args: [args.payer, 1_000_000_000_000n],
    }),
  });

  const attester = privateKeyToAccount(CCTP_DEV_ATTESTER_KEY).address;
  await deployCctp({
    ...dst,
    domain: LOCAL_DESTINATION_DOMAIN,
    usdc: args.destination.usdc,
    remoteUsdc: { [LOCAL_SOURCE.domain]: sourceUsdc },
    attester,
  });
  await deployCctp({
    ...src,
    domain: LOCAL_SOURCE.domain,
    usdc: sourceUsdc,
    remoteUsdc: { [LOCAL_DESTINATION_DOMAIN]: args.destination.usdc },
    attester,
  });

  const attestation = startAttestationService({
    sources: { [LOCAL_SOURCE.domain]: { rpcUrl: source.rpcUrl, transmitter: cctpAddresses.messageTransmitter } },
    destinations: { [LOCAL_DESTINATION_DOMAIN]: { rpcUrl: args.destination.rpcUrl } },
    attesterKey: CCTP_DEV_ATTESTER_KEY,
    delayMs: args.attestationDelayMs ?? 2_000,
  });

  return {
    source,
    sourceUsdc,
    attestation,
    env: {
      STABLEGATE_CCTP_CUSTOM_SOURCES: JSON.stringify([
        {
          name: LOCAL_SOURCE.name,
          chain_id: LOCAL_SOURCE.chainId,
          domain: LOCAL_SOURCE.domain,
          usdc: sourceUsdc,
          rpc_url: source.rpcUrl,
        },
      ]),
      STABLEGATE_CCTP_API_URL: attestation.url,
      STABLEGATE_CCTP_DOMAIN: String(LOCAL_DESTINATION_DOMAIN),
      STABLEGATE_CCTP_TOKEN_MESSENGER: cctpAddresses.tokenMessenger,
      STABLEGATE_CCTP_MESSAGE_TRANSMITTER: cctpAddresses.messageTransmitter,
    },
    stop: () =>
      stopAll(
        () => attestation.stop(),
        () => source.stop(),
      ),
  };
}
