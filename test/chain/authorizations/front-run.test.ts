/**
 * A front-run: a stranger submits the same signed authorization before the relayer's transaction
 * is mined. The payment still completes, once; the record shows the stranger's transaction.
 * Automine is off, so the test decides what lands in which block (anvil orders by tip). And one
 * stuck in the mempool is replaced with higher fees on its nonce, once, and mined once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Hex, parseGwei } from "viem";
import { eip3009Abi, transferCall } from "../../../src/chain/authorizations/token.ts";
import { atNode, walletClientFor } from "../../support/chain.ts";
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
  stack = await startStack({ chain, env: { STABLEGATE_SWEEP_FLOOR: "1.00" } });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

describe("front-run", () => {
  test("a stranger's submission of the same authorization completes the payment once", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const stranger = walletClientFor(chain.rpcUrl, await chain.fundedKey());
    const payment = await stack.createPayment({ amount: "20.00" });
    const api = gaslessApi(stack.url);
    const signed = await signOffer(await api.offer(payment.id), payer.key);
    await chain.anvil.rpc("evm_setAutomine", [false]);
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      const id = res.json.authorization.id;
      const ours = await relayerTransaction(stack, chain, id);
      const a = signed.authorization;
      const theirs = await stranger.writeContract({
        ...transferCall(
          chain.usdc,
          {
            from: a.from,
            to: a.to,
            value: BigInt(a.value),
            validAfter: BigInt(a.validAfter),
            validBefore: BigInt(a.validBefore),
            nonce: a.nonce,
          },
          signed.signature,
        ),
        gas: 150_000n,
        maxFeePerGas: parseGwei("500"),
        maxPriorityFeePerGas: parseGwei("400"),
      });
      await chain.mine(1);
      const mined = await chain.publicClient.getTransactionReceipt({ hash: theirs });
      expect(mined.status).toBe("success");
      expect((await chain.publicClient.getTransactionReceipt({ hash: ours })).status).toBe("reverted");

      const record = await stack.waitFor(async () => {
        const view = await stack.publicPayment(payment.id);
        return view.authorizations[0]?.status === "succeeded" ? view.authorizations[0] : undefined;
      });
      expect(record).toMatchObject({ id, tx_hash: theirs, error: null });
      await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
      const transfers = await chain.publicClient.getContractEvents({
        address: chain.usdc,
        abi: eip3009Abi,
        eventName: "Transfer",
        args: { from: payer.address, to: getAddress(payment.deposit_address) },
        fromBlock: 0n,
      });
      expect(transfers.map((t) => t.transactionHash)).toEqual([theirs]);
      expect(await chain.usdcBalance(payer.address)).toBe(usdc("30.00"));
      expect(await settledToPayout(stack, payment.id)).toBe(usdc("20.00"));
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
  }, 60_000);
});

describe("funds gone", () => {
  test("the payer's funds moved before the relayer's transaction was mined: failed, in words without the balance", async () => {
    const payer = await gaslessPayer(chain, usdc("12.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const signed = await signOffer(await api.offer(payment.id), payer.key);
    await chain.setBalance(payer.address, 10n ** 18n);
    await chain.anvil.rpc("evm_setAutomine", [false]);
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      const _ours = await relayerTransaction(stack, chain, res.json.authorization.id);
      await spendFirst(chain, payer.key, usdc("12.00"));
      await chain.mine(1);
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    const failed = await stack.waitFor(async () => {
      const view = await stack.publicPayment(payment.id);
      return view.authorizations[0]?.status === "failed" ? view.authorizations[0] : undefined;
    });
    expect(failed.error).toBe("The wallet no longer holds the 10.00 USDC this payment needs; sign again once it does");
    expect((await stack.getPayment(payment.id)).status).toBe("pending");
  }, 60_000);
});

describe("stuck", () => {
  test("an unmined submission is replaced with higher fees on the same nonce; one transfer", async () => {
    const payer = await gaslessPayer(chain, usdc("50.00"));
    const payment = await stack.createPayment({ amount: "10.00" });
    const api = gaslessApi(stack.url);
    const signed = await signOffer(await api.offer(payment.id), payer.key);
    await chain.anvil.rpc("evm_setAutomine", [false]);
    type Row = { tx_hashes: string | null; relayer_nonce: number | null; raw_tx: Hex | null };
    let advancedChain = false;
    try {
      const res = await api.post(payment.id, signed);
      expect(res.status).toBe(202);
      const id = res.json.authorization.id;
      const row = async () =>
        (await stack.sql<Row>("SELECT tx_hashes, relayer_nonce, raw_tx FROM authorizations WHERE id = ?", id))[0]!;
      const first = await stack.waitFor(async () => ((await row()).tx_hashes ? row() : undefined));
      const [original] = JSON.parse(first.tx_hashes!) as Hex[];
      await atNode(chain.publicClient, original!);
      // Past the settler's stuck time (at least 30 s) by the server's clock; the chain's clock is
      // moved as far below, so the file's other tests, in any order, find the two agreeing.
      stack.clock.advance(120_000);
      advancedChain = true;
      const replaced = await stack.waitFor(async () => {
        const now = await row();
        return (JSON.parse(now.tx_hashes!) as Hex[]).length === 2 ? now : undefined;
      });
      expect(replaced.relayer_nonce).toBe(first.relayer_nonce);
      const newest = (JSON.parse(replaced.tx_hashes!) as Hex[])[1]!;
      const [before, after] = await Promise.all([
        chain.publicClient.getTransaction({ hash: original! }).catch(() => null),
        atNode(chain.publicClient, newest),
      ]);
      if (before) expect(after.maxFeePerGas! > before.maxFeePerGas!).toBe(true);
      await chain.mine(1);
      const record = await stack.waitFor(async () => {
        const view = await stack.publicPayment(payment.id);
        return view.authorizations[0]?.status === "succeeded" ? view.authorizations[0] : undefined;
      });
      expect(record.tx_hash).toBe(newest);
    } finally {
      if (advancedChain) await chain.anvil.rpc("evm_increaseTime", [120]);
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: eip3009Abi,
      eventName: "Transfer",
      args: { from: payer.address, to: getAddress(payment.deposit_address) },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(1);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("40.00"));
  }, 60_000);
});
