/**
 * kill -9 of the server (`bun src/main.ts serve` as a child process) at each step of bridging a
 * source-chain payment: after the restart the payment reaches confirmed with exactly one burn
 * on the source chain, one mint and one settlement on the settlement chain. RPC taps between
 * the server and each anvil kill it the moment a transaction is sent, before or after the node
 * has it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Address } from "viem";
import { factoryV3Address } from "../../../src/chain/deposit-v3.ts";
import { cctpAddresses } from "../../../src/dev/cctp-rig.ts";
import {
  bridgedOnSource,
  bridgesOf,
  mineBothUntil,
  payOnSource,
  untilBridge,
  untilStatus,
} from "../../support/bridging.ts";
import { type CrossChainStack, startCrossChainStack } from "../../support/crosschain.ts";
import { type RpcTap, startRpcTap } from "../../support/rpc-tap.ts";
import type { Stack } from "../../support/stack.ts";
import { usdc } from "../../support/test-chain.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
let stack: Stack;
let sourceTap: RpcTap;

beforeAll(async () => {
  x = await startCrossChainStack({ subprocess: true, attestationDelayMs: 0, tapRpc: true });
  stack = x.stack;
  // The server reaches the source chain through a tap too.
  sourceTap = startRpcTap(x.local.source.rpcUrl);
  await stack.restart(x.sourceEnv({ rpcUrl: sourceTap.url }));
}, 60_000);

afterAll(async () => {
  x?.local.attestation.setMode("normal");
  await x?.chain.anvil.rpc("evm_setAutomine", [true]).catch(() => {});
  sourceTap?.stop();
  await x?.stop();
});

/** After the restart: confirmed, one burn, one mint, one settlement, the payout paid less the fee. */
async function expectExactlyOnce(payment: { id: string; deposit_address: Address }, amount: string) {
  const confirmed = await untilStatus(x, payment.id, "confirmed", 40_000);
  const burns = await bridgedOnSource(x, payment.id);
  expect(burns).toHaveLength(1);
  expect(burns[0]!.args.amount).toBe(usdc(amount));
  const fee = usdc(confirmed.bridge_fee);
  expect(fee).toBeGreaterThan(0n);
  expect(await x.mintsTo(payment.deposit_address)).toEqual([usdc(amount) - fee]);
  expect(await stack.sql("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "mined" },
  ]);
  expect(confirmed.amount_received).toBe(amount);
  expect(await bridgesOf(x, payment.id)).toEqual([expect.objectContaining({ state: "settled" })]);
  // The payout has it, less the bridge fee: every payment of this stack pays the same payout.
  const [{ settled }] = (await stack.sql<{ settled: number }>(
    "SELECT amount_settled - fee_settled AS settled FROM payments WHERE id = ?",
    payment.id,
  )) as [{ settled: number }];
  expect(BigInt(settled)).toBe(usdc(amount) - fee);
  const [{ total }] = (await stack.sql<{ total: number }>(
    "SELECT sum(amount_settled - fee_settled) AS total FROM payments",
  )) as [{ total: number }];
  expect(await stack.usdcBalance(stack.payout)).toBe(BigInt(total));
  // Nothing was sent again after the restart that could burn or mint a second time.
  await mineBothUntil(
    x,
    async () => (await stack.sql("SELECT 1 FROM bridges WHERE state != 'settled'")).length === 0,
    "all settled",
  );
  expect(await x.mintsTo(payment.deposit_address)).toHaveLength(1);
}

describe("kill -9 while bridging", () => {
  test("the bridge transaction stored, killed before it reached the node: the same one is sent after the restart", async () => {
    const payment = await stack.createPayment({ amount: "7.00" });
    const withheld = sourceTap.withholdNextSendTo(factoryV3Address, () => stack.crash());
    await payOnSource(x, payment.deposit_address, usdc("7.00"));
    const hash = await withheld;
    expect(await bridgesOf(x, payment.id)).toEqual([expect.objectContaining({ state: "credited", tx_hash: hash })]);
    expect(await x.source.publicClient.getTransaction({ hash }).catch(() => null)).toBeNull();

    await stack.restart();
    await untilBridge(x, payment.id, (b) => b.state !== "credited", "the stored bridge transaction to be mined");
    expect((await bridgesOf(x, payment.id))[0]!.burn_tx_hash).toBe(hash);
    await expectExactlyOnce(payment, "7.00");
  }, 90_000);

  test("the bridge transaction sent, killed before the server heard back: followed to its burn after the restart", async () => {
    const payment = await stack.createPayment({ amount: "6.00" });
    const killed = sourceTap.onNextSendTo(factoryV3Address, () => stack.crash());
    await payOnSource(x, payment.deposit_address, usdc("6.00"));
    const hash = await killed;

    await stack.restart();
    await expectExactlyOnce(payment, "6.00");
    expect((await bridgesOf(x, payment.id))[0]!.burn_tx_hash).toBe(hash);
  }, 90_000);

  test("killed once the burn is recorded (attestation service down): attested and minted after the restart", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    await payOnSource(x, payment.deposit_address, usdc("5.00"));
    // Sent (the fee was quoted); mined at once, but not burned before a block on top.
    await waitFor(
      async () => (await bridgesOf(x, payment.id))[0]?.tx_hash,
      20_000,
      "the bridge transaction to be sent",
    );
    x.local.attestation.setMode("down");
    try {
      await untilBridge(x, payment.id, (b) => b.state === "burned", "the burn to be recorded");
      await stack.crash();
    } finally {
      x.local.attestation.setMode("normal");
    }
    await stack.restart();
    await expectExactlyOnce(payment, "5.00");
  }, 90_000);

  test("killed once the burn is attested (settlement chain not mining): minted once after the restart", async () => {
    const payment = await stack.createPayment({ amount: "4.00" });
    await payOnSource(x, payment.deposit_address, usdc("4.00"));
    await waitFor(
      async () => {
        if ((await bridgesOf(x, payment.id))[0]?.state === "burned")
          await x.chain.anvil.rpc("evm_setAutomine", [false]);
        else await x.mineSource(1);
        return (await bridgesOf(x, payment.id))[0]?.state === "attested";
      },
      20_000,
      "the burn to be attested",
      50,
    );
    await stack.crash();
    await x.chain.anvil.rpc("evm_setAutomine", [true]);
    await stack.restart();
    await expectExactlyOnce(payment, "4.00");
  }, 90_000);

  test("killed right after receiveMessage reached the node: the recorded redemption is followed, minted once", async () => {
    const payment = await stack.createPayment({ amount: "3.00" });
    let killed = false;
    void x.tap!.onNextSendTo(cctpAddresses.messageTransmitter, () => stack.crash()).then(() => (killed = true));
    await payOnSource(x, payment.deposit_address, usdc("3.00"));
    await mineBothUntil(x, () => killed, "a redemption sent, and the server killed");
    await stack.restart();
    await expectExactlyOnce(payment, "3.00");
  }, 90_000);
});
