/**
 * A reorg takes away the block with the relayer's mined transferWithAuthorization (evm_snapshot /
 * evm_revert on a real anvil: the transaction is gone from chain and mempool alike). The record
 * must not go on saying `succeeded` for a transfer that no longer happened, and the relayer's
 * nonce it used must be filled again, or every later relayer transaction waits behind the gap.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Hex } from "viem";
import { eip3009Abi } from "../../../src/chain/authorizations/token.ts";
import { gaslessApi, gaslessPayer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain, confirmations: 3, env: { STABLEGATE_SWEEP_FLOOR: "1.00" } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

type Row = { status: string; tx_hash: Hex | null; relayer_nonce: number | null };

describe("reorg", () => {
  test("a mined submission a reorg took away is sent again, the same transaction; the relayer goes on", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const signed = await signOffer(await api.offer(payment.id), payer.key);
    const snapshot = await chain.anvil.rpc("evm_snapshot", []);
    const res = await api.post(payment.id, signed);
    expect(res.status).toBe(202);
    const id = res.json.authorization.id;
    const row = async () =>
      (await stack.sql<Row>("SELECT status, tx_hash, relayer_nonce FROM authorizations WHERE id = ?", id))[0]!;
    const mined = await stack.waitFor(async () => ((await row()).status === "succeeded" ? row() : undefined));
    await chain.anvil.rpc("evm_revert", [snapshot]);
    expect(await chain.publicClient.getTransactionReceipt({ hash: mined.tx_hash! }).catch(() => null)).toBeNull();
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));

    // A plain payment meanwhile: its settlement is the relayer's next transaction, after the one taken away.
    const plain = await stack.createPayment({ amount: "5.00" });
    await stack.pay(plain.deposit_address, usdc("5.00"));
    await stack.waitForStatus(plain.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });

    const done = await row();
    expect(done).toMatchObject({ status: "succeeded", tx_hash: mined.tx_hash, relayer_nonce: mined.relayer_nonce });
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address, to: getAddress(payment.deposit_address) },
      fromBlock: 0n,
    });
    expect(transfers.map((t) => t.transactionHash)).toEqual([mined.tx_hash!]);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("40.00"));
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("15.00"));
  }, 90_000);
});
