/**
 * kill -9 of the server (`bun src/main.ts serve` as a child process) in the middle of a
 * cross-chain redemption: after a restart the burn is still redeemed, and minted exactly once.
 * The settlement anvil stops automining, so a sent receiveMessage sits in the mempool until the
 * test mines it; an RPC tap between the server and that anvil can kill the server the moment a
 * receiveMessage reaches the node, before the server hears back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import { cctpAddresses } from "../../../src/dev/cctp-rig.ts";
import { atNode } from "../../support/chain.ts";
import {
  attestedBurn,
  type BurnDbRow,
  type CrossChainStack,
  LOCAL_SOURCE,
  startCrossChainStack,
} from "../../support/crosschain.ts";
import { api } from "../../support/server.ts";
import type { Stack } from "../../support/stack.ts";
import { usdc } from "../../support/test-chain.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
let stack: Stack;

beforeAll(async () => {
  x = await startCrossChainStack({ subprocess: true, attestationDelayMs: 0, tapRpc: true });
  stack = x.stack;
}, 30_000);

afterAll(async () => {
  await x?.chain.anvil.rpc("evm_setAutomine", [true]).catch(() => {});
  await x?.stop();
});

const automine = (on: boolean) => x.chain.anvil.rpc("evm_setAutomine", [on]);

/** Polls the burn row (100 ms) until `ready` holds for it. */
function waitRow(paymentId: string, ready: (row: BurnDbRow) => boolean, what: string) {
  return waitFor(async () => (await x.burns(paymentId)).find(ready), 15_000, what, 100);
}

/**
 * The restarted server has looked at the burn again (one more attempt on it, or a new state),
 * `attempts` being its count before the restart: only then does "it still waits" mean something.
 */
function lookedAgain(paymentId: string, attempts: number) {
  return waitRow(
    paymentId,
    (r) => Number(r.attempts) > attempts || r.state !== "redeeming",
    "the restarted server to look at the burn",
  );
}

/** Pays the payment cross-chain (fast) with automine off on the settlement chain; returns the burn hash. */
async function burnWithMiningPaused(paymentId: string): Promise<Hex> {
  await automine(false);
  const { burnTxHash, record } = await x.payCrossChain(paymentId, "fast");
  expect(record).toMatchObject({ state: "attesting" });
  return burnTxHash;
}

/** After the restart and mining: redeemed once, minted burn - fee once, the payment confirmed. */
async function expectMintedOnce(paymentId: string, burnTxHash: Hex, amount: string) {
  const row = await x.waitBurn(paymentId, "redeemed", 20_000);
  const [message] = await x.attested(burnTxHash);
  const { amount: burned, feeExecuted, nonce } = attestedBurn(message!.message);
  expect(row.message_nonce).toBe(nonce);
  expect(await x.messagesReceived(nonce)).toHaveLength(1);

  const payment = await stack.getPayment(paymentId);
  expect(await x.mintsTo(payment.deposit_address)).toEqual([burned - feeExecuted]);
  expect(burned - feeExecuted).toBeGreaterThanOrEqual(usdc(amount));
  const confirmed = await stack.waitForStatus(paymentId, "confirmed", { mine: true, timeoutMs: 20_000 });
  expect(usdc(confirmed.amount_received)).toBe(burned - feeExecuted);
  expect(confirmed.cross_chain_transfers).toEqual([expect.objectContaining({ state: "redeemed" })]);
  // Nothing was sent again after the restart that could mint a second time.
  await stack.mine(2);
  expect(await x.messagesReceived(nonce)).toHaveLength(1);
  expect(await x.mintsTo(payment.deposit_address)).toHaveLength(1);
}

