/**
 * Anyone may call bridge() for a deposit address on a source chain: it can only burn the
 * address's USDC to the same address on the settlement chain. A stranger who does so before the
 * server (and posts the burn to the public endpoint, or relays the mint too) must not strand the
 * payment: the server takes the burn as its bridge's and the payment ends confirmed with the
 * payout paid. Two anvils, the local CCTP rig, the real contracts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWalletClient, getAddress, type Hex, http, parseEventLogs, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { type TermsRow, termsOf } from "../../src/chain/deposit-terms.ts";
import { depositFactoryV2Abi, depositTermsArg, factoryV2Address } from "../../src/chain/deposit-v2.ts";
import { messageTransmitterAbi } from "../../src/crosschain/abi.ts";
import { cctpAddresses } from "../../src/dev/cctp-rig.ts";
import { bridgedOnSource, bridgesOf, untilStatus } from "../support/bridging.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../support/crosschain.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

let x: CrossChainStack;
const stranger = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  // Three confirmations on the source chain: the stranger's bridge lands before the server credits the transfer.
  x = await startCrossChainStack({ attestationDelayMs: 0, source: { confirmations: 3 } });
  for (const rpc of [x.local.source.rpcUrl, x.chain.rpcUrl])
    await fetch(rpc, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "anvil_setBalance",
        params: [stranger.address, toHex(10n ** 18n)],
      }),
    });
}, 60_000);

afterAll(() => x?.stop());

const termsRow = (paymentId: string) => x.stack.sql<TermsRow>("SELECT * FROM payments WHERE id = ?", paymentId)[0]!;

/** The stranger calls bridge() for the deposit address on the source chain, standard finality, no fee. */
async function strangerBridges(paymentId: string): Promise<Hex> {
  const wallet = createWalletClient({
    chain: { ...foundry, id: LOCAL_SOURCE.chainId },
    transport: http(x.local.source.rpcUrl),
    account: stranger,
  });
  const hash = await wallet.writeContract({
    address: factoryV2Address,
    abi: depositFactoryV2Abi,
    functionName: "bridge",
    args: [depositTermsArg(termsOf(termsRow(paymentId))), x.source.usdc, 0n, 2000],
  });
  const receipt = await x.source.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  expect(receipt.status).toBe("success");
  return hash;
}

/** A payment paid on the source chain and bridged there by the stranger before the server credits it. */
async function paidThenBridgedByStranger(amount: string) {
  const payment = await x.stack.createPayment({ amount });
  await x.sourceTransfer(getAddress(payment.deposit_address), usdc(amount));
  const burnTx = await strangerBridges(payment.id);
  const payoutBefore = await x.stack.usdcBalance(x.stack.payout);
  return { payment, burnTx, payoutBefore };
}

/**
 * Confirmed with the payout paid less the bridge fee, the stranger's burn the only one, carried
 * by the payment's one bridge (which names the burn when the server learned its hash).
 */
async function expectSettledThroughStrangersBurn(
  payment: { id: string },
  burnTx: Hex,
  payoutBefore: bigint,
  amount: string,
  bridgeNames: Hex | null = burnTx,
) {
  const confirmed = await untilStatus(x, payment.id, "confirmed", 15_000).catch((e) => {
    console.log(
      JSON.stringify(
        x.stack
          .logs()
          .filter((l) => l.level !== "debug")
          .slice(-40),
        null,
        0,
      ),
    );
    console.log(
      JSON.stringify(
        x.stack.sql(
          "SELECT id, state, amount, tx_hash, bridge_id, error, message_nonce, redeem_tx_hash FROM crosschain_burns",
        ),
      ),
    );
    console.log(
      JSON.stringify(
        x.stack.sql("SELECT id, state, amount, burn_tx_hash, burn_id, message_nonce, mint_tx_hash, error FROM bridges"),
      ),
    );
    throw e;
  });
  expect(confirmed.amount_received).toBe(amount);
  const paid = (await x.stack.usdcBalance(x.stack.payout)) - payoutBefore;
  expect(paid).toBe(usdc(amount) - usdc(confirmed.bridge_fee));
  expect((await bridgedOnSource(x, payment.id)).map((e) => e.transactionHash)).toEqual([burnTx]);
  expect(bridgesOf(x, payment.id)).toEqual([
    expect.objectContaining({ state: "settled", burn_tx_hash: bridgeNames, nonce: null }),
  ]);
}

describe("a stranger's bridge() of a deposit address", () => {
  test("posted to the public cross-chain endpoint: the server takes the burn, redeems it once, and the payment is confirmed", async () => {
    const { payment, burnTx, payoutBefore } = await paidThenBridgedByStranger("12.00");
    const posted = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTx });
    expect(posted.status).toBe(202);
    await expectSettledThroughStrangersBurn(payment, burnTx, payoutBefore, "12.00");
    // Redeemed once: one message received on the settlement chain for the payment's burn.
    const [message] = await x.attested(burnTx);
    expect(await x.messagesReceived(message!.eventNonce)).toHaveLength(1);
  }, 90_000);

  test("with the mint relayed by the stranger before the server credits the transfer: the mint is the payment's bridge, and the payment is confirmed", async () => {
    const { payment, burnTx, payoutBefore } = await paidThenBridgedByStranger("7.00");
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
      () => bridgesOf(x, payment.id).find((b) => b.state === "minted"),
      15_000,
      "the mint to be recorded as the payment's bridge",
    );
    expect(minted).toMatchObject({ mint_tx_hash: hash, burn_tx_hash: null });
    expect(
      x.stack.sql("SELECT tx_hash FROM transfers WHERE payment_id = ? AND credited_at IS NOT NULL", payment.id),
    ).toEqual([]);
    // The server never learned the burn's hash: the mint is all it saw of it.
    await expectSettledThroughStrangersBurn(payment, burnTx, payoutBefore, "7.00", null);
    expect(bridgesOf(x, payment.id)[0]!.mint_tx_hash).toBe(hash);
  }, 90_000);
});
