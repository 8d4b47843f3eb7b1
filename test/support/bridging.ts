/**
 * Any chain in, for the tests: pay a version 2 deposit address with a plain transfer on the
 * local source chain, mine both chains along, and read the bridges table.
 *
 *   const x = await startCrossChainStack();
 *   const payment = await x.stack.createPayment({ amount: "25.00" });
 *   await payOnSource(x, payment, 25_000_000n);
 *   await untilStatus(x, payment.id, "confirmed");
 */
import { type Address, erc20Abi, getAddress, type Hex, parseEventLogs } from "viem";
import { createLedger } from "../../src/chain/ledger.ts";
import { createChainStore } from "../../src/chain/store.ts";
import { openDb } from "../../src/db/index.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { createEventStore } from "../../src/events/store.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { createLifecycle } from "../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../src/payments/store.ts";
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

/** Mines a block on the source chain. */
export const mineSource = (x: CrossChainStack) => x.local.source.rpc("evm_mine", []);

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
          await mineSource(x);
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
      return payment.status === status ? payment : undefined;
    },
    `status ${status}`,
    timeoutMs,
  );
}

/**
 * A plain USDC transfer to `to` on the source chain, credited to its payment as the source
 * chain's watcher does once it has that chain's confirmations.
 */
export async function payOnSource(x: CrossChainStack, to: string, amount: bigint): Promise<Hex> {
  const txHash = await x.sourceTransfer(getAddress(to), amount);
  await creditSourceTransfer(x, txHash);
  return txHash;
}

/** Credits the USDC transfers of a mined source-chain transaction through the server's own ledger. */
export async function creditSourceTransfer(x: CrossChainStack, txHash: Hex): Promise<void> {
  const receipt = await x.source.publicClient.getTransactionReceipt({ hash: txHash });
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).filter(
    (l) => l.address.toLowerCase() === x.source.usdc.toLowerCase(),
  );
  const db = openDb(x.stack.dataDir);
  try {
    const chain = createChainStore(db);
    const payments = createPaymentStore(db);
    const lifecycle = createLifecycle({
      payments,
      chain,
      events: createEventStore(db, randomIds),
      clock: systemClock,
      ids: randomIds,
      view: {
        baseUrl: x.stack.url,
        chainName: "anvil",
        sourceChainNames: new Map([[LOCAL_SOURCE.chainId, LOCAL_SOURCE.name]]),
      },
    });
    const ledger = createLedger({ chain, payments, lifecycle, clock: systemClock });
    inTransaction(db, () => {
      for (const t of transfers)
        ledger.record(
          {
            chainId: LOCAL_SOURCE.chainId,
            txHash,
            logIndex: t.logIndex,
            from: getAddress(t.args.from),
            to: getAddress(t.args.to),
            amount: t.args.value,
            blockNumber: Number(t.blockNumber),
            blockHash: t.blockHash,
          },
          true,
        );
    });
  } finally {
    db.close();
  }
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
