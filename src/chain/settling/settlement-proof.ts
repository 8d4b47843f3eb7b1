import type { Address, Hex, PublicClient } from "viem";
import { depositFactoryAbi } from "../contracts.ts";
import { isRangeError } from "../rpc-errors.ts";

/** A place in the chain's order of logs. */
export interface LogPosition {
  blockNumber: number;
  logIndex: number;
}

/**
 * What `factory`'s Settled events say was swept from `deposit` after `after` and up to block
 * `to`: the proof that funds left a deposit address for its committed recipients, since the
 * address commits to them and only the factory can move its token. A zero balance is no such
 * proof: a node behind the others answers it from a block before the funds arrived. Every factory
 * version emits the same Settled event.
 */
export async function settledAfter(client: PublicClient, q: SweptQuery): Promise<bigint> {
  return (await sweptAfter(client, q)).amount;
}

type SweptQuery = { factory: Address; paymentId: Hex; deposit: Address; after: LogPosition; to: bigint };

/** As `settledAfter`, with the fee those settlements paid (a version 3 address may have skipped it). */
export async function sweptAfter(client: PublicClient, q: SweptQuery): Promise<{ amount: bigint; fee: bigint }> {
  const swept = { amount: 0n, fee: 0n };
  if (q.to < BigInt(q.after.blockNumber)) return swept;
  const logs = await settledLogs(client, q.factory, q.paymentId, q.deposit, BigInt(q.after.blockNumber), q.to);
  for (const log of logs) {
    const later =
      log.blockNumber > q.after.blockNumber ||
      (log.blockNumber === q.after.blockNumber && log.logIndex > q.after.logIndex);
    if (!later) continue;
    swept.amount += log.amount;
    swept.fee += log.fee;
  }
  return swept;
}

/** Settled logs in [from, to], asking again in halves when the node finds the range too large. */
async function settledLogs(
  client: PublicClient,
  factory: Address,
  paymentId: Hex,
  deposit: Address,
  from: bigint,
  to: bigint,
): Promise<Array<LogPosition & { amount: bigint; fee: bigint }>> {
  try {
    const logs = await client.getLogs({
      address: factory,
      event: depositFactoryAbi.find((item) => item.type === "event" && item.name === "Settled")!,
      args: { paymentId, depositAddress: deposit },
      fromBlock: from,
      toBlock: to,
      strict: true,
    });
    return (
      logs
        // Only what was asked for counts, whatever the node answers.
        .filter(
          (log) =>
            !log.removed &&
            log.address.toLowerCase() === factory.toLowerCase() &&
            log.args.paymentId.toLowerCase() === paymentId.toLowerCase() &&
            log.args.depositAddress.toLowerCase() === deposit.toLowerCase() &&
            log.blockNumber !== null &&
            log.logIndex !== null &&
            log.blockNumber >= from &&
            log.blockNumber <= to,
        )
        .map((log) => ({
          blockNumber: Number(log.blockNumber),
          logIndex: log.logIndex!,
          amount: log.args.amount,
          fee: log.args.fee,
        }))
    );
  } catch (error) {
    if (to <= from || !isRangeError(error)) throw error;
    const middle = (from + to) / 2n;
    return [
      ...(await settledLogs(client, factory, paymentId, deposit, from, middle)),
      ...(await settledLogs(client, factory, paymentId, deposit, middle + 1n, to)),
    ];
  }
}
