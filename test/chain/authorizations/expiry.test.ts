/**
 * An authorization that expires while the relayer's transaction waits in the mempool: mined after
 * its validBefore, transferWithAuthorization can only revert, so the relayer must not bid for it
 * (a replacement with higher fees) nor leave it to be mined. Its nonce is taken by a plain
 * self-transfer instead, which frees the relayer's later nonces and reverts nothing. Its own
 * chain: the test moves the chain's time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Hex } from "viem";
import { eip3009Abi } from "../../../src/chain/authorizations/token.ts";
import { atNode } from "../../support/chain.ts";
import { gaslessApi, gaslessPayer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain, env: { STABLEGATE_SWEEP_FLOOR: "1.00" } });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

type Row = { status: string; tx_hashes: string | null; relayer_nonce: number | null; failure_code: string | null };

describe("expires in the mempool", () => {
  test("the relayer's nonce goes to a self-transfer, no transferWithAuthorization is mined to revert", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const offer = await api.offer(payment.id);
    const validBefore = String(Math.floor(stack.clock.now() / 1000) + 45);
    const signed = await signOffer(offer, payer.key, { validBefore });
    await chain.anvil.rpc("evm_setAutomine", [false]);
    let hashes: Hex[];
    let record: Row;
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      const id = res.json.authorization.id;
      const row = async () =>
        (
          await stack.sql<Row>(
            "SELECT status, tx_hashes, relayer_nonce, failure_code FROM authorizations WHERE id = ?",
            id,
          )
        )[0]!;
      const first = await stack.waitFor(async () => ((await row()).tx_hashes ? row() : undefined));
      const [original] = JSON.parse(first.tx_hashes!) as Hex[];
      await atNode(chain.publicClient, original!);
      // Past its validBefore and past the stuck time, by the server's clock and the chain's alike.
      stack.clock.advance(120_000);
      await chain.anvil.rpc("evm_increaseTime", [120]);
      const replaced = await stack.waitFor(async () => {
        const now = await row();
        return (JSON.parse(now.tx_hashes!) as Hex[]).length >= 2 ? now : undefined;
      });
      expect(replaced.relayer_nonce).toBe(first.relayer_nonce);
      hashes = JSON.parse(replaced.tx_hashes!) as Hex[];
      const newest = await atNode(chain.publicClient, hashes.at(-1)!);
      // Not another transferWithAuthorization: a transaction that moves nothing, to the relayer itself.
      expect(getAddress(newest.to!)).toBe(getAddress(newest.from));
      expect(newest.value).toBe(0n);
      await chain.mine(1);
      record = await stack.waitFor(async () => {
        const now = await row();
        return now.status === "failed" ? now : undefined;
      });
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    expect(record.failure_code).toBe("expired");
    const view = await stack.publicPayment(payment.id);
    expect(view.authorizations[0]).toMatchObject({ status: "failed" });
    expect(view.authorizations[0].error).toMatch(/^This authorization expired at .*; sign a new one$/);
    // What was mined at the relayer's nonce succeeded and moved no USDC.
    const mined = await stack.waitFor(async () => {
      for (const hash of hashes) {
        const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch(() => null);
        if (receipt) return receipt;
      }
      return undefined;
    });
    expect(mined.status).toBe("success");
    expect(mined.logs).toEqual([]);
    expect((await chain.publicClient.getTransaction({ hash: mined.transactionHash })).input).toBe("0x");
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(0);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));
  }, 60_000);
});
