/**
 * Anyone may call bridge() for a deposit address on a source chain: it can only burn the
 * address's USDC to the same address on the settlement chain. A stranger who does so before the
 * server (and posts the burn to the public endpoint, or relays the mint too) must not strand the
 * payment: the server takes the burn as its bridge's and the payment ends confirmed with the
 * payout paid. Two anvils, the local CCTP rig, the real contracts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWalletClient, http, parseEventLogs } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { messageTransmitterAbi } from "../../../src/chain/cctp-abi.ts";
import { cctpAddresses } from "../../../src/dev/cctp-rig.ts";
import {
  bridgesOf,
  expectSettledThroughStrangersBurn,
  fundStranger,
  paidThenBridgedByStranger,
} from "../../support/bridging.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
const stranger = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  // Three confirmations on the source chain: the stranger's bridge lands before the server credits the transfer.
  x = await startCrossChainStack({ attestationDelayMs: 0, source: { confirmations: 3 } });
  await fundStranger(x, stranger);
}, 60_000);

afterAll(() => x?.stop());

describe("a stranger's bridge() of a deposit address", () => {
  test("posted to the public cross-chain endpoint: the server takes the burn, redeems it once, and the payment is confirmed", async () => {
    const { payment, burnTx, payoutBefore } = await paidThenBridgedByStranger(x, stranger, "12.00");
    const posted = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTx });
    expect(posted.status).toBe(202);
    await expectSettledThroughStrangersBurn(x, payment, burnTx, payoutBefore, "12.00");
    // Redeemed once: one message received on the settlement chain for the payment's burn.
    const [message] = await x.attested(burnTx);
    expect(await x.messagesReceived(message!.eventNonce)).toHaveLength(1);
  }, 90_000);

  test("with the mint relayed by the stranger before the server credits the transfer: the mint is the payment's bridge, and the payment is confirmed", async () => {
    const { payment, burnTx, payoutBefore } = await paidThenBridgedByStranger(x, stranger, "7.00");
    // No source block is mined meanwhile, so the transfer is not yet credited when the mint lands.
    const [attested] = await waitFor(
      async () => {
        const messages = await x.attested(burnTx);
        return messages[0]?.status === "complete" ? messages : undefined;
      },
      10_000,
      "the stranger's burn to be attested",
    );
    const relay = createWalletClient({ chain: foundry, transport: http(x.chain.rpcUrl), account: stranger });
    const hash = await relay.writeContract({
      address: cctpAddresses.messageTransmitter,
      abi: messageTransmitterAbi,
      functionName: "receiveMessage",
      args: [attested!.message, attested!.attestation!],
    });
    const receipt = await x.chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    expect(
      parseEventLogs({ abi: messageTransmitterAbi, eventName: "MessageReceived", logs: receipt.logs }),
    ).toHaveLength(1);
    // Settlement-chain blocks only: the mint is seen while the source transfer waits for its confirmations.
    const minted = await x.stack.mineUntil(
      async () => (await bridgesOf(x, payment.id)).find((b) => b.state === "minted"),
      15_000,
      "the mint to be recorded as the payment's bridge",
    );
    expect(minted).toMatchObject({ mint_tx_hash: hash, burn_tx_hash: null });
    expect(
      await x.stack.sql("SELECT tx_hash FROM transfers WHERE payment_id = ? AND credited_at IS NOT NULL", payment.id),
    ).toEqual([]);
    // The server never learned the burn's hash: the mint is all it saw of it.
    await expectSettledThroughStrangersBurn(x, payment, burnTx, payoutBefore, "7.00", null);
    expect((await bridgesOf(x, payment.id))[0]!.mint_tx_hash).toBe(hash);
  }, 90_000);
});
