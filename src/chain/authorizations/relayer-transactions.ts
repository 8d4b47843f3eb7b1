/**
 * The relayer's transactions for authorizations, shared by the submitter (src/chain/authorizations/
 * submitter.ts) and its watch after mining (reorg-watch.ts): signing transferWithAuthorization,
 * broadcasting, asking the token whether an authorization was used, and giving a relayer nonce
 * to a self-transfer when what it carries must not be mined.
 */
import { type Address, encodeFunctionData, type Hex, isAddressEqual, keccak256, parseTransaction } from "viem";
import { type Fees, outbid, sentWith } from "../relayer-fees.ts";
import { isAlreadySent, nodeMessage } from "../rpc-errors.ts";
import type { AuthorizationRow } from "./store.ts";
import type { SubmitterDeps } from "./submitter.ts";
import { eip3009Abi, transferCall } from "./token.ts";
import type { AuthorizationFailure, TransferAuthorization } from "./types.ts";

/** What a step did to a record: the columns it changes, and when to look at it again. */
export type Outcome = Partial<AuthorizationRow> & { retryInMs?: number };

/** next_attempt_at of a record the submitter has nothing more to do for. */
export const NEVER = Number.MAX_SAFE_INTEGER;

export const failed = (code: AuthorizationFailure, message: string): Outcome => ({
  status: "failed",
  failure_code: code,
  failure_message: message,
});

export const authorizationOf = (row: AuthorizationRow): TransferAuthorization => ({
  from: row.from_address as Address,
  to: row.to_address as Address,
  value: BigInt(row.value),
  validAfter: BigInt(row.valid_after),
  validBefore: BigInt(row.valid_before),
  nonce: row.nonce as Hex,
});

/** Whether the authorization can no longer be mined: its validBefore is past. */
export const expiredAt = (row: AuthorizationRow, nowMs: number): boolean =>
  BigInt(row.valid_before) * 1000n <= BigInt(nowMs);

/**
 * Seconds an authorization must stay valid for the relayer to sign or bid for a transaction that
 * carries it: mined after validBefore, transferWithAuthorization reverts, and the gas is spent.
 */
export const SEND_MARGIN_SECONDS = 15;
export const tooLateToSend = (row: AuthorizationRow, nowMs: number): boolean =>
  expiredAt(row, nowMs + SEND_MARGIN_SECONDS * 1000);

/** The gas of a plain transfer of nothing, which takes a nonce and does nothing else. */
const SELF_TRANSFER_GAS = 21_000n;

export type RelayerTransactions = ReturnType<typeof createRelayerTransactions>;

/** The relayer's side of authorizations (deps as the submitter's). */
export function createRelayerTransactions(
  deps: Pick<
    SubmitterDeps,
    "store" | "fenced" | "client" | "wallet" | "account" | "chainId" | "usdc" | "clock" | "log" | "pollIntervalMs"
  >,
) {
  const { store, client, wallet, account, clock, log } = deps;

  async function broadcast(serialized: Hex): Promise<void> {
    try {
      await client.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      if (isAlreadySent(error)) log.debug("authorization rebroadcast: the node has it already");
      else
        log.warn("authorization broadcast refused by the node", {
          error: nodeMessage(error),
          relayer: account.address,
        });
    }
  }

  async function sign(row: AuthorizationRow, nonce: number, gas: bigint, fees: Fees) {
    const call = transferCall(deps.usdc, authorizationOf(row), row.signature as Hex);
    const serialized = await wallet.signTransaction({
      account,
      chain: undefined,
      chainId: deps.chainId,
      type: "eip1559",
      to: deps.usdc,
      data: encodeFunctionData(call),
      gas,
      nonce,
      ...fees,
    });
    return { serialized, hash: keccak256(serialized) };
  }

  const isUsed = (row: AuthorizationRow) =>
    client.readContract({
      address: deps.usdc,
      abi: eip3009Abi,
      functionName: "authorizationState",
      args: [row.from_address as Address, row.nonce as Hex],
    });

  const isSelfTransfer = (serialized: Hex): boolean => {
    const to = parseTransaction(serialized).to;
    return to != null && isAddressEqual(to, account.address);
  };

  /**
   * The authorization expires (or is about to) while its transaction waits unmined, so mined now
   * it could only revert, or its payment was paid another way meanwhile, so it would make the payer
   * pay twice. Its nonce goes to a transfer of nothing to the relayer itself, outbidding it, so the
   * relayer's later transactions are not held behind it and no gas buys a revert. Stored before it
   * is broadcast, as any replacement.
   */
  async function release(row: AuthorizationRow, hashes: Hex[]): Promise<Outcome> {
    const previous = sentWith(row.raw_tx as Hex);
    // Even above what outbid() calls wise: the one it replaces would be mined at its own fee and revert.
    const fees = (await outbid(client, previous)) ?? {
      maxFeePerGas: (previous.maxFeePerGas * 115n) / 100n,
      maxPriorityFeePerGas: (previous.maxPriorityFeePerGas * 115n) / 100n,
    };
    const serialized = await wallet.signTransaction({
      account,
      chain: undefined,
      chainId: deps.chainId,
      type: "eip1559",
      to: account.address,
      value: 0n,
      gas: SELF_TRANSFER_GAS,
      nonce: row.relayer_nonce!,
      ...fees,
    });
    const hash = keccak256(serialized);
    const replaced = {
      raw_tx: serialized,
      tx_hash: hash,
      tx_hashes: JSON.stringify([...hashes, hash]),
      sent_at: clock.now(),
    };
    await deps.fenced(() => store.save({ ...row, ...replaced }, clock.now()));
    log.info("authorization unmined and no longer to be sent; its relayer nonce goes to a self-transfer", {
      authorization_id: row.id,
      nonce: row.relayer_nonce,
      tx_hash: hash,
    });
    await broadcast(serialized);
    return { ...replaced, retryInMs: deps.pollIntervalMs };
  }

  return { broadcast, sign, isUsed, isSelfTransfer, release };
}
