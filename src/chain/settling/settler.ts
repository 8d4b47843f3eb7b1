import type { Account, Chain, Transport, WalletClient } from "viem";
import {
  type Address,
  erc20Abi,
  type Hex,
  keccak256,
  type PrivateKeyAccount,
  type PublicClient,
  parseEventLogs,
} from "viem";
import { type Clock, isoMillis } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { createWaker } from "../../lib/sleep.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentRow, PaymentStore } from "../../payments/store.ts";
import { depositFactoryAbi } from "../contracts.ts";
import { factoryOf, settleCall, settleData } from "../deposit-terms.ts";
import { depositFactoryV3Abi } from "../deposit-v3.ts";
import type { NonceManager } from "../nonces.ts";
import { type Fees, goingFees, outbid, sentWith } from "../relayer-fees.ts";
import { runRelayerLoop } from "../relayer-loop.ts";
import { errorMessage, firstReceipt, isAlreadySent, isRevert, nodeMessage, unlessNotFound } from "../rpc-errors.ts";
import type { ChainStore, SettlementRow } from "../store.ts";
import { LATE_SWEEPS_PER_DAY } from "../sweep-floor.ts";
import { counts, type Depth, type DepthReader } from "../watching/depth.ts";
import { createFactories } from "./factories.ts";
import { sweptAfter } from "./settlement-proof.ts";
import { createYoungSettlements } from "./young-settlements.ts";

export interface SettlerDeps {
  client: PublicClient;
  wallet: WalletClient<Transport, Chain | undefined, Account>;
  account: PrivateKeyAccount;
  nonces: NonceManager;
  chain: ChainStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  clock: Clock;
  log: Logger;
  chainId: number;
  /** The standard depth: how long a settlement counted early (`fast`) is watched for a reorg. */
  confirmations: number;
  /** Reads the settlement chain's head and final block (shared with its watcher). */
  depth: DepthReader;
  /** A transaction unmined for this long is replaced with higher fees. */
  stuckAfterMs: number;
  /**
   * Micro-USDC below which a confirmed payment's late funds are left at its address (chain table,
   * STABLEGATE_SWEEP_FLOOR).
   */
  sweepFloor: bigint;
  /** Deploy the version 2 factory too: payments issued before version 3 with source chains use it. */
  factoryV2?: boolean;
  /** Bridged funds of a payment (src/chain/bridging/): where its newest mint landed, and marking them swept. */
  bridged?: {
    newestMint(paymentId: string): Promise<{ block: number; log: number } | null>;
    /** Inside the transaction that records a sweep mined in `block`. */
    swept(paymentId: string, block: number): Promise<unknown>;
  };
}

/** What the payment still owes its merchant: received, less what was swept and what bridging it cost. */
export function owedOn(row: Pick<PaymentRow, "amount_received" | "amount_settled" | "bridge_fee">): bigint {
  return (row.amount_received ?? 0n) - row.amount_settled - row.bridge_fee;
}

/** Failed settlements: first retry within 60 s, then backing off to at most 6 hours. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000 * 4 ** Math.max(0, attempt - 1), 6 * 3_600_000);
}

export type Settler = ReturnType<typeof createSettler>;

/**
 * Sends settle() for every payment whose funds are owed to the merchant, and follows each
 * transaction to its confirmed outcome. The signed transaction is stored before it is
 * broadcast, so a crash at any point leads to a rebroadcast of the same nonce, never a second
 * settlement; on chain a repeated settle would only move a zero balance anyway.
 */
