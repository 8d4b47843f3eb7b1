import { type Address, type Hex, type PublicClient, getAddress, parseEventLogs } from "viem";
import { erc20Abi } from "viem";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { PaymentStore } from "../payments/store.ts";
import type { Ledger, ObservedTransfer } from "./ledger.ts";
import type { ChainStore } from "./store.ts";
import { backoffMs, errorMessage, isRangeError } from "./rpc-errors.ts";
import { sleep } from "../lib/sleep.ts";

export interface WatcherDeps {
  client: PublicClient;
  chain: ChainStore;
  payments: PaymentStore;
  ledger: Ledger;
  clock: Clock;
  log: Logger;
  chainId: number;
  usdc: Address;
  confirmations: number;
  pollIntervalMs: number;
  /** Called after blocks were scanned and something was credited, so settlement starts at once. */
  onCredited?: () => void;
}

const MAX_CHUNK = 5_000n;
const MAX_INITIAL_LOOKBACK = 50_000n;

export type Watcher = ReturnType<typeof createWatcher>;

/**
 * Follows the chain's USDC Transfer logs up to head - confirmations and credits those sent to
 * any deposit address ever issued. The cursor (block number and hash) moves in the same
 * transaction as the credits, so a crash repeats at most an uncommitted range, and crediting
 * is idempotent per (tx hash, log index) anyway.
 */
