import { type Address, type Hex, type PublicClient, parseEventLogs, zeroAddress } from "viem";
import type { Clock } from "../../lib/clock.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import type { Lifecycle } from "../../payments/lifecycle.ts";
import type { PaymentStore } from "../../payments/store.ts";
import { messageTransmitterAbi } from "../cctp-abi.ts";
import { addressToBytes32, decodeBurnBody } from "../cctp-message.ts";
import type { BurnStore } from "../redeeming/store.ts";
import type { ObservedTransfer } from "../watching/ledger.ts";
import type { BridgeStore } from "./store.ts";

/** A mint of the deposit address's own burn: funds already credited on their source chain. */
export interface OwnMint {
  nonce: Hex;
  sourceDomain: number;
  /** What the burn took on the source chain, and the fee CCTP kept of it. */
  burned: bigint;
  fee: bigint;
}

export type OwnMints = ReturnType<typeof createOwnMints>;

/**
 * Tells the mints of a deposit address's own burns (bridged funds arriving) from payments on the
 * settlement chain, and records them: the bridge is minted and its fee is the merchant's cost,
 * but nothing is credited again. A mint is the address's own when its transaction holds a
 * MessageReceived whose burn body has the deposit address as both the mint recipient and the
 * message sender; a payer's burn has the payer as sender, and is a payment.
 */
export function createOwnMints(deps: {
  client: PublicClient;
  messageTransmitter: Address;
  bridges: BridgeStore;
  burns: Pick<BurnStore, "findByMessageNonce" | "attachBridge">;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** The source chain of a CCTP domain, when it is enabled. */
  chainOfDomain: (domain: number) => number | null;
}) {
  const { bridges, payments, lifecycle, clock, log } = deps;

  /**
   * Whether `transfer` mints the deposit address's own burn (one receipt read, only for
   * transfers from the zero address). A failed read throws: the caller asks again rather than
   * crediting bridged funds a second time.
   */
  async function recognise(transfer: ObservedTransfer): Promise<OwnMint | null> {
    if (transfer.from.toLowerCase() !== zeroAddress) return null;
    const receipt = await deps.client.getTransactionReceipt({ hash: transfer.txHash as Hex });
    const recipient = addressToBytes32(transfer.to as Address);
    for (const event of parseEventLogs({
      abi: messageTransmitterAbi,
      eventName: "MessageReceived",
      logs: receipt.logs,
    })) {
      if (event.address.toLowerCase() !== deps.messageTransmitter.toLowerCase()) continue;
      const body = decodeBurnBody(event.args.messageBody);
      if (!body || body.mintRecipient.toLowerCase() !== recipient) continue;
      if (body.messageSender.toLowerCase() !== recipient) continue;
      return {
        nonce: event.args.nonce,
        sourceDomain: event.args.sourceDomain,
        burned: body.amount,
        fee: body.feeExecuted,
      };
    }
    return null;
  }

  /**
   * Records a recognised mint, once (the watcher may see it again after a rewind); inside the
   * watcher's transaction. Returns whether something changed.
   */
  async function record(transfer: ObservedTransfer, mint: OwnMint): Promise<boolean> {
    if (await bridges.isMintRecorded(transfer.txHash)) return false;
    const paymentId = await payments.findIdByDepositAddress(transfer.to);
    if (!paymentId) return false;
    const chainId = deps.chainOfDomain(mint.sourceDomain);
    const bridge = await bridges.forMint(paymentId, chainId, mint.nonce, mint.burned);
    if (!bridge || bridge.state === "minted" || bridge.state === "settled") {
      if (chainId !== null) return recordUnexpected(transfer, mint, paymentId, chainId);
      // From a chain that is not enabled: nothing there was credited, and nothing here is.
      log.warn("mint of a deposit address's own burn from a chain that is not enabled; not credited", {
        payment_id: paymentId,
        tx_hash: transfer.txHash,
        amount: transfer.amount.toString(),
      });
      return false;
    }
    // A burn of the address also posted to the public endpoint: the same burn, now this bridge's.
    const posted = await deps.burns.findByMessageNonce(paymentId, mint.nonce);
    if (posted && posted.bridge_id === null) {
      await deps.burns.attachBridge(posted.id, bridge.id, clock.now());
      bridge.burn_id ??= posted.id;
      bridge.burn_tx_hash ??= posted.tx_hash;
    }
    Object.assign(bridge, {
      state: "minted",
      amount: bridge.amount ?? mint.burned,
      fee: mint.fee,
      message_nonce: mint.nonce,
      mint_tx_hash: transfer.txHash,
      mint_block_number: transfer.blockNumber,
      mint_log_index: transfer.logIndex,
      error: null,
    });
    await bridges.save(bridge, clock.now());
    await payments.addBridgeFee(paymentId, mint.fee, clock.now());
    await lifecycle.apply(paymentId, "settlement_submitted");
    log.info("bridge minted", { bridge_id: bridge.id, payment_id: paymentId, tx_hash: transfer.txHash, fee: mint.fee });
    return true;
  }

  /**
   * A mint of the address's own burn that no bridge expects: someone else called bridge() there
   * (anyone may) and the message was relayed before this server took the burn as a bridge's. It
   * is recorded as a minted bridge of its own, so the server neither bridges those funds again
   * nor waits for a mint that already landed: the credits on that chain join it (the bridger's
   * openBridges), and the settlement sweeps it. Still not a payment: nothing is credited here.
   */
  async function recordUnexpected(
    transfer: ObservedTransfer,
    mint: OwnMint,
    paymentId: string,
    chainId: number,
  ): Promise<true> {
    const posted = await deps.burns.findByMessageNonce(paymentId, mint.nonce);
    const bridge = await bridges.createMinted({
      id: deps.ids.prefixed("brg"),
      payment_id: paymentId,
      chain_id: chainId,
      amount: mint.burned,
      fee: mint.fee,
      message_nonce: mint.nonce,
      burn_tx_hash: posted?.tx_hash ?? null,
      burn_id: posted?.id ?? null,
      mint_tx_hash: transfer.txHash,
      mint_block_number: transfer.blockNumber,
      mint_log_index: transfer.logIndex,
      now: clock.now(),
    });
    if (posted) await deps.burns.attachBridge(posted.id, bridge.id, clock.now());
    await payments.addBridgeFee(paymentId, mint.fee, clock.now());
    await lifecycle.apply(paymentId, "settlement_submitted");
    log.info("mint of a burn of the deposit address this server did not send; recorded as its bridge", {
      bridge_id: bridge.id,
      payment_id: paymentId,
      tx_hash: transfer.txHash,
      fee: mint.fee,
    });
    return true;
  }

  return { recognise, record };
}
