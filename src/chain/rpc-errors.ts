import {
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  type PublicClient,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from "viem";

/** RPC answers that mean "ask for a smaller block range", across common node providers. */
const RANGE_TOO_LARGE = /range|too many|limit|exceed|too large|size|10000|response is too big|timeout|timed out/i;

export function isRangeError(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.message} ${(error as { details?: string }).details ?? ""}` : String(error);
  // A rate limit is not a range problem: narrowing the range would only ask faster.
  if ((error as { status?: number }).status === 429 || /rate.?limit|too many requests/i.test(text)) return false;
  return RANGE_TOO_LARGE.test(text);
}

/**
 * Exponential backoff with equal jitter, in milliseconds: a random wait between half the
 * exponential ceiling and all of it, so retries spread out yet always wait at least half.
 */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return (error as { shortMessage?: string }).shortMessage ?? error.message;
  return String(error);
}

/**
 * The short message plus the node's own words: viem's short message for a refused transaction
 * is only "Transaction creation failed.", the node's reason ("nonce too low") is in `details`.
 */
export function nodeMessage(error: unknown): string {
  const details = (error as { details?: unknown } | null)?.details;
  return typeof details === "string" && details ? `${errorMessage(error)} ${details}` : errorMessage(error);
}

/**
 * A broadcast refused because the node has the transaction already, pending ("already known" in
 * geth, "transaction already imported" in anvil) or mined ("nonce too low"): nothing went wrong.
 * A nonce taken by another transaction also reads "nonce too low"; the receipt check that
 * follows every broadcast is what tells the two apart.
 */
export function isAlreadySent(error: unknown): boolean {
  return /already known|already imported|nonce too low/i.test(nodeMessage(error));
}

/**
 * A receipt or transaction lookup where "not found" is an answer (null) but any other failure
 * (node down, timeout) is not: mistaking an outage for "no such transaction" would fail
 * things that only need waiting.
 */
export async function unlessNotFound<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError || error instanceof TransactionNotFoundError) return null;
    throw error;
  }
}

/** The receipt of the first of `hashes` (a transaction and its replacements) that has one, or null. */
export async function firstReceipt(client: Pick<PublicClient, "getTransactionReceipt">, hashes: Hex[]) {
  for (const hash of hashes) {
    const receipt = await unlessNotFound(client.getTransactionReceipt({ hash }));
    if (receipt) return { hash, receipt };
  }
  return null;
}

/**
 * The contract's own refusal inside a failed call or estimate (its custom error's name and
 * arguments when the ABI knows them), as opposed to an RPC failure; null when it is not one.
 */
export function revertOf(error: unknown): ContractFunctionRevertedError | null {
  if (!(error instanceof BaseError)) return null;
  return error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
}

/** A revert of the call itself (blocked payout, paused token), as opposed to an RPC failure. */
export function isRevert(error: unknown): boolean {
  return revertOf(error) !== null;
}
