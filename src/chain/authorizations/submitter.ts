import {
  type Account,
  type Address,
  type Chain,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseEventLogs,
  type Transport,
  type WalletClient,
} from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { createWaker } from "../../lib/sleep.ts";
import type { NonceManager } from "../nonces.ts";
import { goingFees, outbid, sentWith } from "../relayer-fees.ts";
import { runRelayerLoop } from "../relayer-loop.ts";
import { backoffMs, errorMessage, firstReceipt, unlessNotFound } from "../rpc-errors.ts";
import { AUTHORIZATION_GAS_CAP, authorizationGasLimit } from "./floor.ts";
import { revertVerdict, say } from "./messages.ts";
import {
  authorizationOf,
  createRelayerTransactions,
  expiredAt,
  failed,
  NEVER,
  type Outcome,
  tooLateToSend,
} from "./relayer-transactions.ts";
import { createReorgWatch } from "./reorg-watch.ts";
import type { AuthorizationRow, AuthorizationStore } from "./store.ts";
import { eip3009Abi, movedIn, transferCall } from "./token.ts";

export interface SubmitterDeps {
  store: AuthorizationStore;
  /** Saves only the chain lease's holder may make, in one transaction with that check. */
  fenced: <T>(write: () => Promise<T>) => Promise<T>;
  client: PublicClient;
  wallet: WalletClient<Transport, Chain | undefined, Account>;
  account: Account;
  nonces: NonceManager;
  chainId: number;
  usdc: Address;
  clock: Clock;
  log: Logger;
  /** A transaction unmined for this long is replaced with higher fees (the settler's setting). */
  stuckAfterMs: number;
  /** Blocks (the mined one counted) after which a succeeded record's transaction is no longer watched for a reorg. */
  confirmations: number;
  pollIntervalMs: number;
  /** Called after a record changed, so outcome() waiters look again. */
  onChange: () => void;
  /**
   * What a payment still needs (micro-USDC), counting every transfer to it seen so far, confirmed
   * or not, but those of `ours` (the authorization's own transactions); 0 once all was received.
   * An authorization for more is not sent: the payer would pay twice.
   */
  stillDue: (paymentId: string, ours: string[]) => Promise<bigint>;
}

export type Submitter = ReturnType<typeof createSubmitter>;

/**
 * Sends accepted authorizations with `transferWithAuthorization` from the relayer, on the chain
 * lease's holder, as the settler sends settlements: simulated, signed, stored (raw transaction
 * and nonce), then broadcast, so a crash at any point leads to the same transaction sent again,
 * never a second one; rebroadcast while unmined, replaced with higher fees on its nonce when
 * stuck. An authorization someone else used first (a front-run) succeeds with their transaction
 * when it moved the same funds; the watcher credits the transfer as any other.
 */
