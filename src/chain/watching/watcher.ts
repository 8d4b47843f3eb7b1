import { type Address, erc20Abi, type Hex, type PublicClient, parseEventLogs, toHex } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { sleep } from "../../lib/sleep.ts";
import type { Speed } from "../../lib/speed.ts";
import type { PaymentStore } from "../../payments/store.ts";
import type { OwnMint, OwnMints } from "../bridging/mints.ts";
import { backoffMs, errorMessage, isRangeError, unlessNotFound } from "../rpc-errors.ts";
import type { ChainStore } from "../store.ts";
import { counts, type Depth, type DepthReader } from "./depth.ts";
import type { Ledger, ObservedTransfer } from "./ledger.ts";
import { createRefundMatches, type RefundPayouts } from "./refund-matches.ts";
import { matchingTransfers, type RpcLog, TRANSFER_TOPIC, toObserved } from "./transfer-logs.ts";

export interface WatcherDeps {
  client: PublicClient;
  chain: ChainStore;
  payments: PaymentStore;
  ledger: Ledger;
  clock: Clock;
  log: Logger;
  /** The chain's name, for the log. */
  name: string;
  chainId: number;
  usdc: Address;
  /**
   * Runs a write that moves the cursor: in one transaction with the check that this replica
   * still holds the chain lease (src/leases/), so one that lost it moves nothing. A plain
   * transaction where nothing is leased (tests that drive one watcher).
   */
  fenced?: <T>(write: () => Promise<T>) => Promise<T>;
  /** The standard depth: a reorg rewinds the scan at least twice this far, so what counted early is looked at again. */
  confirmations: number;
  /** Reads the head and the final block (shared with the settler on the settlement chain). */
  depth: DepthReader;
  pollIntervalMs: number;
  /** Called after something was credited, so settlement starts at once. */
  onCredited?: () => void;
  /** Called when a round sees a new head: the settler follows its transactions at the chain's pace. */
  onNewHead?: () => void;
  /**
   * On the settlement chain: tells mints of deposit addresses' own burns (bridged funds, already
   * credited on their source chain) from payments, and records them instead of crediting them.
   */
  ownMints?: OwnMints;
  /**
   * On a source chain: whether its deposit factory is there. Until then nothing is scanned or
   * credited; the cursor is placed (or kept) where it would start anyway, so the blocks in
   * between are scanned once it is.
   */
  ready?: () => boolean;
  /** On the settlement chain, where refunds are paid: transfers to payable refunds' addresses pay them. */
  refunds?: RefundPayouts;
}

const MAX_CHUNK = 5_000n;
/** Logs per eth_getLogs call to aim for: well under providers' result caps. */
const TARGET_LOGS = 5_000;
const MAX_INITIAL_LOOKBACK = 50_000n;

export type Watcher = ReturnType<typeof createWatcher>;

/**
 * Follows one chain's USDC Transfer logs up to its head and records those sent to any deposit
 * address ever issued, crediting each when its payment's speed policy counts it
 * (docs/speed.md). One runs per enabled chain, each on its own loop, so a slow RPC delays only
 * its own chain. The cursor (block number and hash) moves in the same transaction as the
 * credits, so a crash repeats at most an uncommitted range, and crediting is idempotent per
 * (tx hash, log index) anyway.
 */
