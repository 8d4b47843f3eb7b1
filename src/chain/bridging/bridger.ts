import { type Address, erc20Abi, type Hex, keccak256, parseEventLogs, parseTransaction } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import { createWaker } from "../../lib/sleep.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentRow, PaymentStore } from "../../payments/store.ts";
import { decodeBurnMessage } from "../cctp-message.ts";
import { bridgeCall, factoryOf, fastBridgeAllowed } from "../deposit-terms.ts";
import type { BurnStore } from "../redeeming/store.ts";
import { type Fees, goingFees, outbid, sentWith } from "../relayer-fees.ts";
import { runRelayerLoop } from "../relayer-loop.ts";
import {
  backoffMs,
  errorMessage,
  firstReceipt,
  isAlreadySent,
  isRevert,
  nodeMessage,
  unlessNotFound,
} from "../rpc-errors.ts";
import type { SourceNetwork } from "../source-networks.ts";
import { LATE_SWEEPS_PER_DAY } from "../sweep-floor.ts";
import type { SourceReadiness } from "../watching/source-readiness.ts";
import { bridgedEventAbi, burnable, unrecordedBurn } from "./burn-reads.ts";
import { bridgeFeeTerms } from "./fee.ts";
import type { BridgeRow, BridgeStore } from "./store.ts";

export interface BridgerDeps {
  network: SourceNetwork;
  bridges: BridgeStore;
  burns: BurnStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  /** Runs `fn` in one database transaction. */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Circle's fee for a fast burn from `sourceDomain` to the settlement domain, in (fractional) bps. */
  fastFeeBps: (sourceDomain: number) => Promise<number>;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** A bridge transaction unmined for this long is replaced with higher fees. */
  stuckAfterMs: number;
  /** Called when a burn was handed to the redeemer, so it looks at once. */
  onBurned: () => void;
  /** Why the relayer cannot send on this chain now (no gas as last read), or null. */
  gasProblem: () => string | null;
  /** Whether the chain's deposit factory is there (src/chain/watching/source-readiness.ts), and a way to look again. */
  readiness: Pick<SourceReadiness, "problem" | "recheck">;
}

type Outcome = { error: string | null; retryInMs?: number };

export type Bridger = ReturnType<typeof createBridger>;

/**
 * Moves the funds credited on one source chain to the settlement chain: for each payment with
 * credited funds no burn has taken yet, calls the v2 factory's bridge(), which burns the deposit
 * address's USDC through CCTP to the same address on the settlement domain. Each transaction is
 * simulated, signed, stored, then sent, and followed to its confirmed receipt (resent after a
 * restart, outbid when stuck); the mined burn is handed to the redeemer as the address's own.
 */
