/**
 * Any chain in, for the tests: pay a version 2 deposit address with a plain transfer on the
 * local source chain, mine both chains along, and read the bridges table.
 *
 *   const x = await startCrossChainStack();
 *   const payment = await x.stack.createPayment({ amount: "25.00" });
 *   await payOnSource(x, payment.deposit_address, 25_000_000n);
 *   await untilStatus(x, payment.id, "confirmed");
 */
import { type Address, erc20Abi, getAddress, type Hex } from "viem";
import { factoryOf, type TermsRow } from "../../src/chain/deposit-terms.ts";
import { depositFactoryV2Abi } from "../../src/chain/deposit-v2.ts";
import { type CrossChainStack, LOCAL_SOURCE } from "./crosschain.ts";
import { waitFor } from "./wait.ts";

export type BridgeState = "credited" | "burned" | "attested" | "minted" | "settled";

/** A row of bridges as the sqlite file holds it. */
export interface BridgeDbRow {
  id: string;
  payment_id: string;
  chain_id: number;
  state: BridgeState;
  amount: number | null;
  fee: number | null;
  nonce: number | null;
  tx_hash: string | null;
  tx_hashes: string | null;
  burn_tx_hash: string | null;
  burn_id: string | null;
  mint_tx_hash: string | null;
  error: string | null;
  attempts: number;
}

export function bridgesOf(x: CrossChainStack, paymentId: string): BridgeDbRow[] {
  return x.stack.sql<BridgeDbRow>("SELECT * FROM bridges WHERE payment_id = ? ORDER BY created_at, id", paymentId);
}

/**
 * Polls `fn`, mining a block on both chains between looks: confirmations on either chain need
 * blocks on top, and automining anvils make none by themselves.
 */
export function mineBothUntil<T>(x: CrossChainStack, fn: () => T | Promise<T>, what: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      let value: T | undefined;
      try {
        value = await fn();
        return value;
      } finally {
        if (value === undefined || value === false || value === null) {
          await x.mineSource(1);
          await x.chain.mine(1);
        }
      }
    },
    timeoutMs,
    what,
    100,
  );
}

/** Mines both chains until one of the payment's bridges is `ready`; returns it (the rows, when it times out). */
export function untilBridge(x: CrossChainStack, paymentId: string, ready: (row: BridgeDbRow) => boolean, what: string) {
  return mineBothUntil(
    x,
    () => {
      const rows = bridgesOf(x, paymentId);
      const found = rows.find(ready);
      if (!found) throw new Error(JSON.stringify(rows.map((r) => ({ state: r.state, error: r.error, tx: r.tx_hash }))));
      return found;
    },
    what,
  );
}

/** Mines both chains until the merchant API reports `status`; returns the payment. */
export function untilStatus(x: CrossChainStack, paymentId: string, status: string, timeoutMs = 30_000) {
  return mineBothUntil(
    x,
    async () => {
      const payment = await x.stack.getPayment(paymentId);
      if (payment.status === status) return payment;
      const bridges = bridgesOf(x, paymentId).map((b) => `${b.state} (${b.error})`);
      throw new Error(`${payment.status}, bridges: ${bridges.join(", ") || "none"}`);
    },
    `status ${status}`,
    timeoutMs,
  );
}

/**
 * A plain USDC transfer to `to` on the source chain (what a payer's wallet or exchange sends),
 * returned once the source chain's watcher credited it: source blocks are mined until then.
 */
export async function payOnSource(x: CrossChainStack, to: string, amount: bigint): Promise<Hex> {
  const txHash = await x.sourceTransfer(getAddress(to), amount);
  await waitFor(
    async () => {
      const [row] = x.stack.sql<{ credited_at: number | null }>(
        "SELECT credited_at FROM transfers WHERE tx_hash = ? AND chain_id = ?",
        txHash,
        LOCAL_SOURCE.chainId,
      );
      if (row?.credited_at != null) return true;
      await x.mineSource(1);
      return false;
    },
    20_000,
    `the source transfer ${txHash} to be credited`,
    60,
  );
  return txHash;
}

/**
 * Every `Bridged` event of the payment's deposit address on the source chain: one per burn. Its
 * factory's (the event is the same in every version that bridges).
 */
export function bridgedOnSource(x: CrossChainStack, paymentId: string) {
  const [row] = x.stack.sql<TermsRow>("SELECT factory_version FROM payments WHERE id = ?", paymentId);
  return x.source.publicClient.getContractEvents({
    address: factoryOf(row!),
    abi: depositFactoryV2Abi,
    eventName: "Bridged",
    args: { paymentId: paymentId as Hex },
    fromBlock: 0n,
    toBlock: "latest",
  });
}

/** USDC at `address` on the source chain. */
export function sourceBalance(x: CrossChainStack, address: string): Promise<bigint> {
  return x.source.publicClient.readContract({
    address: x.source.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address as Address],
  });
}
