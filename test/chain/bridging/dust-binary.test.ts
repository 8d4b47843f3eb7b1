/**
 * What the relayer pays for, with the shipped binary (dist/stablegate serve) on two anvils (the
 * settlement chain and a source chain with the local CCTP rig): dust sent to a finished
 * payment's deposit address, on either chain, is credited and costs the relayer nothing; late
 * funds from the sweep floor up are swept; a stranger's bridge() still ends in a confirmed
 * payment. The relayer's nonce on each chain counts what it sent.
 *
 * STABLEGATE_TEST_BINARY=<path of another build's dist/stablegate> runs the same against it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  bridgesOf,
  expectSettledThroughStrangersBurn,
  fundStranger,
  loopsGoRound,
  mineBothUntil,
  paidThenBridgedByStranger,
  payOnSource,
  relayerNonces,
  relayerOf,
  sourceBalance,
  untilStatus,
} from "../../support/bridging.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { usdc } from "../../support/test-chain.ts";

let x: CrossChainStack;
let relayer: Address;
const stranger = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  // Three confirmations on the source chain: the stranger's bridge lands before the server credits
  // the transfer. A short payment window, so a payment can be seen expired.
  x = await startCrossChainStack({
    subprocess: true,
    binary: true,
    paymentWindow: "6s",
    attestationDelayMs: 0,
    source: { confirmations: 3, pollIntervalMs: 200 },
  });
  await fundStranger(x, stranger);
  relayer = await relayerOf(x);
}, 180_000);

afterAll(() => x?.stop());

/** A payment of 1.00 paid on the settlement chain and confirmed. */
async function confirmedPayment() {
  const payment = await x.stack.createPayment({ amount: "1.00" });
  await x.stack.pay(payment.deposit_address, usdc("1.00"));
  await untilStatus(x, payment.id, "confirmed");
  return payment;
}

/** Mines both chains until the payment has `received` credited; returns the payment. */
function untilReceived(paymentId: string, received: string) {
  return mineBothUntil(
    x,
    async () => {
      const payment = await x.stack.getPayment(paymentId);
      if (payment.amount_received !== received) throw new Error(`received ${payment.amount_received}`);
      return payment;
    },
    `${received} USDC credited to ${paymentId}`,
  );
}

const count = (types: string[], type: string) => types.filter((t) => t === type).length;

describe("dust to a deposit address", () => {
  test("of a confirmed payment, on the settlement chain and on the source chain: credited, announced, and no relayer transaction on either chain", async () => {
    const payment = await confirmedPayment();
    const deposit = getAddress(payment.deposit_address);
    const nonces = await relayerNonces(x, relayer);

    await x.stack.pay(deposit, 1n);
    await x.sourceTransfer(deposit, 1n);
    const credited = await untilReceived(payment.id, "1.000002");
    expect(credited.status).toBe("confirmed");
    expect(count(await x.stack.events(payment.id), "payment.funds_received")).toBe(2);
    expect(credited.transfers.map((t: { chain: string; amount: string }) => [t.chain, t.amount]).sort()).toEqual(
      [
        [LOCAL_SOURCE.name, "0.000001"],
        [credited.chain, "0.000001"],
        [credited.chain, "1.00"],
      ].sort(),
    );

    // Credited means both watchers scanned past the dust with its confirmations; the loops that
    // would move it then get a few rounds, with blocks mined on both chains meanwhile.
    await loopsGoRound(x, 4);
    expect(await relayerNonces(x, relayer)).toEqual(nonces);
    expect(await x.stack.usdcBalance(deposit)).toBe(1n);
    expect(await sourceBalance(x, deposit)).toBe(1n);
    expect(await bridgesOf(x, payment.id)).toEqual([]);
  }, 90_000);

  test("of an expired payment, on both chains: credited as underpaid, and no relayer transaction on either chain", async () => {
    const payment = await x.stack.createPayment({ amount: "1.00" });
    const deposit = getAddress(payment.deposit_address);
    await x.stack.waitForStatus(payment.id, "expired", { timeoutMs: 20_000 });
    const nonces = await relayerNonces(x, relayer);

    await x.stack.pay(deposit, 1n);
    await x.sourceTransfer(deposit, 1n);
    const credited = await untilReceived(payment.id, "0.000002");
    expect(credited.status).toBe("underpaid");
    expect(await x.stack.events(payment.id)).toEqual(["payment.expired", "payment.underpaid"]);

    await loopsGoRound(x, 4);
    expect(await relayerNonces(x, relayer)).toEqual(nonces);
    expect(await x.stack.usdcBalance(deposit)).toBe(1n);
    expect(await sourceBalance(x, deposit)).toBe(1n);
    expect(await bridgesOf(x, payment.id)).toEqual([]);
  }, 90_000);
});