export function createBridger(deps: BridgerDeps) {
  const { network, bridges, burns, payments, lifecycle, clock, log } = deps;
  const { source, nonces } = network;
  const { publicClient: client, walletClient: wallet, account } = network.clients;
  const waker = createWaker();
  const state = { lastError: null as string | null, rounds: 0 };

  /**
   * Saves what this loop did to a bridge it still owns: the watcher may have seen its mint in the
   * meantime (someone else relayed the message), and that must not be undone. Whether it saved.
   * In `deps.transaction`, which the chain side fences with its lease: a replica that lost the
   * lease throws here, before it broadcasts what it would have saved.
   */
  function saveWhileCredited(bridge: BridgeRow): Promise<boolean> {
    return deps.transaction(async () => {
      if ((await bridges.findToUpdate(bridge.id))?.state !== "credited") return false;
      await bridges.save(bridge, clock.now());
      return true;
    });
  }

  async function broadcast(serialized: Hex): Promise<void> {
    try {
      await client.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      if (isAlreadySent(error)) log.debug("bridge rebroadcast: the node has it already", { error: nodeMessage(error) });
      else log.warn("bridge broadcast refused by the node", { chain: source.name, error: nodeMessage(error) });
    }
  }

  async function sign(call: { to: Address; data: Hex }, gas: bigint, nonce: number, fees: Fees): Promise<Hex> {
    return wallet.signTransaction({
      account,
      chain: undefined,
      chainId: source.chainId,
      type: "eip1559",
      ...call,
      gas,
      nonce,
      ...fees,
    });
  }

  /**
   * Simulates bridge() for the deposit address's balance; signs, stores, then sends it. A burn
   * of the address that no bridge recorded (someone else called bridge(), or a lagging receipt
   * read made this loop forget its own) is taken as this bridge's first.
   */
  async function send(bridge: BridgeRow): Promise<Outcome> {
    const row = (await payments.findById(bridge.payment_id))!;
    if (await adoptUnrecordedBurn(bridge, row)) return { error: null };
    const deposit = row.deposit_address as Address;
    const balance = await client.readContract({
      address: source.usdc,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [deposit],
    });
    if (balance === 0n) return { error: `no USDC at the deposit address on ${source.name} to bridge` };
    const noGas = deps.gasProblem();
    if (noGas) return { error: noGas };
    const amount = await burnable(client, row.token_messenger as Address, source.usdc, balance);
    // Fast only where the address's terms allow it from here: they are fixed when the payment is made,
    // and the operator may have set this chain to standard (or back) since. A `final` payment waits
    // for Circle to attest the burn at its chain's finality (docs/speed.md).
    const fast = row.speed !== "final" && source.finality === "fast" && fastBridgeAllowed(row, source.domain);
    const fastBps = fast ? await deps.fastFeeBps(source.domain) : null;
    const fee = bridgeFeeTerms(amount, fastBps, row.max_bridge_fee_bps ?? 0);
    const call = bridgeCall(row, source.usdc, fee.maxFee, fee.minFinality);
    let gas: bigint;
    try {
      gas = await client.estimateGas({ account, ...call });
    } catch (error) {
      if (isRevert(error) || /revert/i.test(nodeMessage(error)))
        return { error: `bridge would revert: ${errorMessage(error)}` };
      throw error;
    }
    // Signed, then stored, then sent: a crash in between resends this transaction, not another.
    const nonce = await nonces.claim();
    let serialized: Hex;
    try {
      serialized = await sign(call, (gas * 12n) / 10n, nonce, await goingFees(client));
    } catch (error) {
      nonces.reset();
      throw error;
    }
    const hash = keccak256(serialized);
    Object.assign(bridge, {
      nonce,
      raw_tx: serialized,
      tx_hash: hash,
      tx_hashes: JSON.stringify([hash]),
      sent_at: clock.now(),
      max_fee: fee.maxFee,
      min_finality: fee.minFinality,
    });
    if (!(await saveWhileCredited(bridge))) return { error: null };
    log.info("bridge sent", { bridge_id: bridge.id, chain: source.name, tx_hash: hash, nonce, amount });
    await broadcast(serialized);
    return { error: null, retryInMs: source.pollIntervalMs };
  }

  /** Forgets a bridge transaction that will never mine (reverted, or its nonce went elsewhere). */
  function unsend(bridge: BridgeRow): void {
    Object.assign(bridge, { nonce: null, raw_tx: null, tx_hash: null, tx_hashes: null, sent_at: null });
  }

  /** Follows a sent bridge(): burned once mined as deep as the payment's policy asks; resent or outbid meanwhile. */
  async function follow(bridge: BridgeRow): Promise<Outcome> {
    const hashes = JSON.parse(bridge.tx_hashes!) as Hex[];
    let found = await firstReceipt(client, hashes);
    if (!found) {
      const mined = await client.getTransactionCount({ address: account.address, blockTag: "latest" });
      if (mined <= bridge.nonce!) {
        await resendOrReplace(bridge, hashes);
        return { error: null, retryInMs: source.pollIntervalMs };
      }
      // Receipts can lag the nonce count (a node behind a load balancer): ask once more.
      found = await firstReceipt(client, hashes);
      if (!found) {
        log.warn("bridge nonce taken by another transaction; bridging anew", { bridge_id: bridge.id });
        unsend(bridge);
        nonces.reset();
        return { error: "the bridge transaction's nonce went to another transaction; sending anew", retryInMs: 0 };
      }
    }
    const { hash, receipt } = found;
    const row = (await payments.findById(bridge.payment_id))!;
    // Under `fast` the burn counts in a block, as the payer's transfer did; otherwise at the source
    // chain's confirmations (Circle attests a standard burn only once it is final there anyway).
    const depth = row.speed === "fast" ? 0n : BigInt(source.confirmations);
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (receipt.blockNumber + depth > head) return { error: null, retryInMs: source.pollIntervalMs };
    const factory = factoryOf(row).toLowerCase();
    const bridged = parseEventLogs({ abi: bridgedEventAbi, eventName: "Bridged", logs: receipt.logs }).find(
      (e) => e.address.toLowerCase() === factory && e.args.paymentId === bridge.payment_id,
    );
    if (receipt.status !== "success" || !bridged) {
      unsend(bridge);
      // A call to a factory without code "succeeds" without its event: a reorg may have taken the
      // factory's deployment after it was made. Look again before the next bridge.
      deps.readiness.recheck();
      return { error: `bridge transaction ${hash} reverted; trying again` };
    }
    if (!(await markBurned(bridge, { hash, amount: bridged.args.amount, blockNumber: receipt.blockNumber })))
      return { error: null };
    log.info("bridge burned", { bridge_id: bridge.id, chain: source.name, tx_hash: hash, amount: bridged.args.amount });
    deps.onBurned();
    return { error: null };
  }

  /**
   * Records a mined burn of the deposit address as the bridge's and hands it to the redeemer,
   * unless the bridge moved on meanwhile (its mint seen). Whether it recorded.
   */
  function markBurned(bridge: BridgeRow, burn: { hash: Hex; amount: bigint; blockNumber: bigint }): Promise<boolean> {
    return deps.transaction(async () => {
      if ((await bridges.findToUpdate(bridge.id))?.state !== "credited") return false;
      const recorded = await burns.record({
        id: deps.ids.prefixed("burn"),
        payment_id: bridge.payment_id,
        source_chain: source.name,
        source_domain: source.domain,
        tx_hash: burn.hash,
        amount: burn.amount,
        bridge_id: bridge.id,
        now: clock.now(),
      });
      // Posted to the public cross-chain endpoint before it was found here: the same burn, now this bridge's.
      if (recorded.bridge_id === null) await burns.attachBridge(recorded.id, bridge.id, clock.now());
      Object.assign(bridge, {
        state: "burned",
        amount: burn.amount,
        block_number: Number(burn.blockNumber),
        burn_tx_hash: burn.hash,
        burn_id: recorded.id,
        error: null,
        attempts: 0,
      });
      await bridges.save(bridge, clock.now());
      // Circle's per-message limit left part of the credited funds behind: the next burn is
      // opened with this one, so the payment is never settled without it.
      const { credited, burned } = await bridges.totals(bridge.payment_id, source.chainId);
      if (credited > burned) await open(bridge.payment_id);
      await lifecycle.apply(bridge.payment_id, "settlement_submitted");
      return true;
    });
  }

  /** A burn of the address here that no bridge recorded (burn-reads.ts) is taken as `bridge`'s. Whether it took one. */
  async function adoptUnrecordedBurn(bridge: BridgeRow, row: PaymentRow): Promise<boolean> {
    const since = await bridges.firstCreditBlock(row.id, source.chainId);
    if (since === null) return false;
    const recorded = (await bridges.forPayment(row.id)).filter((b) => b.chain_id === source.chainId);
    const burn = await unrecordedBurn(client, { row, since, confirmations: source.confirmations, recorded });
    if (!burn) return false;
    if (!(await markBurned(bridge, burn))) return true;
    log.info("bridge: took a burn of the deposit address this server did not record", {
      bridge_id: bridge.id,
      chain: source.name,
      tx_hash: burn.hash,
      amount: burn.amount,
    });
    deps.onBurned();
    return true;
  }

  /** Sent again unchanged, or, once the node has held it for `stuckAfterMs`, outbid on the same nonce. */
  async function resendOrReplace(bridge: BridgeRow, hashes: Hex[]): Promise<void> {
    const raw = bridge.raw_tx as Hex;
    const held = await unlessNotFound(client.getTransaction({ hash: bridge.tx_hash as Hex }));
    if (!held || clock.now() - bridge.sent_at! < deps.stuckAfterMs) return broadcast(raw);
    const previous = sentWith(raw);
    const fees = await outbid(client, previous);
    if (!fees) return broadcast(raw);
    const sent = parseTransaction(raw);
    const serialized = await sign({ to: sent.to!, data: sent.data! }, previous.gas, bridge.nonce!, fees);
    const hash = keccak256(serialized);
    Object.assign(bridge, {
      raw_tx: serialized,
      tx_hash: hash,
      tx_hashes: JSON.stringify([...hashes, hash]),
      sent_at: clock.now(),
    });
    if (!(await saveWhileCredited(bridge))) return;
    log.info("bridge stuck; replaced with higher fees", { bridge_id: bridge.id, nonce: bridge.nonce, tx_hash: hash });
    await broadcast(serialized);
  }

  async function step(bridge: BridgeRow): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = bridge.raw_tx ? await follow(bridge) : await send(bridge);
    } catch (error) {
      outcome = { error: errorMessage(error) };
    }
    if (bridge.state !== "credited") return; // burned: saved with its burn
    bridge.attempts = outcome.error ? bridge.attempts + 1 : 0;
    bridge.error = outcome.error;
    bridge.next_attempt_at = clock.now() + (outcome.retryInMs ?? backoffMs(bridge.attempts, 1_000, 60_000));
    if ((await saveWhileCredited(bridge)) && outcome.error)
      log.warn("bridge: will retry", { bridge_id: bridge.id, chain: source.name, error: outcome.error });
  }

  /**
   * A bridge for each payment with credited funds on this chain that no bridge carries yet and
   * that are worth one (the store's query: needed by the payment, or from the sweep floor up),
   * unless an earlier burn already took them (bridge() burns the whole balance, funds not yet
   * credited too): then that burn's bridge carries them.
   */
  async function openBridges(): Promise<void> {
    const lateFunds = { floor: source.sweepFloor, perDay: LATE_SWEEPS_PER_DAY };
    for (const paymentId of await bridges.unbridgedPayments(source.chainId, clock.now(), lateFunds)) {
      await deps.transaction(async () => {
        const { credited, burned } = await bridges.totals(paymentId, source.chainId);
        const latest = await bridges.latestBurned(paymentId, source.chainId);
        if (credited <= burned && latest) return void (await bridges.linkTransfers(latest, paymentId, source.chainId));
        await open(paymentId);
        await lifecycle.apply(paymentId, "settlement_submitted");
      });
    }
  }

  /** A new bridge for the payment's funds on this chain; inside the caller's transaction. */
  async function open(paymentId: string): Promise<void> {
    const bridge = await bridges.create({
      id: deps.ids.prefixed("brg"),
      payment_id: paymentId,
      chain_id: source.chainId,
      now: clock.now(),
    });
    log.info("bridge opened", { bridge_id: bridge.id, payment_id: paymentId, chain: source.name });
  }

  /** Bridges whose burn the redeemer has an attestation for: attested, with the fee Circle will take. */
  async function recordAttested(): Promise<void> {
    for (const { bridge, message } of await bridges.attestedBurns(source.chainId)) {
      const decoded = decodeBurnMessage(message as Hex);
      await deps.transaction(async () => {
        // The watcher, at the head, may have seen the mint already: a minted bridge stays minted.
        if ((await bridges.findToUpdate(bridge.id))?.state !== bridge.state) return;
        Object.assign(bridge, {
          state: "attested",
          fee: decoded?.feeExecuted ?? null,
          message_nonce: decoded?.nonce ?? null,
        });
        await bridges.save(bridge, clock.now());
        await lifecycle.apply(bridge.payment_id, "settlement_submitted");
      });
    }
  }

  async function tick(): Promise<void> {
    // The deposit factory is deployed and watched for by the chain's readiness; without it no bridge() can work.
    const notReady = deps.readiness.problem();
    if (notReady) {
      state.lastError = notReady;
      return;
    }
    state.lastError = null;
    await recordAttested();
    await openBridges();
    for (const bridge of await bridges.due(source.chainId, clock.now())) await step(bridge);
  }

  return {
    tick,
    wake: waker.wake,
    /** For /readyz: this chain's bridging, from what the loop last saw. */
    status: async () => ({
      chain: source.name,
      chain_id: source.chainId,
      open: await bridges.countOpen(source.chainId),
      last_error: state.lastError ?? (await bridges.lastError(source.chainId)),
      rounds: state.rounds,
    }),
    /** Runs until `signal` aborts; one chain's failures never hold up another's. */
    run: (signal: AbortSignal): Promise<void> =>
      runRelayerLoop({
        tick,
        state,
        nonces,
        intervalMs: source.pollIntervalMs,
        signal,
        wait: waker.wait,
        log,
        failure: { msg: "bridging loop failed; retrying", fields: { chain: source.name } },
      }),
  };
}
