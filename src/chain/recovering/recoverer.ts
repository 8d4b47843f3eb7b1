import { type Address, type Hex, keccak256, parseEventLogs, zeroAddress } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { runEvery } from "../../lib/loop.ts";
import { createWaker } from "../../lib/sleep.ts";
import type { PaymentRow } from "../../payments/store.ts";
import { ensureFactoryFor, factoryOf, recoverCall, recoverData } from "../deposit-terms.ts";
import { depositFactoryV2Abi } from "../deposit-v2.ts";
import { type Fees, goingFees, outbid, sentWith } from "../relayer-fees.ts";
import {
  backoffMs,
  errorMessage,
  firstReceipt,
  isAlreadySent,
  nodeMessage,
  revertOf,
  unlessNotFound,
} from "../rpc-errors.ts";
import { overGasCap, recoveryGasLimit } from "./gas.ts";
import type { RecoveryNetwork } from "./networks.ts";
import { reasonOf } from "./service.ts";
import type { RecoveryRow, RecoveryStore } from "./store.ts";

export interface RecovererDeps {
  store: RecoveryStore;
  findPayment: (id: string) => Promise<PaymentRow | null>;
  networks: readonly RecoveryNetwork[];
  clock: Clock;
  log: Logger;
  /** A transaction unmined for this long is replaced with higher fees (the settler's setting). */
  stuckAfterMs: number;
}

/** How often a sent recovery is looked at (and sent again while unmined). */
const FOLLOW_MS = 1_000;
/** How often each source chain's factory is looked for (and deployed again if gone). */
const FACTORY_CHECK_MS = 60_000;

const deployerOn = (network: RecoveryNetwork) => ({
  publicClient: network.clients.publicClient,
  walletClient: network.clients.walletClient,
  nonces: network.nonces,
});

type Outcome = Partial<RecoveryRow> & { retryInMs?: number };

export type Recoverer = ReturnType<typeof createRecoverer>;

/**
 * Carries out recoveries: signs `recover` through the payment's factory on the recovery's chain,
 * with a gas limit never above the cap of ./gas.ts, stores the signed transaction, then broadcasts
 * it, and follows it to its receipt with that chain's confirmations. A crash anywhere leads to the
 * same transaction being sent again, never a second one; an unmined one is replaced on its nonce
 * with higher fees once stuck.
 */