export function createWatcher(deps: WatcherDeps) {
  const { client, chain, payments, ledger, clock, log, chainId, usdc, confirmations } = deps;
  const matching = matchingTransfers({ payments, usdc, chainId });
  const fenced = deps.fenced ?? chain.transaction;
  let chunk = 1_000n;
  const refunds =
    deps.refunds && createRefundMatches({ refunds: deps.refunds, payments, chainId, usdc, blockHash, fenced });
  const state = {
    head: null as bigint | null,
    cursor: null as bigint | null,
    lastError: null as string | null,
    lastSuccessAt: null as number | null,
    /** Rounds `run` has completed, failed ones too. */
    rounds: 0,
  };

  async function blockHash(blockNumber: bigint): Promise<Hex> {
    const block = await client.getBlock({ blockNumber });
    if (!block.hash) throw new Error(`block ${blockNumber} has no hash`);
    return block.hash;
  }

  /** Where to start the first time: far enough back to cover payments made before it. */
  async function initialCursor(head: bigint): Promise<bigint> {
    const oldest = await payments.oldestCreatedAt();
    if (oldest === null) return head;
    const blocks = BigInt(Math.ceil((clock.now() - oldest) / deps.pollIntervalMs)) + 10n;
    const back = blocks > MAX_INITIAL_LOOKBACK ? MAX_INITIAL_LOOKBACK : blocks;
    return head - back < 0n ? 0n : head - back;
  }

  /**
   * One round: follows the head, rewinds past a reorg, scans one chunk up to the head, and credits
   * what the payments' speed policies now count. Returns true when more blocks are ready right away.
   */
  async function tick(): Promise<boolean> {
    const head = await deps.depth.head();
    refunds?.startRound();
    const moved = head !== state.head;
    let stored = await chain.cursor(chainId);
    if (!stored) {
      const start = await initialCursor(head);
      const hash = await blockHash(start);
      await fenced(() => chain.setCursor(chainId, Number(start), hash, clock.now()));
      stored = (await chain.cursor(chainId))!;
    }
    let cursor = BigInt(stored.block_number);
    // The head and the cursor it is read against are shown together (/readyz), never one alone.
    state.head = head;
    state.cursor = cursor;
    if (moved) deps.onNewHead?.();
    // Nothing new since the last round: the blocks, and so what counts, are as they were.
    if (!moved && cursor === head) return false;
    // Side by side, each a round trip a new block would otherwise wait for: the final block, the
    // cursor's hash, and the hash of the last block the next chunk would scan (taken before its logs).
    const planned = cursor < head ? rangeEnd(cursor + 1n, head) : null;
    const [depth, cursorHash, plannedHash] = await Promise.all([
      deps.depth.at(head),
      cursor > head ? null : blockHash(cursor),
      planned === null ? null : blockHash(planned).catch(() => null),
    ]);
    if (cursorHash !== stored.block_hash) {
      // The block we stopped at was reorged away: step back past the reorg (at least the standard
      // depth, so every transfer and settlement counted early is looked at again) and rescan.
      const rewind = BigInt(Math.max(10, confirmations * 2 + 1));
      const top = cursor < head ? cursor : head;
      const back = top - rewind < 0n ? 0n : top - rewind;
      log.warn("chain reorg below the cursor; rescanning", { chain: deps.name, from_block: back, cursor });
      const hash = await blockHash(back);
      await fenced(() => chain.setCursor(chainId, Number(back), hash, clock.now()));
      cursor = back;
    }
    state.cursor = cursor;
    if (deps.ready && !deps.ready()) return false;
    const hashOfPlanned = planned !== null && rangeEnd(cursor + 1n, head) === planned ? plannedHash : null;
    const more = cursor < head ? await scan(cursor + 1n, depth, hashOfPlanned) : false;
    await creditWaiting(depth);
    return more;
  }

  /** The last block of the chunk that starts at `from`. */
  function rangeEnd(from: bigint, head: bigint): bigint {
    return from + chunk - 1n < head ? from + chunk - 1n : head;
  }

  /**
   * Scans one chunk from `from` towards the head: records every transfer to our addresses (each
   * credited once its payment's policy counts it), and takes off the record what was recorded in
   * the chunk's blocks but is no longer there (a reorg took it). Returns true when more is ready.
   */
  async function scan(from: bigint, depth: Depth, readBefore: Hex | null): Promise<boolean> {
    const to = rangeEnd(from, depth.head);
    const span = to - from + 1n;
    // Read before the logs (here, or by the caller just before) and again after them: see below.
    const toHash = readBefore ?? (await blockHash(to));
    let logs: RpcLog[];
    try {
      // Raw logs: decoding (and checksumming) every USDC transfer on a busy chain costs far more
      // than picking ours by their `to` topic first and decoding only those.
      const answer = await client.request({
        method: "eth_getLogs",
        params: [{ address: usdc, topics: [TRANSFER_TOPIC], fromBlock: toHex(from), toBlock: toHex(to) }],
      });
      if (!Array.isArray(answer)) throw new Error("eth_getLogs did not answer with a list");
      logs = answer as RpcLog[];
    } catch (error) {
      if (span > 1n && isRangeError(error)) {
        chunk = span / 2n;
        log.info("narrowing log range", { chain: deps.name, chunk });
        return true;
      }
      throw error;
    }
    // The logs belong to the chain that ends in `toHash` only if it still does: near the head a
    // block can be replaced between two calls. Then read the range again.
    if ((await blockHash(to)) !== toHash) return true;
    const found = await matching(logs, from, to);
    const mints = await ownMintsIn(found);
    const key = (txHash: string, logIndex: number) => `${txHash.toLowerCase()}:${logIndex}`;
    const there = new Set(found.map((t) => key(t.txHash, t.logIndex)));
    let credited = 0;
    let minted = 0;
    let refundTransfers = { seen: 0, forgotten: 0 };
    await fenced(async () => {
      for (const recorded of await chain.transfersBetween(chainId, Number(from), Number(to)))
        if (!there.has(key(recorded.tx_hash, recorded.log_index))) await ledger.reverse(recorded);
      for (const transfer of found) {
        const mint = mints.get(transfer);
        if (mint) minted += (await deps.ownMints!.record(transfer, mint)) ? 1 : 0;
        else if (await ledger.record(transfer, (speed) => counts(speed, BigInt(transfer.blockNumber), depth)))
          credited++;
      }
      if (refunds) refundTransfers = await refunds.scanned(logs, from, to);
      await chain.setCursor(chainId, Number(to), toHash, clock.now());
    });
    state.cursor = to;
    refundsLog(refundTransfers.seen, refundTransfers.forgotten);
    chunk = nextChunk(span, logs.length);
    if (credited > 0)
      log.info("credited transfers", { chain: deps.name, count: credited, from_block: from, to_block: to });
    // Bridged funds landed: what they complete may be settled now, as for a credit.
    if (credited + minted > 0) deps.onCredited?.();
    return to < depth.head;
  }

  /**
   * Credits the recorded transfers that their payments' policies count now (deeper blocks, a
   * newer final block). One found in a block the chain no longer has was reorged away from under
   * a payer's /sync: it is taken off the record, as a rescan would.
   */
  async function creditWaiting(depth: Depth): Promise<void> {
    const upTo = state.cursor ?? -1n;
    if (refunds) {
      const { succeeded, forgotten } = await refunds.countSeen(depth, upTo);
      if (succeeded > 0) log.info("refunds succeeded", { chain: deps.name, count: succeeded });
      refundsLog(0, forgotten);
    }
    const due = (await chain.waitingOn(chainId, Number(upTo))).filter((t) =>
      counts(t.speed, BigInt(t.block_number), depth),
    );
    if (due.length === 0) return;
    const hashes = new Map<number, Hex>();
    for (const t of due)
      if (!hashes.has(t.block_number)) hashes.set(t.block_number, await blockHash(BigInt(t.block_number)));
    let credited = 0;
    await fenced(async () => {
      for (const t of due) {
        if (hashes.get(t.block_number) !== t.block_hash) await ledger.reverse(t);
        else if (await ledger.creditWaiting(t)) credited++;
      }
    });
    if (credited > 0) {
      log.info("credited transfers", { chain: deps.name, count: credited });
      deps.onCredited?.();
    }
  }

  function refundsLog(seen: number, forgotten: number): void {
    if (seen > 0) log.info("refund transfers seen", { chain: deps.name, count: seen });
    if (forgotten > 0)
      log.warn("a refund's transfer left the chain in a reorg; the refund waits for one again", {
        chain: deps.name,
        count: forgotten,
      });
  }

  /** The transfers among `found` that mint a deposit address's own burn; a failed look fails the range. */
  async function ownMintsIn(found: ObservedTransfer[]): Promise<Map<ObservedTransfer, OwnMint>> {
    const mints = new Map<ObservedTransfer, OwnMint>();
    if (!deps.ownMints) return mints;
    for (const transfer of found) {
      const mint = await deps.ownMints.recognise(transfer);
      if (mint) mints.set(transfer, mint);
    }
    return mints;
  }

  /** Next range: about TARGET_LOGS logs at the density just seen, at most doubling. */
  function nextChunk(span: bigint, logCount: number): bigint {
    const perBlock = logCount / Number(span);
    const fit = perBlock > 0 ? BigInt(Math.max(1, Math.floor(TARGET_LOGS / perBlock))) : MAX_CHUNK;
    const doubled = span * 2n;
    return [fit, doubled, MAX_CHUNK].reduce((a, b) => (a < b ? a : b));
  }

  return {
    chainId,
    confirmations,
    tick,
    status: () => ({ ...state }),

    /** Polls until `signal` aborts; catches up without pausing, backs off on RPC failure. */
    async run(signal: AbortSignal): Promise<void> {
      let failures = 0;
      while (!signal.aborted) {
        const started = clock.now();
        let more = false;
        try {
          more = await tick();
          failures = 0;
          state.lastError = null;
          state.lastSuccessAt = clock.now();
        } catch (error) {
          failures++;
          state.lastError = errorMessage(error);
          log.warn("chain watcher: RPC failed; retrying", {
            chain: deps.name,
            error: state.lastError,
            attempt: failures,
          });
        }
        state.rounds++;
        // Fixed rate: a block that lands just after a poll waits one interval, not interval + tick.
        const pause = failures
          ? backoffMs(failures, deps.pollIntervalMs, 30_000)
          : deps.pollIntervalMs - (clock.now() - started);
        if (!more) await sleep(Math.max(0, pause), signal);
      }
    },

    /**
     * On a replica without the chain lease: follows the head and the holder's cursor, so its
     * /readyz and payers' pages show where the chain is, without scanning anything. Rounds for
     * which `skip` says yes (this replica holds the lease, and `run` does all this) are passed.
     */
    async follow(signal: AbortSignal, skip: () => boolean): Promise<void> {
      while (!signal.aborted) {
        if (!skip()) {
          try {
            state.head = await client.getBlockNumber({ cacheTime: 0 });
            const stored = await chain.cursor(chainId);
            state.cursor = stored ? BigInt(stored.block_number) : null;
            state.lastError = null;
            state.lastSuccessAt = clock.now();
          } catch (error) {
            state.lastError = errorMessage(error);
          }
        }
        await sleep(deps.pollIntervalMs, signal);
      }
    },

    /**
     * A payer's hint: reads the transaction's receipt and records its USDC transfers to this
     * deposit address, credited at once where the payment's speed policy counts them, else later.
     */
    async syncTransaction(
      depositAddress: string,
      txHash: Hex,
    ): Promise<"recorded" | "pending" | "not_found" | "reverted" | "no_transfer" | "too_large"> {
      const receipt = await unlessNotFound(client.getTransactionReceipt({ hash: txHash }));
      if (!receipt) {
        const tx = await unlessNotFound(client.getTransaction({ hash: txHash }));
        return tx ? "pending" : "not_found";
      }
      if (receipt.status !== "success") return "reverted";
      const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs, strict: true }).filter(
        (entry) =>
          entry.address.toLowerCase() === usdc.toLowerCase() &&
          entry.args.to.toLowerCase() === depositAddress.toLowerCase(),
      );
      if (logs.length === 0) return "no_transfer";
      // A mint of the address's own burn is bridged funds, not a payment: the watcher records it.
      const observed = logs.map((entry) => toObserved(entry, chainId));
      const mints = await ownMintsIn(observed);
      const paid = observed.filter((transfer) => !mints.has(transfer));
      if (paid.length === 0) return "recorded";
      const depth = await deps.depth.read();
      const countsNow = (speed: Speed) => counts(speed, receipt.blockNumber, depth);
      let credited = false;
      let refused = 0;
      await chain.transaction(async () => {
        for (const transfer of paid) {
          if (!(await ledger.fits(transfer))) refused++;
          else credited = (await ledger.record(transfer, countsNow)) || credited;
        }
      });
      if (credited) deps.onCredited?.();
      return refused === paid.length ? "too_large" : "recorded";
    },
  };
}
