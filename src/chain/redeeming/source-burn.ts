import { type Address, createPublicClient, type Hex, http, type PublicClient, parseEventLogs } from "viem";
import { fitsInt64 } from "../../db/int64.ts";
import { tokenMessengerAbi } from "../cctp-abi.ts";
import { addressToBytes32 } from "../cctp-message.ts";
import { outsideTransactions } from "../client.ts";
import type { CctpSource, CrossChainConfig } from "../cross-chain-config.ts";
import { unlessNotFound } from "../rpc-errors.ts";

/**
 * What a burn transaction says on its source chain about one deposit address: the amount it
 * burns for it, why it cannot fund it, or null while the transaction is not mined (or unknown).
 */
export type SourceBurn = { amount: bigint } | { failure: string } | null;

export type SourceBurns = ReturnType<typeof createSourceBurns>;

/** Reads burns on their source chains; one RPC client per source, made on first use. */
export function createSourceBurns(config: CrossChainConfig, opts: { timeoutMs?: number } = {}) {
  const clients = new Map<string, PublicClient>();

  function clientFor(source: CctpSource): PublicClient {
    let client = clients.get(source.name);
    if (!client) {
      client = createPublicClient({
        transport: outsideTransactions(http(source.rpcUrl, { timeout: opts.timeoutMs ?? 15_000, retryCount: 0 })),
      });
      clients.set(source.name, client);
    }
    return client;
  }

  return {
    /**
     * Whether `txHash` on `sourceName` is a USDC burn minting to `deposit` on our domain. The
     * mint recipient decides which payment a burn belongs to, whoever posted it. RPC failures
     * are thrown: an outage is not an answer.
     */
    async read(sourceName: string, txHash: Hex, deposit: Address): Promise<SourceBurn> {
      const source = config.sources.find((s) => s.name === sourceName);
      if (!source) return { failure: `source chain ${sourceName} is no longer configured` };
      const receipt = await unlessNotFound(clientFor(source).getTransactionReceipt({ hash: txHash }));
      if (!receipt) return null;
      if (receipt.status !== "success")
        return { failure: "the burn transaction reverted on the source chain; nothing was burned" };
      const events = parseEventLogs({ abi: tokenMessengerAbi, eventName: "DepositForBurn", logs: receipt.logs }).filter(
        (e) => e.address.toLowerCase() === config.tokenMessenger.toLowerCase(),
      );
      if (events.length === 0) return { failure: "the transaction is not a CCTP burn" };
      const ours = events.find((e) => e.args.mintRecipient.toLowerCase() === addressToBytes32(deposit));
      if (!ours) return { failure: "the burn mints to another address, not this payment's deposit address" };
      if (ours.args.destinationDomain !== config.domain)
        return { failure: `the burn is bound for another chain (CCTP domain ${ours.args.destinationDomain})` };
      if (ours.args.burnToken.toLowerCase() !== source.usdc.toLowerCase())
        return { failure: "the burn is not of USDC" };
      if (!fitsInt64(ours.args.amount))
        return { failure: `the burn's amount (${ours.args.amount} units) is more than this server can account for` };
      return { amount: ours.args.amount };
    },
  };
}