export function createSubmitter(deps: SubmitterDeps) {
  const { store, client, account, clock, log } = deps;
  const waker = createWaker();
  const transactions = createRelayerTransactions(deps);
  const { broadcast, sign, isUsed, isSelfTransfer, release } = transactions;
  const { watchMined, watchFailed } = createReorgWatch(deps, transactions);
  const state = { lastError: null as string | null, rounds: 0 };

  /**
   * The authorization was used on chain, by us or anyone: the transaction that used it (its
   * AuthorizationUsed log) succeeds the record if it moved these funds; a cancellation fails it.
   */
  async function resolveUsed(row: AuthorizationRow): Promise<Outcome> {
    const filter = {
      address: deps.usdc,
      args: { authorizer: row.from_address as Address, nonce: row.nonce as Hex },
      fromBlock: BigInt(row.from_block),
      toBlock: "latest" as const,
    };
    const [used] = await client.getContractEvents({ ...filter, abi: eip3009Abi, eventName: "AuthorizationUsed" });
    if (used) {
      const receipt = await client.getTransactionReceipt({ hash: used.transactionHash });
      const moved = movedIn(receipt.logs, deps.usdc, {
        from: row.from_address as Address,
        to: row.to_address as Address,
        value: BigInt(row.value),
      });
      if (!moved) return failed("used", say.used());
      if (row.tx_hashes === null || !(JSON.parse(row.tx_hashes) as Hex[]).includes(used.transactionHash))
        log.info("authorization used by another sender first; the payment goes on", {
          authorization_id: row.id,
          tx_hash: used.transactionHash,
        });
      return { status: "succeeded", tx_hash: used.transactionHash, failure_code: null, failure_message: null };
    }
    const [canceled] = await client.getContractEvents({
      ...filter,
      abi: eip3009Abi,
      eventName: "AuthorizationCanceled",
    });
    if (canceled) return failed("canceled", say.canceled());
    // Used, but its log not found yet (a node behind): look again shortly.
    return { last_error: "authorization used on chain; its transaction not found yet", retryInMs: deps.pollIntervalMs };
  }

  /** Simulates, signs, stores, then broadcasts one authorization. */
  async function send(row: AuthorizationRow): Promise<Outcome> {
    if (await isUsed(row)) return resolveUsed(row);
    const nowMs = clock.now();
    if (expiredAt(row, nowMs)) return failed("expired", say.expired(Number(row.valid_before), nowMs));
    if (tooLateToSend(row, nowMs)) return failed("expired", say.expiresTooSoon(Number(row.valid_before), nowMs));
    if (await paidOtherwise(row)) return failed("canceled", say.paidOtherwise());
    const a = authorizationOf(row);
    const call = transferCall(deps.usdc, a, row.signature as Hex);
    let gas: bigint;
    try {
      gas = await client.estimateContractGas({ ...call, account });
    } catch (error) {
      const verdict = revertVerdict(error, {
        validAfter: Number(row.valid_after),
        validBefore: Number(row.valid_before),
        needed: a.value,
        nowMs,
      });
      if (!verdict) throw error;
      // The chain's clock may trail ours: not yet valid there is a matter of a block or two.
      if (verdict.code === "not_yet_valid") return { last_error: verdict.message, retryInMs: deps.pollIntervalMs };
      if (verdict.code === "used") return resolveUsed(row);
      if (verdict.code === "insufficient_funds") return failed(verdict.code, say.fundsGone(a.value));
      return failed(verdict.code, verdict.message);
    }
    if (gas > AUTHORIZATION_GAS_CAP) return failed("reverted", say.tooCostly());
    const nonce = await deps.nonces.claim();
    let signed: Awaited<ReturnType<typeof sign>>;
    try {
      signed = await sign(row, nonce, authorizationGasLimit(gas), await goingFees(client));
    } catch (error) {
      deps.nonces.reset();
      throw error;
    }
    // Stored before it is sent: after a crash the same transaction is sent again.
    const sent: AuthorizationRow = {
      ...row,
      status: "submitted",
      relayer_nonce: nonce,
      raw_tx: signed.serialized,
      tx_hash: signed.hash,
      tx_hashes: JSON.stringify([signed.hash]),
      sent_at: clock.now(),
      last_error: null,
    };
    await deps.fenced(() => store.save(sent, clock.now()));
    log.info("authorization sent", { authorization_id: row.id, tx_hash: signed.hash, nonce });
    await broadcast(signed.serialized);
    return { ...sent, retryInMs: deps.pollIntervalMs };
  }

  /** Follows a sent authorization: its receipt, a rebroadcast, a replacement when stuck, or a resend when dropped. */
  async function follow(row: AuthorizationRow): Promise<Outcome> {
    const hashes = JSON.parse(row.tx_hashes!) as Hex[];
    let found = await firstReceipt(client, hashes);
    if (!found) {
      const mined = await client.getTransactionCount({ address: account.address, blockTag: "latest" });
      if (mined <= row.relayer_nonce!) return unmined(row, hashes);
      // Receipts can lag the nonce count: ask once more before deciding the nonce went elsewhere.
      found = await firstReceipt(client, hashes);
      if (!found) {
        deps.nonces.reset();
        if (await isUsed(row)) return resolveUsed(row);
        log.warn("authorization's relayer nonce taken by another transaction; sending anew", {
          authorization_id: row.id,
          nonce: row.relayer_nonce,
        });
        return { status: "pending", raw_tx: null, tx_hash: null, sent_at: null, retryInMs: 0 };
      }
    }
    const { hash, receipt } = found;
    // Our self-transfer took the nonce (release()): the authorization was never carried.
    if (receipt.to !== null && isAddressEqual(receipt.to, account.address)) {
      if (await isUsed(row)) return resolveUsed(row);
      const nowMs = clock.now();
      if (tooLateToSend(row, nowMs)) return failed("expired", say.expired(Number(row.valid_before), nowMs));
      return failed("canceled", say.paidOtherwise());
    }
    const ours = parseEventLogs({ abi: eip3009Abi, eventName: "AuthorizationUsed", logs: receipt.logs }).some(
      (e) =>
        isAddressEqual(e.address, deps.usdc) &&
        isAddressEqual(e.args.authorizer, row.from_address as Address) &&
        e.args.nonce.toLowerCase() === row.nonce.toLowerCase(),
    );
    if (receipt.status === "success" && ours) {
      log.info("authorization mined", { authorization_id: row.id, tx_hash: hash });
      return { status: "succeeded", tx_hash: hash, retryInMs: deps.pollIntervalMs };
    }
    // Reverted: someone used it first, it expired on the way, or the payer's funds went elsewhere.
    if (await isUsed(row)) return resolveUsed(row);
    const nowMs = clock.now();
    if (expiredAt(row, nowMs)) return failed("expired", say.expired(Number(row.valid_before), nowMs));
    const held = await client.readContract({
      address: deps.usdc,
      abi: eip3009Abi,
      functionName: "balanceOf",
      args: [row.from_address as Address],
    });
    if (held < BigInt(row.value)) return failed("insufficient_funds", say.fundsGone(BigInt(row.value)));
    return failed("reverted", say.reverted(`transaction ${hash} reverted`));
  }

  /** Not mined yet: sent again unchanged, or outbid on the same nonce once the node has held it too long. */
  async function unmined(row: AuthorizationRow, hashes: Hex[]): Promise<Outcome> {
    const held = await unlessNotFound(client.getTransaction({ hash: row.tx_hash as Hex }));
    if (!isSelfTransfer(row.raw_tx as Hex) && (tooLateToSend(row, clock.now()) || (await paidOtherwise(row))))
      return release(row, hashes);
    if (!held || clock.now() - row.sent_at! < deps.stuckAfterMs) {
      await broadcast(row.raw_tx as Hex);
      return { retryInMs: deps.pollIntervalMs };
    }
    // A self-transfer stuck on its fee is outbid by another, never by the authorization again.
    if (isSelfTransfer(row.raw_tx as Hex)) return release(row, hashes);
    const previous = sentWith(row.raw_tx as Hex);
    const fees = await outbid(client, previous);
    if (!fees) {
      await broadcast(row.raw_tx as Hex);
      return { retryInMs: deps.pollIntervalMs };
    }
    const signed = await sign(row, row.relayer_nonce!, previous.gas, fees);
    const replaced = {
      raw_tx: signed.serialized,
      tx_hash: signed.hash,
      tx_hashes: JSON.stringify([...hashes, signed.hash]),
      sent_at: clock.now(),
    };
    await deps.fenced(() => store.save({ ...row, ...replaced }, clock.now()));
    log.info("authorization stuck; replaced with higher fees", {
      authorization_id: row.id,
      nonce: row.relayer_nonce,
      tx_hash: signed.hash,
    });
    await broadcast(signed.serialized);
    return { ...replaced, retryInMs: deps.pollIntervalMs };
  }

  /** The payment was paid (in part) another way since this was accepted: sending it would overpay. */
  const paidOtherwise = async (row: AuthorizationRow): Promise<boolean> =>
    row.payment_id !== null &&
    row.source !== "facilitator" &&
    (await deps.stillDue(row.payment_id, row.tx_hashes === null ? [] : JSON.parse(row.tx_hashes))) < BigInt(row.value);

  /** A failed record with a signed transaction at a relayer nonce: watched until it is deep (watchFailed). */
  const signedAtNonce = (row: AuthorizationRow): boolean => row.raw_tx !== null && row.relayer_nonce !== null;

  async function step(row: AuthorizationRow): Promise<void> {
    let outcome: Outcome;
    try {
      outcome =
        row.status === "pending"
          ? await send(row)
          : row.status === "succeeded"
            ? await watchMined(row)
            : row.status === "failed"
              ? await watchFailed(row)
              : await follow(row);
    } catch (error) {
      outcome = { last_error: errorMessage(error) };
      log.warn("authorization: will retry", { authorization_id: row.id, error: outcome.last_error });
    }
    const { retryInMs, ...changes } = outcome;
    const next = { ...((await store.findById(row.id)) ?? row), ...changes };
    const progressed = next.status !== row.status || next.tx_hash !== row.tx_hash;
    next.attempts = progressed || retryInMs !== undefined ? 0 : row.attempts + 1;
    // A failed record without a signed transaction is done; a succeeded one, or a failed one with its
    // transaction signed, is watched until watchMined() / watchFailed() says it is deep enough.
    if (changes.next_attempt_at === undefined)
      next.next_attempt_at =
        next.status === "failed" && !signedAtNonce(next)
          ? NEVER
          : clock.now() + (retryInMs ?? backoffMs(next.attempts, 1_000, 60_000));
    await deps.fenced(() => store.save(next, clock.now()));
    if (progressed) {
      log.info("authorization", { authorization_id: row.id, status: next.status, failure: next.failure_code });
      deps.onChange();
    }
  }

  async function tick(): Promise<void> {
    for (const row of await store.due(clock.now())) await step(row);
  }

  return {
    tick,
    wake: waker.wake,
    status: () => ({ last_error: state.lastError, rounds: state.rounds }),
    rounds: () => state.rounds,
    run: (signal: AbortSignal): Promise<void> =>
      runRelayerLoop({
        tick,
        state,
        nonces: deps.nonces,
        intervalMs: deps.pollIntervalMs,
        signal,
        wait: waker.wait,
        log,
        failure: { msg: "gasless submission loop failed; retrying" },
      }),
  };
}