describe("late funds from the sweep floor (0.01 USDC on a custom chain) up", () => {
  test("on the settlement chain of a confirmed payment: swept in one relayer transaction, the payout paid", async () => {
    const payment = await confirmedPayment();
    const nonces = await relayerNonces(x, relayer);
    const payoutBefore = await x.stack.usdcBalance(x.stack.payout);

    await x.stack.pay(payment.deposit_address, usdc("0.02"));
    await untilReceived(payment.id, "1.02");
    await mineBothUntil(
      x,
      async () => (await x.stack.usdcBalance(x.stack.payout)) - payoutBefore === usdc("0.02"),
      "the late funds to reach the payout",
    );
    await loopsGoRound(x, 4);
    expect(await relayerNonces(x, relayer)).toEqual({ settlement: nonces.settlement + 1, source: nonces.source });
    expect(await x.stack.usdcBalance(payment.deposit_address)).toBe(0n);
  }, 90_000);

  test("on the source chain of a confirmed payment: bridged, redeemed and swept (one relayer transaction on the source chain, two on the settlement chain)", async () => {
    const payment = await confirmedPayment();
    const nonces = await relayerNonces(x, relayer);
    const payoutBefore = await x.stack.usdcBalance(x.stack.payout);

    await payOnSource(x, payment.deposit_address, usdc("0.02"));
    const [bridge] = await mineBothUntil(
      x,
      async () => {
        const rows = await bridgesOf(x, payment.id);
        return rows.length === 1 && rows[0]!.state === "settled" ? rows : undefined;
      },
      "the late funds' bridge to be settled",
    );
    const paid = (await x.stack.usdcBalance(x.stack.payout)) - payoutBefore;
    expect(paid).toBe(usdc("0.02") - BigInt(bridge!.fee ?? 0));
    await loopsGoRound(x, 4);
    expect(await relayerNonces(x, relayer)).toEqual({ settlement: nonces.settlement + 2, source: nonces.source + 1 });
  }, 90_000);

  // Source dust below the floor is never bridged: the settler must not wait for it.
  test("on the settlement chain, where the source chain's dust waits at the same address: still swept", async () => {
    const payment = await confirmedPayment();
    const deposit = getAddress(payment.deposit_address);
    await x.sourceTransfer(deposit, 1n);
    await untilReceived(payment.id, "1.000001");
    const nonces = await relayerNonces(x, relayer);
    const payoutBefore = await x.stack.usdcBalance(x.stack.payout);

    await x.stack.pay(deposit, usdc("0.02"));
    await untilReceived(payment.id, "1.020001");
    await mineBothUntil(
      x,
      async () => (await x.stack.usdcBalance(x.stack.payout)) - payoutBefore === usdc("0.02"),
      "the late funds to reach the payout",
      15_000,
    );
    await loopsGoRound(x, 4);
    expect(await relayerNonces(x, relayer)).toEqual({ settlement: nonces.settlement + 1, source: nonces.source });
    expect(await sourceBalance(x, deposit)).toBe(1n);
  }, 90_000);
});

// Dust a stranger sent on a source chain is not needed by a payment paid in full on the settlement
// chain: it is neither bridged nor waited for.
test("dust on a source chain to a pending payment then paid in full on the settlement chain: settled without moving the dust", async () => {
  const payment = await x.stack.createPayment({ amount: "1.00" });
  const deposit = getAddress(payment.deposit_address);
  await x.sourceTransfer(deposit, 1n);
  await untilReceived(payment.id, "0.000001");
  const nonces = await relayerNonces(x, relayer);

  await x.stack.pay(deposit, usdc("1.00"));
  await untilStatus(x, payment.id, "confirmed");
  await loopsGoRound(x, 4);
  expect(await relayerNonces(x, relayer)).toEqual({ settlement: nonces.settlement + 1, source: nonces.source });
  expect(await sourceBalance(x, deposit)).toBe(1n);
}, 90_000);

test("a stranger's bridge() posted to the public cross-chain endpoint: the payment is confirmed, the payout paid", async () => {
  const { payment, burnTx, payoutBefore } = await paidThenBridgedByStranger(x, stranger, "12.00");
  const posted = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTx });
  expect(posted.status).toBe(202);
  // Settlement-chain blocks only: the server redeems the burn and sees its mint while the source
  // transfer waits for its confirmations (the order the payment was stranded in).
  await x.stack.mineUntil(
    async () => (await bridgesOf(x, payment.id)).find((b) => b.state === "minted"),
    15_000,
    "the mint of the posted burn to be recorded as the payment's bridge",
  );
  await expectSettledThroughStrangersBurn(x, payment, burnTx, payoutBefore, "12.00");
  const [message] = await x.attested(burnTx);
  expect(await x.messagesReceived(message!.eventNonce)).toHaveLength(1);
}, 90_000);