describe("kill -9 mid-redemption", () => {
  test("receiveMessage sent, killed, mined while the server is down: redeemed once after the restart", async () => {
    const payment = await stack.createPayment({ amount: "20.00" });
    const burnTxHash = await burnWithMiningPaused(payment.id);
    const sent = await waitRow(
      payment.id,
      (r) => r.state === "redeeming" && r.redeem_tx_hash !== null,
      "the redemption to be sent",
    );
    const pending = await atNode(x.chain.publicClient, sent.redeem_tx_hash as Hex);
    expect(pending.blockNumber).toBeNull(); // in the mempool, not mined

    await stack.crash();
    await automine(true);
    await stack.mine(1);
    expect((await x.chain.publicClient.getTransactionReceipt({ hash: sent.redeem_tx_hash as Hex })).status).toBe(
      "success",
    );

    await stack.restart();
    await expectMintedOnce(payment.id, burnTxHash, "20.00");
    expect((await x.burns(payment.id))[0]!.redeem_tx_hash).toBe(sent.redeem_tx_hash);
  }, 40_000);

  test("receiveMessage sent, killed, still unmined after the restart: the restarted server waits for it", async () => {
    const payment = await stack.createPayment({ amount: "12.34" });
    const burnTxHash = await burnWithMiningPaused(payment.id);
    const sent = await waitRow(
      payment.id,
      (r) => r.state === "redeeming" && r.redeem_tx_hash !== null,
      "the redemption to be sent",
    );

    await stack.crash();
    const attempts = Number((await x.burns(payment.id))[0]!.attempts);
    await stack.restart();
    // The restarted server finds the unmined redemption and waits for it instead of sending another.
    await lookedAgain(payment.id, attempts);
    expect((await x.burns(payment.id))[0]).toMatchObject({ state: "redeeming", redeem_tx_hash: sent.redeem_tx_hash });
    await automine(true);
    await stack.mine(1);
    await expectMintedOnce(payment.id, burnTxHash, "12.34");
  }, 40_000);

  test("killed as soon as the burn is attested (redemption maybe sent, maybe not recorded): minted once", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const burnTxHash = await burnWithMiningPaused(payment.id);
    await waitRow(payment.id, (r) => r.state === "redeeming", "the burn to reach redeeming");

    await stack.crash();
    await stack.restart();
    // Whatever the killed server had sent is still in the mempool; the new one may send again.
    await waitRow(payment.id, (r) => r.redeem_tx_hash !== null, "a redemption after the restart");
    await automine(true);
    await stack.mine(1);
    await expectMintedOnce(payment.id, burnTxHash, "5.00");
  }, 40_000);
});

describe("kill -9 right after sending receiveMessage", () => {
  test("the transaction was recorded before it was sent: the restarted server resends it, minted exactly once", async () => {
    const payment = await stack.createPayment({ amount: "8.00" });
    const killedOnSend = x.tap!.onNextSendTo(cctpAddresses.messageTransmitter, () => stack.crash());
    const burnTxHash = await burnWithMiningPaused(payment.id);
    const lost = await killedOnSend;
    // The node has the redemption, and the server had written it down before sending it.
    expect((await x.chain.publicClient.getTransaction({ hash: lost })).blockNumber).toBeNull();
    expect((await x.burns(payment.id))[0]).toMatchObject({ state: "redeeming", redeem_tx_hash: lost });

    const attempts = Number((await x.burns(payment.id))[0]!.attempts);
    await stack.restart();
    await lookedAgain(payment.id, attempts);
    // Still the same transaction: nothing new was signed while it waits in the mempool.
    expect((await x.burns(payment.id))[0]).toMatchObject({ state: "redeeming", redeem_tx_hash: lost });
    await automine(true);
    await stack.mine(1);
    expect((await x.chain.publicClient.getTransactionReceipt({ hash: lost })).status).toBe("success");
    await expectMintedOnce(payment.id, burnTxHash, "8.00");
  }, 40_000);

  test("a redemption dropped from the mempool is sent again, the same signed bytes, and minted once", async () => {
    const payment = await stack.createPayment({ amount: "6.00" });
    const killedOnSend = x.tap!.onNextSendTo(cctpAddresses.messageTransmitter, () => stack.crash());
    const burnTxHash = await burnWithMiningPaused(payment.id);
    const lost = await killedOnSend;

    // The pending transaction never makes it (evicted, or the node restarted without it).
    await x.chain.anvil.rpc("anvil_dropTransaction", [lost]);
    await stack.restart();
    // Sent again unchanged, so the relayer's nonce is used and nothing queues behind a gap.
    await waitFor(
      async () => (await x.chain.publicClient.getTransaction({ hash: lost }).catch(() => null)) !== null,
      15_000,
      "the redemption to be sent again",
    );
    expect((await x.burns(payment.id))[0]).toMatchObject({ redeem_tx_hash: lost });
    await automine(true);
    await stack.mine(1);
    await expectMintedOnce(payment.id, burnTxHash, "6.00");
  }, 40_000);
});

describe("the quote endpoint of a running server", () => {
  // Against the subprocess: a rejection that escaped the error handler would show as Bun's own
  // 500 page here (it did, before the route awaited the quote).
  test("answers 503 with Retry-After while the attestation service is down", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    x.local.attestation.setMode("down");
    try {
      const res = await api(
        stack.url,
        null,
      )(`/api/public/payments/${payment.id}/cross-chain?chain=${LOCAL_SOURCE.name}`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBeTruthy();
      expect((res.json as { error: string }).error).toMatch(/unavailable/);
    } finally {
      x.local.attestation.setMode("normal");
    }
  });
});
