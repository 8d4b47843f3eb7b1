/**
 * An authorization's transaction after it was mined, or after its record failed with one signed:
 * watched until `confirmations` deep, so that a reorg taking it away neither leaves the record
 * wrong nor leaves a gap at its relayer nonce that would hold up every later relayer transaction.
 */
import { type Hex, keccak256 } from "viem";
import { firstReceipt, unlessNotFound } from "../rpc-errors.ts";
import { expiredAt, NEVER, type Outcome, type RelayerTransactions } from "./relayer-transactions.ts";
import type { AuthorizationRow } from "./store.ts";
import type { SubmitterDeps } from "./submitter.ts";

/** watchMined for succeeded records, watchFailed for failed ones with a signed transaction. */
export function createReorgWatch(
  deps: Pick<
    SubmitterDeps,
    | "store"
    | "fenced"
    | "client"
    | "account"
    | "nonces"
    | "clock"
    | "log"
    | "stuckAfterMs"
    | "confirmations"
    | "pollIntervalMs"
  >,
  { broadcast, isUsed, isSelfTransfer, release }: RelayerTransactions,
) {
  const { store, client, account, clock, log } = deps;

  /**
   * A succeeded record, until its transaction is `confirmations` deep: a reorg that takes it away
   * (gone from chain and mempool) makes the record `submitted` again, so the stored transaction
   * is sent again on its nonce (the gap would hold up every later relayer transaction) or, once
   * expired, its nonce goes to a self-transfer. One that never carried ours goes back to pending.
   */
  async function watchMined(row: AuthorizationRow): Promise<Outcome> {
    const hash = row.tx_hash as Hex;
    let receipt = await unlessNotFound(client.getTransactionReceipt({ hash }));
    // Receipts can lag (a node behind a load balancer): ask once more before deciding it is gone.
    receipt ??= await unlessNotFound(client.getTransactionReceipt({ hash }));
    if (receipt && receipt.status === "success") {
      const head = await client.getBlockNumber({ cacheTime: 0 });
      if (head - receipt.blockNumber + 1n >= BigInt(deps.confirmations)) return { next_attempt_at: NEVER };
      return { retryInMs: deps.pollIntervalMs };
    }
    deps.nonces.reset(); // its nonce may be free again
    const ours = row.tx_hashes === null ? [] : (JSON.parse(row.tx_hashes) as Hex[]);
    log.warn("a succeeded authorization's transaction left the chain in a reorg; following it again", {
      authorization_id: row.id,
      tx_hash: hash,
    });
    if (row.raw_tx === null || ours.length === 0) return { status: "pending", tx_hash: null, retryInMs: 0 };
    return { status: "submitted", tx_hash: ours.at(-1)!, raw_tx: row.raw_tx, retryInMs: 0 };
  }

  /**
   * Whether the authorization can no longer move the payer's funds, whatever carries it now: used
   * on chain, or expired by our clock and by the chain's latest block (every later block is later).
   */
  async function spent(row: AuthorizationRow): Promise<boolean> {
    if (await isUsed(row)) return true;
    if (!expiredAt(row, clock.now())) return false;
    const latest = await client.getBlock({ blockTag: "latest" });
    return latest.timestamp >= BigInt(row.valid_before);
  }

  /**
   * A failed record whose transaction was signed (a reverted transferWithAuthorization, or the
   * self-transfer of release()), until one of its transactions is `confirmations` deep. One a reorg
   * took away leaves a gap at its relayer nonce that would hold up every later relayer
   * transaction: it is filled again, never with an authorization that could still move the payer's
   * funds (the record told them it failed). The stored transaction is sent again when it cannot
   * (a self-transfer, or the authorization used or expired since); otherwise, and when stuck, a
   * self-transfer outbids it on that nonce, stored before it is broadcast. The record stays failed.
   */
  async function watchFailed(row: AuthorizationRow): Promise<Outcome> {
    const hashes = row.tx_hashes === null ? [] : (JSON.parse(row.tx_hashes) as Hex[]);
    // Receipts can lag (a node behind a load balancer): ask once more before deciding it is gone.
    const found = (await firstReceipt(client, hashes)) ?? (await firstReceipt(client, hashes));
    if (found) {
      const head = await client.getBlockNumber({ cacheTime: 0 });
      if (head - found.receipt.blockNumber + 1n >= BigInt(deps.confirmations)) return { next_attempt_at: NEVER };
      return { retryInMs: deps.pollIntervalMs };
    }
    const mined = await client.getTransactionCount({ address: account.address, blockTag: "latest" });
    // The nonce went to a transaction that is none of ours: no gap to fill.
    if (mined > row.relayer_nonce!) return { next_attempt_at: NEVER };
    const raw = row.raw_tx as Hex;
    const held = await unlessNotFound(client.getTransaction({ hash: keccak256(raw) }));
    if (!held) {
      deps.nonces.reset(); // its nonce may be free again
      if (!isSelfTransfer(raw) && !(await spent(row))) {
        log.warn("a failed authorization's transaction left the chain in a reorg; its nonce goes to a self-transfer", {
          authorization_id: row.id,
          nonce: row.relayer_nonce,
        });
        return release(row, hashes);
      }
      log.warn("a failed authorization's transaction left the chain in a reorg; sending it again on its nonce", {
        authorization_id: row.id,
        nonce: row.relayer_nonce,
        tx_hash: keccak256(raw),
      });
      const resent = { sent_at: clock.now() };
      await deps.fenced(() => store.save({ ...row, ...resent }, clock.now()));
      await broadcast(raw);
      return { ...resent, retryInMs: deps.pollIntervalMs };
    }
    // Sent again and waiting: a self-transfer outbids it once stuck, or at once if it could move funds.
    if (clock.now() - row.sent_at! >= deps.stuckAfterMs || (!isSelfTransfer(raw) && !(await spent(row))))
      return release(row, hashes);
    await broadcast(raw);
    return { retryInMs: deps.pollIntervalMs };
  }

  return { watchMined, watchFailed };
}
