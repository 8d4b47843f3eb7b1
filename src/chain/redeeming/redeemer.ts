import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  keccak256,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import type { Clock } from "../../lib/clock.ts";
import { RetryableError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/log.ts";
import { runEvery } from "../../lib/loop.ts";
import { formatExact } from "../../lib/money.ts";
import { createWaker } from "../../lib/sleep.ts";
import { messageTransmitterAbi } from "../cctp-abi.ts";
import { addressToBytes32, decodeBurnMessage } from "../cctp-message.ts";
import type { CrossChainConfig } from "../cross-chain-config.ts";
import type { NonceManager } from "../nonces.ts";
import { type Fees, goingFees, outbid, sentWith } from "../relayer-fees.ts";
import { backoffMs, errorMessage, isAlreadySent, nodeMessage, unlessNotFound } from "../rpc-errors.ts";
import type { AttestationApi } from "./attestation-api.ts";
import type { SourceBurn, SourceBurns } from "./source-burn.ts";
import type { BurnRow, BurnStore } from "./store.ts";

export interface RedeemerDeps {
  config: CrossChainConfig;
  burns: BurnStore;
  api: AttestationApi;
  /** The settlement chain, where messages are received, and the relayer that pays for it. */
  destination: {
    client: PublicClient;
    wallet: WalletClient<Transport, Chain | undefined, Account>;
    nonces: NonceManager;
  };
  depositAddressOf: (paymentId: string) => Promise<Address | null>;
  /** Whether a payer's burn of `amount` for the payment is worth a redemption (service.ts `worthRedeeming`). */
  worthRedeeming: (paymentId: string, amount: bigint) => Promise<boolean>;
  sourceBurns: SourceBurns;
  clock: Clock;
  log: Logger;
  /** A redemption unmined for this long is replaced with higher fees (the settler's setting). */
  stuckAfterMs: number;
}

/** A burn the source chain has never heard of after this long is given up on. */
const UNKNOWN_TX_GIVE_UP_MS = 60 * 60_000;
/** How often a sent redemption is checked (and sent again while unmined). */
const REDEEM_POLL_MS = 1_000;

/**
 * While a burn waits to be seen or signed: looked at every quarter second for its first forty
 * looks (a fast transfer is attested within seconds), then backing off as for errors, so a
 * standard transfer's quarter of an hour costs a few dozen requests, not thousands.
 */
const waitingRetryMs = (attempts: number) => (attempts < 40 ? 250 : backoffMs(attempts - 40, 1_000, 60_000));

type Outcome = { state: "attesting" | "redeeming" | "redeemed" | "failed"; error?: string; retryInMs?: number };

export type Redeemer = ReturnType<typeof createRedeemer>;

/**
 * Follows each recorded burn: checks it on the source chain (a USDC burn minting to this
 * payment's deposit address, bound for our domain), waits for its attestation, then calls
 * receiveMessage on the settlement chain. Minting happens at most once whatever we do: the
 * transmitter refuses a used nonce, which we treat as done.
 */
export function createRedeemer(deps: RedeemerDeps) {
  const { config, burns, api, destination, clock, log } = deps;
  const waker = createWaker();

  /** Reads the burn on its source chain; returns a failure reason, or the burned amount. */
  async function verifyOnSource(burn: BurnRow, deposit: Address): Promise<SourceBurn> {
    const found = await deps.sourceBurns.read(burn.source_chain, burn.tx_hash as Hex, deposit);
    if (found === null && clock.now() - burn.created_at > UNKNOWN_TX_GIVE_UP_MS)
      return { failure: `transaction not found on ${burn.source_chain}` };
    return found;
  }

  async function attest(burn: BurnRow, deposit: Address): Promise<Outcome> {
    if (burn.amount === null) {
      const verified = await verifyOnSource(burn, deposit);
      if (verified === null)
        return {
          state: "attesting",
          error: "waiting for the transaction on the source chain",
          retryInMs: waitingRetryMs(burn.attempts),
        };
      if ("failure" in verified) return { state: "failed", error: verified.failure };
      burn.amount = verified.amount;
    }
    // A payer's burn posted before it was mined is checked here, as the public endpoint checks a mined one.
    if (burn.bridge_id === null && !(await deps.worthRedeeming(burn.payment_id, burn.amount)))
      return {
        state: "failed",
        error:
          `burns ${formatExact(burn.amount)} USDC, too little to redeem at this server's cost; ` +
          "anyone may relay its attested message",
      };
    const messages = await api.messages(burn.source_domain, burn.tx_hash as Hex);
    const mine = messages.find((m) => {
      const decoded = decodeBurnMessage(m.message);
      return (
        decoded !== null &&
        decoded.destinationDomain === config.domain &&
        decoded.mintRecipient.toLowerCase() === addressToBytes32(deposit) &&
        decoded.recipient.toLowerCase() === addressToBytes32(config.tokenMessenger)
      );
    });
    if (mine?.status !== "complete" || mine.attestation === null)
      return { state: "attesting", error: "waiting for the attestation", retryInMs: waitingRetryMs(burn.attempts) };
    burn.message = mine.message;
    burn.attestation = mine.attestation;
    burn.message_nonce = decodeBurnMessage(mine.message)!.nonce;
    return { state: "redeeming", retryInMs: 0 };
  }

  /** Whether the message's nonce is used in the latest mined block. */
  async function nonceUsedOnChain(nonce: Hex): Promise<boolean> {
    const used = await destination.client.readContract({
      address: config.messageTransmitter,
      abi: messageTransmitterAbi,
      functionName: "usedNonces",
      args: [nonce],
      blockTag: "latest",
    });
    return used !== 0n;
  }

  async function broadcast(serialized: Hex): Promise<void> {
    try {
      await destination.client.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      // As for settlements: a node that has it already is fine, any other refusal is not.
      if (isAlreadySent(error))
        log.debug("redemption rebroadcast: the node has it already", { error: nodeMessage(error) });
      else log.warn("redemption broadcast refused by the node", { error: nodeMessage(error) });
    }
  }

  async function redeem(burn: BurnRow): Promise<Outcome> {
    const args = [burn.message as Hex, burn.attestation as Hex] as const;
    if (burn.redeem_tx_hash) {
      const receipt = await unlessNotFound(
        destination.client.getTransactionReceipt({ hash: burn.redeem_tx_hash as Hex }),
      );
      if (receipt?.status === "success") return { state: "redeemed" };
      if (!receipt) {
        const mined = await destination.client.getTransactionCount({
          address: destination.wallet.account.address,
          blockTag: "latest",
        });
        if (mined <= burn.redeem_nonce!) {
          // Not mined yet: send it again, or outbid it. Its nonce must be used, or every later
          // transaction of the relayer (settlements too) would wait behind the gap.
          await resendOrReplace(burn, args);
          return {
            state: "redeeming",
            error: "redemption sent, waiting for it to be mined",
            retryInMs: REDEEM_POLL_MS,
          };
        }
        // The nonce went to another transaction: one this one replaced, or one we never sent.
        if (burn.message_nonce && (await nonceUsedOnChain(burn.message_nonce as Hex))) {
          // Receipts can lag the nonce count (a node behind a load balancer): ask once more. Not
          // found, it was received by a transaction whose hash this row no longer has (one this
          // one replaced): better no hash than a wrong one.
          const again = await unlessNotFound(
            destination.client.getTransactionReceipt({ hash: burn.redeem_tx_hash as Hex }),
          );
          if (again?.status !== "success") burn.redeem_tx_hash = null;
          return { state: "redeemed" };
        }
        log.warn("redemption nonce taken by another transaction; redeeming anew", {
          burn_id: burn.id,
          nonce: burn.redeem_nonce,
        });
        destination.nonces.reset();
      }
      // Reverted: most likely received by someone else first, which the estimate below tells.
    }
    let gas: bigint;
    try {
      gas = await destination.client.estimateContractGas({
        address: config.messageTransmitter,
        abi: messageTransmitterAbi,
        functionName: "receiveMessage",
        args,
        account: destination.wallet.account,
      });
    } catch (error) {
      const text = nodeMessage(error);
      if (/nonce already used/i.test(text)) {
        // Some nodes (anvil among them) estimate against pending transactions: a receiveMessage
        // still in the mempool is not a mint yet, and may never be one if it is dropped.
        if (burn.message_nonce && !(await nonceUsedOnChain(burn.message_nonce as Hex))) {
          return { state: "redeeming", error: "a redemption of this message is pending on the settlement chain" };
        }
        return { state: "redeemed" };
      }
      if (/expired/i.test(text) && burn.message_nonce) {
        await api.reattest(burn.message_nonce);
        burn.message = burn.attestation = null;
        return { state: "attesting", error: "message expired; asked the attestation service to sign it again" };
      }
      throw new RetryableError(`receiveMessage would revert: ${errorMessage(error)}`);
    }
    // Signed, then stored, then sent: a crash in between resends this transaction, not another.
    const nonce = await destination.nonces.claim();
    let serialized: Hex;
    try {
      serialized = await sign(args, (gas * 12n) / 10n, nonce, await goingFees(destination.client));
    } catch (error) {
      destination.nonces.reset();
      throw error;
    }
    Object.assign(burn, {
      redeem_tx_hash: keccak256(serialized),
      redeem_nonce: nonce,
      redeem_raw_tx: serialized,
      redeem_sent_at: clock.now(),
    });
    await burns.save(burn, clock.now());
    await broadcast(serialized);
    return { state: "redeeming", error: "redemption sent, waiting for it to be mined", retryInMs: REDEEM_POLL_MS };
  }

  /**
   * A redemption not mined yet: sent again unchanged, or, once the node has held it for
   * `stuckAfterMs`, replaced on the same nonce with fees that outbid it (as settlements are).
   */
  async function resendOrReplace(burn: BurnRow, args: readonly [Hex, Hex]): Promise<void> {
    const held = await unlessNotFound(destination.client.getTransaction({ hash: burn.redeem_tx_hash as Hex }));
    if (!held || clock.now() - burn.redeem_sent_at! < deps.stuckAfterMs) return broadcast(burn.redeem_raw_tx as Hex);
    const previous = sentWith(burn.redeem_raw_tx as Hex);
    const fees = await outbid(destination.client, previous);
    if (!fees) return broadcast(burn.redeem_raw_tx as Hex);
    const serialized = await sign(args, previous.gas, burn.redeem_nonce!, fees);
    Object.assign(burn, {
      redeem_tx_hash: keccak256(serialized),
      redeem_raw_tx: serialized,
      redeem_sent_at: clock.now(),
    });
    await burns.save(burn, clock.now());
    log.info("redemption stuck; replaced with higher fees", {
      burn_id: burn.id,
      nonce: burn.redeem_nonce,
      tx_hash: burn.redeem_tx_hash,
    });
    await broadcast(serialized);
  }

  async function sign(args: readonly [Hex, Hex], gas: bigint, nonce: number, fees: Fees): Promise<Hex> {
    return destination.wallet.signTransaction({
      account: destination.wallet.account,
      chain: undefined,
      chainId: destination.wallet.chain?.id ?? (await destination.client.getChainId()),
      type: "eip1559",
      to: config.messageTransmitter,
      data: encodeFunctionData({ abi: messageTransmitterAbi, functionName: "receiveMessage", args }),
      gas,
      nonce,
      ...fees,
    });
  }

  async function step(burn: BurnRow): Promise<void> {
    const deposit = await deps.depositAddressOf(burn.payment_id);
    let outcome: Outcome;
    try {
      if (!deposit) outcome = { state: "failed", error: "payment not found" };
      else outcome = burn.state === "attesting" ? await attest(burn, deposit) : await redeem(burn);
    } catch (error) {
      const retryAfter = (error as { retryAfterMs?: number | null }).retryAfterMs ?? null;
      outcome = {
        state: burn.state as Outcome["state"],
        error: errorMessage(error),
        retryInMs: retryAfter ?? undefined,
      };
      log.warn("cross-chain burn: will retry", { burn_id: burn.id, error: outcome.error });
    }
    const progressed = outcome.state !== burn.state;
    burn.attempts = progressed ? 0 : burn.attempts + 1;
    burn.next_attempt_at = clock.now() + (outcome.retryInMs ?? backoffMs(burn.attempts, 1_000, 60_000));
    burn.state = outcome.state;
    burn.error = outcome.error ?? null;
    await burns.save(burn, clock.now());
    if (progressed) log.info("cross-chain burn", { burn_id: burn.id, state: burn.state, error: burn.error });
  }

  let rounds = 0;
  async function tick(): Promise<void> {
    try {
      for (const burn of await burns.due(clock.now())) await step(burn);
    } finally {
      rounds++;
    }
  }

  return {
    tick,
    wake: waker.wake,
    /** Rounds finished, so a test can know the redeemer has looked before asserting it sent nothing. */
    rounds: () => rounds,
    run: (signal: AbortSignal) => runEvery("cross-chain redeemer", 500, tick, { log, signal, wait: waker.wait }),
  };
}
