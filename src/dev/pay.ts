import { type Address, createPublicClient, createWalletClient, erc20Abi, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { parseAmount } from "../lib/money.ts";

export interface DevChain {
  rpcUrl: string;
  usdc: Address;
  payerKey: Hex;
  /** Where the server listens (for the public endpoints). */
  serverUrl: string;
  /** For a source chain: its chain id and the name /sync knows it by (default: the settlement chain). */
  chainId?: number;
  chainName?: string;
}

/**
 * Pays a payment from the dev payer wallet: a plain USDC transfer of `amount` (default: what
 * is still due) to its deposit address on `dev`'s chain, then /sync with the hash, as a
 * checkout page would.
 */
export async function payFromDevWallet(
  dev: DevChain,
  paymentId: string,
  amount?: string,
): Promise<{ txHash: Hex; units: bigint }> {
  const res = await fetch(`${dev.serverUrl}/api/public/payments/${paymentId}`);
  if (!res.ok) throw new Error(`payment ${paymentId}: ${((await res.json()) as { error: string }).error}`);
  const payment = (await res.json()) as { deposit_address: Address; amount_due: string };
  const units = parseUnits(amount ?? payment.amount_due);
  if (units <= 0n) throw new Error(`payment ${paymentId} has nothing left to pay; give an amount to send more`);

  const chain = { ...foundry, id: dev.chainId ?? foundry.id };
  const transport = http(dev.rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(dev.payerKey) });
  const txHash = await wallet.writeContract({
    address: dev.usdc,
    abi: erc20Abi,
    functionName: "transfer",
    args: [payment.deposit_address, units],
  });
  await publicClient.waitForTransactionReceipt({ hash: txHash });
  await fetch(`${dev.serverUrl}/api/public/payments/${paymentId}/sync`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(dev.chainName ? { tx_hash: txHash, chain: dev.chainName } : { tx_hash: txHash }),
  });
  return { txHash, units };
}

/** "25", "25.5", "25.000001": up to 6 decimals, for paying exact or odd amounts. */
function parseUnits(text: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) {
    const twoDecimals = parseAmount(text);
    if (twoDecimals !== null) return twoDecimals;
    throw new Error(`amount must be a USDC amount such as 25.00 or 0.000001, got "${text}"`);
  }
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? "").padEnd(6, "0"));
}

/**
 * Pays a payment from another chain through CCTP, as the checkout's cross-chain panel does:
 * take the server's quote, send its calls (approve, depositForBurn) from the payer on the
 * source chain, then record the burn so the server redeems it.
 */
export async function payCrossChainFromDevWallet(
  dev: { serverUrl: string; payerKey: Hex; sourceRpcUrl: string; sourceChainId: number; sourceName: string },
  paymentId: string,
  speed: "fast" | "standard" = "fast",
): Promise<{ burnTxHash: Hex; record: unknown }> {
  const base = `${dev.serverUrl}/api/public/payments/${paymentId}/cross-chain`;
  const quoteRes = await fetch(`${base}?chain=${encodeURIComponent(dev.sourceName)}`);
  const quote = (await quoteRes.json()) as { error?: string; needed?: boolean } & Record<
    string,
    { calls: Array<{ to: Address; data: Hex }> }
  >;
  if (!quoteRes.ok) throw new Error(`quote: ${quote.error}`);
  if (!quote.needed) throw new Error(`payment ${paymentId} needs nothing more`);
  const chain = { ...foundry, id: dev.sourceChainId };
  const transport = http(dev.sourceRpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(dev.payerKey) });
  let burnTxHash: Hex = "0x";
  for (const call of quote[speed]!.calls) {
    burnTxHash = await wallet.sendTransaction({ to: call.to, data: call.data });
    const receipt = await publicClient.waitForTransactionReceipt({ hash: burnTxHash });
    if (receipt.status !== "success") throw new Error(`call to ${call.to} reverted (${burnTxHash})`);
  }
  const recorded = await fetch(base, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ chain: dev.sourceName, tx_hash: burnTxHash }),
  });
  return { burnTxHash, record: await recorded.json() };
}