export function createSettler(deps: SettlerDeps) {
  const { client, wallet, account, chain, payments, lifecycle, clock, log, chainId, confirmations } = deps;
  const factories = createFactories(deps);
  const young = createYoungSettlements({
    ...deps,
    factoryOf: async (paymentId) => factoryOf((await payments.findById(paymentId))!),
  });
  const state = { lastError: null as string | null, balance: null as bigint | null, balanceAt: 0, rounds: 0 };
  const waker = createWaker();

  /** Signs settle(); for a replacement, outbids `previous` unless that would overpay wildly (null). */
  async function sign(row: PaymentRow, nonce: number, gas: bigint, previous?: Fees) {
    const fees = previous ? await outbid(client, previous) : await goingFees(client);
    if (!fees) return null;
    const serialized = await wallet.signTransaction({
      account,
      chain: undefined,
      chainId,
      type: "eip1559",
      to: factoryOf(row),
      data: settleData(row),
      gas,
      nonce,
      ...fees,
    });
    return { serialized, hash: keccak256(serialized), ...fees };
  }

  async function broadcast(serialized: Hex): Promise<void> {
    try {
      await client.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      // Already known or already mined is fine: the follow-up reads the receipt either way.
      // Anything else (no gas, fee too low) is what an operator needs to see.
      const text = nodeMessage(error);
      if (isAlreadySent(error)) log.debug("settlement rebroadcast: the node has it already", { error: text });
      else log.warn("settlement broadcast refused by the node", { error: text, relayer: account.address });
    }
  }

  function depositBalance(row: PaymentRow): Promise<bigint> {
    return client.readContract({
      address: row.token_address as Address,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [row.deposit_address as Address],
    });
  }

  /**
   * What someone else swept from the deposit address (anyone may call settle, and it pays only
   * the committed recipients) after the newest credited transfer, in blocks with the configured
   * confirmations, and the fee it paid; zero until that is proven.
   */
  async function settledByOthers(row: PaymentRow): Promise<{ amount: bigint; fee: bigint }> {
    // Funds that reached the address on this chain: credited transfers here, and mints of its bridges.
    const credited = (await chain.transfersForPayment(row.id))
      .filter((t) => t.credited_at !== null && t.chain_id === chainId)
      .map((t) => ({ blockNumber: t.block_number, logIndex: t.log_index }));
    const mint = await deps.bridged?.newestMint(row.id);
    if (mint) credited.push({ blockNumber: mint.block, logIndex: mint.log });
    const newest = credited.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex).at(-1);
    if (!newest) return { amount: 0n, fee: 0n };
    const head = await client.getBlockNumber({ cacheTime: 0 });
    return sweptAfter(client, {
      factory: factoryOf(row),
      paymentId: row.id as Hex,
      deposit: row.deposit_address as Address,
      after: newest,
      to: head - BigInt(confirmations),
    });
  }

  /**
   * Credited funds missing from the deposit address: recorded as settled (with `alsoInTx`, in one
   * transaction) once someone else's settlement is proven; until then the likelier cause is a
   * node answering from an older block, which a later look sees past. Whether it recorded.
   */
  async function recordSweptByOthers(
    row: PaymentRow,
    alsoInTx: () => Promise<unknown> = async () => {},
  ): Promise<boolean> {
    const { amount: swept, fee } = await settledByOthers(row);
    if (swept === 0n) {
      log.debug("credited funds not at the deposit address, and no settlement of it seen yet", { payment_id: row.id });
      return false;
    }
    await chain.transaction(async () => {
      await alsoInTx();
      // At most what is owed: the same events are found again only once more was credited
      // before them, and then only that part is new.
      const fresh = (await payments.findById(row.id))!;
      const owed = owedOn(fresh);
      // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
      const amount = swept < owed ? swept : owed;
      if (amount > 0n) await payments.recordSettled(row.id, amount, clock.now(), fee);
      await deps.bridged?.swept(row.id, Number.MAX_SAFE_INTEGER);
      await lifecycle.apply(row.id, "settlement_submitted");
      await lifecycle.apply(row.id, "settlement_mined");
    });
    log.info("deposit address already settled by another caller", { payment_id: row.id, amount: swept });
    return true;
  }

  /** Marks a settlement failure and schedules the retry; runs inside the caller's transaction. */
  async function recordFailure(paymentId: string, reason: string): Promise<void> {
    const row = (await payments.findById(paymentId))!;
    const retryAt = clock.now() + retryDelayMs(row.settle_attempts + 1);
    await payments.recordSettleFailure(row.id, retryAt, clock.now());
    await lifecycle.apply(row.id, "settlement_reverted");
    log.warn("settlement failed; funds stay at the deposit address", {
      payment_id: row.id,
      reason,
      retry_at: isoMillis(retryAt),
    });
  }

  /** Simulates, signs, records, then broadcasts one settlement. */
  async function submit(row: PaymentRow): Promise<void> {
    if ((await depositBalance(row)) === 0n) return void (await recordSweptByOthers(row));
    let gas: bigint;
    try {
      gas = await client.estimateContractGas({ ...settleCall(row), account } as Parameters<
        typeof client.estimateContractGas
      >[0]);
    } catch (error) {
      if (isRevert(error)) return chain.transaction(() => recordFailure(row.id, errorMessage(error)));
      throw error;
    }
    const nonce = await deps.nonces.claim();
    const signed = (await sign(row, nonce, (gas * 12n) / 10n))!;
    await chain.transaction(async () => {
      await chain.insertSettlement({
        payment_id: row.id,
        nonce,
        tx_hash: signed.hash,
        raw_tx: signed.serialized,
        max_fee: signed.maxFeePerGas.toString(),
        priority_fee: signed.maxPriorityFeePerGas.toString(),
        now: clock.now(),
      });
      await lifecycle.apply(row.id, "settlement_submitted");
    });
    log.info("settlement sent", { payment_id: row.id, tx_hash: signed.hash, nonce });
    await broadcast(signed.serialized);
  }

  /**
   * Follows a sent settlement: its outcome once the payment's speed policy counts the block it
   * is in (src/chain/watching/depth.ts), a rebroadcast, or a replacement when stuck.
   */
  async function follow(settlement: SettlementRow, depth: Depth): Promise<void> {
    const hashes = JSON.parse(settlement.tx_hashes) as Hex[];
    let found = await firstReceipt(client, hashes);
    if (!found) {
      const mined = await client.getTransactionCount({ address: account.address, blockTag: "latest" });
      if (mined > settlement.nonce) {
        // Receipts can lag the nonce count (a node behind a load balancer): ask once more
        // before deciding the nonce went to a transaction we never sent.
        found = await firstReceipt(client, hashes);
        if (!found) {
          await chain.transaction(() =>
            chain.finishSettlement(settlement.id, "dropped", null, null, settlement.tx_hash, clock.now()),
          );
          deps.nonces.reset();
          log.warn("settlement nonce taken by another transaction; resending", {
            payment_id: settlement.payment_id,
            nonce: settlement.nonce,
          });
          return;
        }
      } else {
        return unmined(settlement, hashes);
      }
    }
    const { hash, receipt } = found;
    const row = (await payments.findById(settlement.payment_id))!;
    if (!counts(row.speed, receipt.blockNumber, depth)) return; // mined, not deep enough yet
    // Every factory version emits the same Settled event; only the payment's own factory counts.
    const factory = factoryOf(row);
    const ours = (entry: { address: string; args: { paymentId: Hex } }) =>
      entry.address.toLowerCase() === factory.toLowerCase() && entry.args.paymentId === settlement.payment_id;
    const settled = parseEventLogs({ abi: depositFactoryAbi, eventName: "Settled", logs: receipt.logs }).find(ours);
    // Version 3: the fee transfer failed (USDC's blocklist holds the fee recipient), so the payout got it all.
    const skipped = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "FeeSkipped", logs: receipt.logs }).find(
      ours,
    );
    const ok = receipt.status === "success" && settled !== undefined;
    await chain.transaction(async () => {
      const counted = ok
        ? await payments.recordSettled(settlement.payment_id, settled.args.amount, clock.now(), settled.args.fee)
        : null;
      await chain.finishSettlement(
        settlement.id,
        ok ? "mined" : "reverted",
        counted && { amount: settled!.args.amount, fee: counted.fee },
        Number(receipt.blockNumber),
        hash,
        clock.now(),
      );
      if (ok) {
        await deps.bridged?.swept(settlement.payment_id, Number(receipt.blockNumber));
        await lifecycle.apply(settlement.payment_id, "settlement_mined");
      } else {
        await recordFailure(settlement.payment_id, `transaction ${hash} reverted`);
      }
    });
    if (ok)
      log.info("settlement confirmed", {
        payment_id: settlement.payment_id,
        tx_hash: hash,
        amount: settled.args.amount,
      });
    if (ok && skipped)
      log.warn("settlement paid the payout without the fee: the fee transfer failed (fee recipient blocked?)", {
        payment_id: settlement.payment_id,
        tx_hash: hash,
        fee: skipped.args.fee,
        fee_recipient: skipped.args.feeRecipient,
      });
    // A call to a factory without code "succeeds" without its event: a reorg may have taken the
    // factory's deployment. Look again before the next settlement is sent.
    if (receipt.status === "success" && !settled) factories.lost();
  }

  /** A settlement not mined yet: rebroadcast it, or outbid it when it is stuck on its fee. */
  async function unmined(settlement: SettlementRow, hashes: Hex[]): Promise<void> {
    // Only a transaction the node holds can be stuck on its fee; one it does not know (never
    // accepted, say for want of gas, or evicted) is broadcast again unchanged.
    const pending = await unlessNotFound(client.getTransaction({ hash: settlement.tx_hash as Hex }));
    if (!pending) {
      // Never accepted (no gas?) while someone else settled the address: nothing is left to send.
      const row = (await payments.findById(settlement.payment_id))!;
      const dropped = () =>
        chain.finishSettlement(settlement.id, "dropped", null, null, settlement.tx_hash, clock.now());
      if ((await depositBalance(row)) === 0n && (await recordSweptByOthers(row, dropped))) {
        deps.nonces.reset();
        return;
      }
    }
    if (!pending || clock.now() - settlement.submitted_at < deps.stuckAfterMs)
      return broadcast(settlement.raw_tx as Hex);

    const row = (await payments.findById(settlement.payment_id))!;
    const previous = sentWith(settlement.raw_tx as Hex);
    const signed = await sign(row, settlement.nonce, previous.gas, previous);
    if (!signed) return broadcast(settlement.raw_tx as Hex);
    await chain.transaction(() =>
      chain.replaceSettlement({
        id: settlement.id,
        tx_hash: signed.hash,
        tx_hashes: [...hashes, signed.hash],
        raw_tx: signed.serialized,
        max_fee: signed.maxFeePerGas.toString(),
        priority_fee: signed.maxPriorityFeePerGas.toString(),
        now: clock.now(),
      }),
    );
    log.info("settlement stuck; replaced with higher fees", {
      payment_id: row.id,
      nonce: settlement.nonce,
      tx_hash: signed.hash,
    });
    await broadcast(signed.serialized);
  }

  async function tick(): Promise<void> {
    if (clock.now() - state.balanceAt > 60_000) {
      state.balance = await client.getBalance({ address: account.address });
      state.balanceAt = clock.now();
    }
    const open = await chain.openSettlements();
    if (open.length > 0 || (await young.any())) {
      const depth = await deps.depth.read();
      for (const settlement of open) await follow(settlement, depth);
      await young.check(depth);
    }
    // After following: a settlement that found its factory gone must keep this round's
    // settlements from going the same way, each paying gas to an address without code.
    await factories.ensure();
    for (const row of await payments.awaitingSettlement(clock.now(), {
      floor: deps.sweepFloor,
      perDay: LATE_SWEEPS_PER_DAY,
    }))
      await submit(row);
  }

  return {
    tick,
    address: account.address,
    /** For /readyz: answered from what the loop last saw, so probing it costs no RPC call. */
    status: () => {
      return {
        relayer: account.address,
        gas_balance_wei: state.balance?.toString() ?? null,
        ...factories.status(),
        last_error: state.lastError,
        rounds: state.rounds,
      };
    },
    /** Runs until `signal` aborts; `wake()` skips the wait after new credits. */
    run: (signal: AbortSignal, intervalMs: number): Promise<void> =>
      runRelayerLoop({
        tick,
        state,
        nonces: deps.nonces,
        intervalMs,
        signal,
        wait: waker.wait,
        log,
        failure: { msg: "settlement loop failed; retrying" },
      }),
    wake: waker.wake,
  };
}
