import type { Hex, Transport } from "viem";
import { type Chain, createPublicClient, createWalletClient, defineChain, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { assertOutsideTransaction } from "../db/transaction-scope.ts";
import { CHAINS } from "../lib/chains.ts";
import type { SettlementChain } from "./config.ts";

/** viem clients for one chain; loops do their own retrying, so the transport does not. */
export function createChainClients(
  config: Pick<SettlementChain, "name" | "chainId" | "rpcUrl" | "pollIntervalMs">,
  relayerKey: Hex,
) {
  const known = CHAINS.get(config.name);
  const chain: Chain = known
    ? { ...known.viem, id: config.chainId }
    : defineChain({
        id: config.chainId,
        name: `chain ${config.chainId}`,
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [config.rpcUrl] } },
      });
  const transport = outsideTransactions(http(config.rpcUrl, { timeout: 15_000, retryCount: 0 }));
  const account = privateKeyToAccount(relayerKey);
  return {
    chain,
    account,
    publicClient: createPublicClient({ chain, transport, pollingInterval: Math.min(config.pollIntervalMs, 4_000) }),
    walletClient: createWalletClient({ chain, transport, account }),
  };
}

export type ChainClients = ReturnType<typeof createChainClients>;

/**
 * `transport`, refusing a call made inside a database transaction: a node that answers slowly
 * would hold the transaction, its locks and SQLite's write turn, for as long as it takes.
 */
export function outsideTransactions(transport: Transport): Transport {
  return (params) => {
    const inner = transport(params);
    const request: typeof inner.request = (args, options) => {
      assertOutsideTransaction("an RPC call");
      return inner.request(args, options);
    };
    return { ...inner, request };
  };
}