export function createRecoverer(deps: RecovererDeps) {
  const { store, clock, log } = deps;
  const networks = new Map(deps.networks.map((n) => [n.chainId, n]));
  const waker = createWaker();
  /** When each source chain's factory is next looked for: a reorg there can take its deployment. */
  const factoryCheckAt = new Map<number, number>();
  let rounds = 0;

  /**
   * Version 2 and 3 deposit addresses exist on every source chain, so their factories must too, before a
   * request there can even be simulated. Deterministic: the same address whoever deploys it.
   */
  async function ensureSourceFactories(): Promise<void> {
    for (const network of deps.networks) {
      if (network.settlement || clock.now() < (factoryCheckAt.get(network.chainId) ?? 0)) continue;
      factoryCheckAt.set(network.chainId, clock.now() + FACTORY_CHECK_MS);
      try {
        for (const version of [2, 3] as const) await ensureFactoryFor(version, deployerOn(network));
      } catch (error) {
        log.warn("recoveries: cannot deploy the deposit factory", { chain: network.name, error: errorMessage(error) });
      }
    }
  }

  async function broadcast(network: RecoveryNetwork, serialized: Hex): Promise<void> {
    try {
      await network.clients.publicClient.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      // As for settlements: already known or mined is fine; the follow-up reads the receipt.
      if (isAlreadySent(error))
        log.debug("recovery rebroadcast: the node has it already", { error: nodeMessage(error) });
      else log.warn("recovery broadcast refused by the node", { chain: network.name, error: nodeMessage(error) });
    }
  }

  async function sign(
    network: RecoveryNetwork,
    payment: PaymentRow,
    row: RecoveryRow,
    nonce: number,
    gas: bigint,
    fees: Fees,
  ) {
    const { walletClient, account } = network.clients;
    const serialized = await walletClient.signTransaction({
      account,
      chain: undefined,
      chainId: network.chainId,
      type: "eip1559",
      to: factoryOf(payment),
      data: recoverData(payment, (row.token ?? zeroAddress) as Address),
      gas,
      nonce,
      ...fees,
    });
    return { serialized, hash: keccak256(serialized) };
  }

  /** Simulates, signs, stores, then broadcasts the recovery's transaction. */
  async function send(row: RecoveryRow, payment: PaymentRow, network: RecoveryNetwork): Promise<Outcome> {
    const { publicClient, account } = network.clients;
    // The payment's factory may be missing: version 1 is deployed on demand, and a reorg can take any.
    await ensureFactoryFor(payment.factory_version, deployerOn(network));
    const call = { ...recoverCall(payment, (row.token ?? zeroAddress) as Address), account } as Parameters<
      typeof publicClient.simulateContract
    >[0];
    let gas: bigint;
    try {
      const { result } = await publicClient.simulateContract(call);
      if (result === 0n) return { state: "failed", error: "nothing left at the deposit address to recover" };
      gas = await publicClient.estimateContractGas(call as Parameters<typeof publicClient.estimateContractGas>[0]);
    } catch (error) {
      if (revertOf(error)) return { state: "failed", error: `recover would revert: ${reasonOf(error)}` };
      throw error;
    }
    // Checked when asked, and again now: the token's contract may have changed what its transfer costs.
    const over = overGasCap(gas, row.token ? `token ${row.token}` : "the native coin", network.name);
    if (over) return { state: "failed", error: over };
    const nonce = await network.nonces.claim();
    let signed: Awaited<ReturnType<typeof sign>>;
    try {
      signed = await sign(network, payment, row, nonce, recoveryGasLimit(gas), await goingFees(publicClient));
    } catch (error) {
      network.nonces.reset();
      throw error;
    }
    // Stored before it is sent: after a crash the same transaction is sent again.
    const sent: RecoveryRow = {
      ...row,
      state: "submitted",
      nonce,
      raw_tx: signed.serialized,
      tx_hash: signed.hash,
      tx_hashes: JSON.stringify([signed.hash]),
      sent_at: clock.now(),
      error: null,
    };
    await store.save(sent, clock.now());
    log.info("recovery sent", { recovery_id: row.id, chain: network.name, tx_hash: signed.hash, nonce });
    await broadcast(network, signed.serialized);
    return { ...sent, retryInMs: FOLLOW_MS };
  }

  /** Follows a sent recovery: confirmed outcome, rebroadcast, replacement when stuck, or resend when dropped. */
  async function follow(row: RecoveryRow, payment: PaymentRow, network: RecoveryNetwork): Promise<Outcome> {
    const { publicClient, account } = network.clients;
    const hashes = JSON.parse(row.tx_hashes!) as Hex[];
    let found = await firstReceipt(network.clients.publicClient, hashes);
    if (!found) {
      const mined = await publicClient.getTransactionCount({ address: account.address, blockTag: "latest" });
      if (mined <= row.nonce!) return unmined(row, payment, network, hashes);
      // Receipts can lag the nonce count (a node behind a load balancer): ask once more before
      // deciding the nonce went to a transaction this row never sent.
      found = await firstReceipt(network.clients.publicClient, hashes);
      if (!found) {
        network.nonces.reset();
        log.warn("recovery nonce taken by another transaction; sending anew", {
          recovery_id: row.id,
          nonce: row.nonce,
        });
        return { state: "pending", raw_tx: null, tx_hash: null, tx_hashes: null, sent_at: null, retryInMs: 0 };
      }
    }
    const { hash, receipt } = found;
    const head = await publicClient.getBlockNumber({ cacheTime: 0 });
    if (receipt.blockNumber + BigInt(network.confirmations) > head) return { tx_hash: hash, retryInMs: FOLLOW_MS };
    // Every factory version emits the same Recovered event; only the payment's own factory counts.
    const factory = factoryOf(payment).toLowerCase();
    const recovered = parseEventLogs({ abi: depositFactoryV2Abi, eventName: "Recovered", logs: receipt.logs }).find(
      (entry) => entry.address.toLowerCase() === factory && entry.args.paymentId === payment.id,
    );
    if (receipt.status !== "success" || !recovered)
      return {
        state: "failed",
        tx_hash: hash,
        block_number: Number(receipt.blockNumber),
        error: `transaction ${hash} reverted`,
      };
    log.info("recovery confirmed", { recovery_id: row.id, tx_hash: hash, amount: recovered.args.amount.toString() });
    return {
      state: "succeeded",
      tx_hash: hash,
      block_number: Number(receipt.blockNumber),
      amount_units: recovered.args.amount.toString(),
    };
  }

  /** Not mined yet: sent again unchanged, or outbid on the same nonce once the node has held it too long. */
  async function unmined(
    row: RecoveryRow,
    payment: PaymentRow,
    network: RecoveryNetwork,
    hashes: Hex[],
  ): Promise<Outcome> {
    const { publicClient } = network.clients;
    const held = await unlessNotFound(publicClient.getTransaction({ hash: row.tx_hash as Hex }));
    if (!held || clock.now() - row.sent_at! < deps.stuckAfterMs) {
      await broadcast(network, row.raw_tx as Hex);
      return { retryInMs: FOLLOW_MS };
    }
    const previous = sentWith(row.raw_tx as Hex);
    const fees = await outbid(publicClient, previous);
    if (!fees) {
      await broadcast(network, row.raw_tx as Hex);
      return { retryInMs: FOLLOW_MS };
    }
    const signed = await sign(network, payment, row, row.nonce!, previous.gas, fees);
    const replaced = {
      raw_tx: signed.serialized,
      tx_hash: signed.hash,
      tx_hashes: JSON.stringify([...hashes, signed.hash]),
      sent_at: clock.now(),
    };
    await store.save({ ...row, ...replaced }, clock.now());
    log.info("recovery stuck; replaced with higher fees", {
      recovery_id: row.id,
      nonce: row.nonce,
      tx_hash: signed.hash,
    });
    await broadcast(network, signed.serialized);
    return { ...replaced, retryInMs: FOLLOW_MS };
  }

  async function step(row: RecoveryRow): Promise<void> {
    const payment = await deps.findPayment(row.payment_id);
    const network = networks.get(row.chain_id);
    let outcome: Outcome;
    try {
      // A chain switched off with a recovery under way: it waits, in case the chain comes back.
      if (!payment || !network) outcome = { error: `chain ${row.chain_id} is not enabled` };
      else outcome = row.state === "pending" ? await send(row, payment, network) : await follow(row, payment, network);
    } catch (error) {
      outcome = { error: errorMessage(error) };
      log.warn("recovery: will retry", { recovery_id: row.id, error: outcome.error });
    }
    const { retryInMs, ...changes } = outcome;
    const next = { ...((await store.findById(row.id)) ?? row), ...changes };
    const progressed = next.state !== row.state;
    next.attempts = progressed || retryInMs !== undefined ? 0 : row.attempts + 1;
    next.next_attempt_at = clock.now() + (retryInMs ?? backoffMs(next.attempts, 1_000, 60_000));
    await store.save(next, clock.now());
    if (progressed) log.info("recovery", { recovery_id: row.id, state: next.state, error: next.error });
  }

  async function tick(): Promise<void> {
    try {
      await ensureSourceFactories();
      for (const row of await store.due(clock.now())) await step(row);
    } finally {
      rounds++;
    }
  }

  return {
    tick,
    wake: waker.wake,
    /** Rounds finished, so a test can know the recoverer has looked. */
    rounds: () => rounds,
    run: (signal: AbortSignal) => runEvery("recoveries", 500, tick, { log, signal, wait: waker.wait }),
  };
}
