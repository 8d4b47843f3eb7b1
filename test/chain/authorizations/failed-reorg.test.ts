/**
 * A reorg takes away the block with the relayer's mined transferWithAuthorization of a record that
 * then ended `failed` (it reverted: the payer's funds had moved first). evm_snapshot / evm_revert
 * on a real anvil: the transaction is gone from chain and mempool alike, and the payer holds the
 * funds again. The relayer's nonce it used must be filled again, or every later relayer
 * transaction waits behind the gap; and not with the authorization, which could now move the
 * payer's money on a record that told them it failed: with a transfer of nothing to itself. And a
 * failed record's mined self-transfer (an authorization that expired in the mempool) taken away
 * the same way is sent again: the same stored transaction, nothing signed anew.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Hex } from "viem";
import { eip3009Abi } from "../../../src/chain/authorizations/token.ts";
import { atNode } from "../../support/chain.ts";
import {
  gaslessApi,
  gaslessPayer,
  relayerTransaction,
  settledToPayout,
  signOffer,
  spendFirst,
} from "../../support/gasless.ts";
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

type Row = {
  status: string;
  failure_code: string | null;
  tx_hashes: string | null;
  relayer_nonce: number | null;
};

describe("reorg of a failed record's mined transaction", () => {
  test("the relayer's nonce is filled by a self-transfer, never the authorization; the relayer goes on", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const signed = await signOffer(await api.offer(payment.id), payer.key);
    await chain.setBalance(payer.address, 10n ** 18n);
    const snapshot = await chain.anvil.rpc("evm_snapshot", []);
    let id: string;
    let ours: Hex;
    await chain.anvil.rpc("evm_setAutomine", [false]);
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      id = res.json.authorization.id;
      ours = await relayerTransaction(stack, chain, id);
      // The payer's funds leave first, in the same block: the relayer's call reverts.
      await spendFirst(chain, payer.key, usdc("50.00"));
      await chain.mine(1);
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    expect((await chain.publicClient.getTransactionReceipt({ hash: ours })).status).toBe("reverted");
    const row = async () =>
      (
        await stack.sql<Row>(
          "SELECT status, failure_code, tx_hashes, relayer_nonce FROM authorizations WHERE id = ?",
          id,
        )
      )[0]!;
    const failed = await stack.waitFor(async () => ((await row()).status === "failed" ? row() : undefined));
    expect(failed.failure_code).toBe("insufficient_funds");

    await chain.anvil.rpc("evm_revert", [snapshot]);
    expect(await chain.publicClient.getTransactionReceipt({ hash: ours }).catch(() => null)).toBeNull();
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));

    // A plain payment meanwhile: its settlement is the relayer's next transaction, after the one taken away.
    const plain = await stack.createPayment({ amount: "5.00" });
    await stack.pay(plain.deposit_address, usdc("5.00"));
    await stack.waitForStatus(plain.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    expect(await settledToPayout(stack, plain.id)).toBe(usdc("5.00"));

    // The record still says failed, and what took its nonce moved nothing.
    const done = await row();
    expect(done).toMatchObject({ status: "failed", failure_code: "insufficient_funds" });
    const hashes = JSON.parse(done.tx_hashes!) as Hex[];
    const filled = await stack.waitFor(async () => {
      for (const hash of hashes) {
        const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch(() => null);
        if (receipt) return receipt;
      }
      return undefined;
    });
    const tx = await chain.publicClient.getTransaction({ hash: filled.transactionHash });
    expect(tx.nonce).toBe(done.relayer_nonce!);
    expect(getAddress(tx.to!)).toBe(getAddress(tx.from));
    expect(tx.value).toBe(0n);
    expect(tx.input).toBe("0x");
    await stack.mine(3);
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(0);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));
    expect((await stack.getPayment(payment.id)).status).toBe("pending");
  }, 90_000);

  test("a mined self-transfer taken away is sent again, the same transaction; the relayer goes on", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const validBefore = String(Math.floor(stack.clock.now() / 1000) + 45);
    const signed = await signOffer(await api.offer(payment.id), payer.key, { validBefore });
    const snapshot = await chain.anvil.rpc("evm_snapshot", []);
    let id: string;
    let self: Hex;
    await chain.anvil.rpc("evm_setAutomine", [false]);
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      id = res.json.authorization.id;
      const hashesOf = async () => {
        const [row] = await stack.sql<{ tx_hashes: string | null }>(
          "SELECT tx_hashes FROM authorizations WHERE id = ?",
          id,
        );
        return row?.tx_hashes ? (JSON.parse(row.tx_hashes) as Hex[]) : [];
      };
      const [original] = await stack.waitFor(async () => ((await hashesOf()).length > 0 ? hashesOf() : undefined));
      await atNode(chain.publicClient, original!);
      // Past its validBefore and past the stuck time, by the server's clock and the chain's alike.
      stack.clock.advance(120_000);
      await chain.anvil.rpc("evm_increaseTime", [120]);
      self = (await stack.waitFor(async () => ((await hashesOf()).length >= 2 ? hashesOf() : undefined))).at(-1)!;
      await atNode(chain.publicClient, self);
      await chain.mine(1);
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    const row = async () =>
      (
        await stack.sql<Row>(
          "SELECT status, failure_code, tx_hashes, relayer_nonce FROM authorizations WHERE id = ?",
          id,
        )
      )[0]!;
    const failed = await stack.waitFor(async () => ((await row()).status === "failed" ? row() : undefined));
    expect(failed.failure_code).toBe("expired");
    expect((await chain.publicClient.getTransactionReceipt({ hash: self })).status).toBe("success");

    await chain.anvil.rpc("evm_revert", [snapshot]);
    // The revert takes back the chain's 120 s too; the server's clock keeps them. Put the chain's
    // clock level with it again, for what follows and for the file's other test in a random order.
    await chain.anvil.rpc("evm_increaseTime", [120]);
    expect(await chain.publicClient.getTransactionReceipt({ hash: self }).catch(() => null)).toBeNull();

    const plain = await stack.createPayment({ amount: "5.00" });
    await stack.pay(plain.deposit_address, usdc("5.00"));
    await stack.waitForStatus(plain.id, "confirmed", { mine: true, timeoutMs: 30_000 });

    const done = await row();
    expect(done).toMatchObject({ status: "failed", failure_code: "expired", tx_hashes: failed.tx_hashes });
    const again = await chain.publicClient.getTransactionReceipt({ hash: self });
    expect(again.status).toBe("success");
    expect((await chain.publicClient.getTransaction({ hash: self })).nonce).toBe(done.relayer_nonce!);
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(0);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("50.00"));
  }, 90_000);
});