export function createWatcher(deps: WatcherDeps) {
  const { client, chain, payments, ledger, clock, log, chainId, usdc, confirmations } = deps;
  // Lower-case hex without 0x: the smallest string that identifies an address.
  const addresses = new Set<string>();
  let chunk = 1_000n;
  const state = { head: null as bigint | null, cursor: null as bigint | null, lastError: null as string | null, lastSuccessAt: null as number | null };

  const key = (address: string) => address.slice(2).toLowerCase();

  function loadAddresses(): void {
    for (const row of payments.allDepositAddresses()) addresses.add(key(row.deposit_address));
  }

  async function blockHash(blockNumber: bigint): Promise<Hex> {
    const block = await client.getBlock({ blockNumber });
    if (!block.hash) throw new Error(`block ${blockNumber} has no hash`);
    return block.hash;
  }

  /** Where to start the first time: far enough back to cover payments made before it. */
  async function initialCursor(safe: bigint): Promise<bigint> {
    const oldest = payments.oldestCreatedAt();
    if (oldest === null) return safe;
    const blocks = BigInt(Math.ceil((clock.now() - oldest) / deps.pollIntervalMs)) + 10n;
    const back = blocks > MAX_INITIAL_LOOKBACK ? MAX_INITIAL_LOOKBACK : blocks;
    return safe - back < 0n ? 0n : safe - back;
  }

  /** Scans one chunk; returns true when more blocks are ready right away. */
  async function tick(): Promise<boolean> {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    state.head = head;
    const safe = head - BigInt(confirmations);
    if (safe < 0n) return false;

    let stored = chain.cursor(chainId);
    if (!stored) {
      const start = await initialCursor(safe);
      chain.setCursor(chainId, Number(start), await blockHash(start), clock.now());
      stored = chain.cursor(chainId)!;
    }
    let cursor = BigInt(stored.block_number);
    if ((await blockHash(cursor)) !== stored.block_hash) {
      // The block we stopped at was reorged away: step back past the reorg and rescan.
      const depth = BigInt(Math.max(10, confirmations * 2 + 1));
      const back = cursor - depth < 0n ? 0n : cursor - depth;
      log.warn("chain reorg below the cursor; rescanning", { from_block: back, cursor });
      chain.setCursor(chainId, Number(back), await blockHash(back), clock.now());
      cursor = back;
    }
    state.cursor = cursor;
    if (cursor >= safe) return false;

    const from = cursor + 1n;
    const to = from + chunk - 1n < safe ? from + chunk - 1n : safe;
    let logs;
    try {
      logs = await client.getLogs({ address: usdc, event: TRANSFER_EVENT, fromBlock: from, toBlock: to, strict: true });
    } catch (error) {
      if (chunk > 1n && isRangeError(error)) {
        chunk = chunk / 2n;
        log.info("narrowing log range", { chunk });
        return true;
      }
      throw error;
    }
    const toHash = await blockHash(to);
    const found = matching(logs, from, to);
    let credited = 0;
    chain.transaction(() => {
      for (const transfer of found) if (ledger.record(transfer, true)) credited++;
      chain.dropStaleUncredited(Number(to));
      chain.setCursor(chainId, Number(to), toHash, clock.now());
    });
    state.cursor = to;
    if (chunk < MAX_CHUNK) chunk = chunk * 2n > MAX_CHUNK ? MAX_CHUNK : chunk * 2n;
    if (credited > 0) {
      log.info("credited transfers", { count: credited, from_block: from, to_block: to });
      deps.onCredited?.();
    }
    return to < safe;
  }

  /**
   * Keeps only well-formed USDC transfers to our addresses inside the asked range: whatever a
   * node answers (logs of other contracts, removed logs, out-of-range blocks) credits nothing.
   */
  function matching(logs: Awaited<ReturnType<typeof client.getLogs<typeof TRANSFER_EVENT>>>, from: bigint, to: bigint): ObservedTransfer[] {
    const out: ObservedTransfer[] = [];
    for (const entry of logs) {
      const recipient = entry.args.to;
      if (!recipient || !addresses.has(key(recipient))) continue;
      if (entry.removed || entry.address.toLowerCase() !== usdc.toLowerCase()) continue;
      if (entry.blockNumber === null || entry.blockNumber < from || entry.blockNumber > to) continue;
      if (!entry.transactionHash || entry.logIndex === null || !entry.blockHash) continue;
      out.push(toObserved(entry));
    }
    return out;
  }

  return {
    loadAddresses,
    /** Starts watching a new deposit address at once (payment creation calls this). */
    watch: (address: string) => addresses.add(key(address)),
    isWatched: (address: string) => addresses.has(key(address)),
    get watchedCount() {
      return addresses.size;
    },
    tick,
    status: () => ({ ...state }),

    /** Polls until `signal` aborts; catches up without pausing, backs off on RPC failure. */
    async run(signal: AbortSignal): Promise<void> {
      let failures = 0;
      while (!signal.aborted) {
        let more = false;
        try {
          more = await tick();
          failures = 0;
          state.lastError = null;
          state.lastSuccessAt = clock.now();
        } catch (error) {
          failures++;
          state.lastError = errorMessage(error);
          log.warn("chain watcher: RPC failed; retrying", { error: state.lastError, attempt: failures });
        }
        if (!more) await sleep(failures ? backoffMs(failures, deps.pollIntervalMs, 30_000) : deps.pollIntervalMs, signal);
      }
    },

    /**
     * A payer's hint: reads the transaction's receipt and records its USDC transfers to this
     * deposit address, crediting them once they have the configured confirmations.
     */
    async syncTransaction(depositAddress: string, txHash: Hex): Promise<"recorded" | "pending" | "not_found" | "reverted" | "no_transfer"> {
      const receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => null);
      if (!receipt) {
        const tx = await client.getTransaction({ hash: txHash }).catch(() => null);
        return tx ? "pending" : "not_found";
      }
      if (receipt.status !== "success") return "reverted";
      const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs, strict: true }).filter(
        (entry) => entry.address.toLowerCase() === usdc.toLowerCase() && entry.args.to.toLowerCase() === depositAddress.toLowerCase(),
      );
      if (logs.length === 0) return "no_transfer";
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const confirmed = receipt.blockNumber <= head - BigInt(confirmations);
      let credited = false;
      chain.transaction(() => {
        for (const entry of logs) credited = ledger.record(toObserved(entry), confirmed) || credited;
      });
      if (credited) deps.onCredited?.();
      return "recorded";
    },
  };
}

const TRANSFER_EVENT = erc20Abi.find((item) => item.type === "event" && item.name === "Transfer")! as Extract<
  (typeof erc20Abi)[number],
  { type: "event"; name: "Transfer" }
>;

function toObserved(entry: {
  transactionHash: Hex | null;
  logIndex: number | null;
  blockNumber: bigint | null;
  blockHash: Hex | null;
  args: { from?: Address; to?: Address; value?: bigint };
}): ObservedTransfer {
  return {
    txHash: entry.transactionHash!,
    logIndex: entry.logIndex!,
    from: getAddress(entry.args.from!),
    to: getAddress(entry.args.to!),
    amount: entry.args.value!,
    blockNumber: Number(entry.blockNumber),
    blockHash: entry.blockHash!,
  };
}
