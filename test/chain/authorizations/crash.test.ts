/**
 * kill -9 of the server around a gasless payment's submission: the signed
 * transferWithAuthorization is stored before it is broadcast, so the restarted server sends the
 * same transaction (same nonce, same hash) or finds it mined: exactly one transfer either way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eip3009Abi } from "../../../src/chain/authorizations/token.ts";
import { atNode } from "../../support/chain.ts";
import { gaslessApi, gaslessPayer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;

beforeAll(async () => {
  chain = await startChain();
});
afterAll(async () => {
  await chain?.stop();
});

type Row = { status: string; relayer_nonce: number | null; tx_hash: Hex | null; raw_tx: Hex | null };

async function transfersTo(payer: `0x${string}`, deposit: string) {
  return chain.publicClient.getContractEvents({
    address: chain.usdc,
    abi: eip3009Abi,
    eventName: "Transfer",
    args: { from: payer, to: getAddress(deposit) },
    fromBlock: 0n,
  });
}

async function payBySignature(stack: Stack, amount: string) {
  const payer = await gaslessPayer(chain, usdc("100.00"));
  const payment = await stack.createPayment({ amount });
  const api = gaslessApi(stack.url);
  const res = await api.post(payment.id, await signOffer(await api.offer(payment.id), payer.key));
  expect(res.status).toBe(202);
  return { payer, payment, id: res.json.authorization.id as string };
}

const rowOf = async (stack: Stack, id: string) =>
  (await stack.sql<Row>("SELECT status, relayer_nonce, tx_hash, raw_tx FROM authorizations WHERE id = ?", id))[0]!;

describe("kill -9 between storing the signed transaction and its broadcast", () => {
  let stack: Stack;
  let relayerKey: Hex;

  beforeAll(async () => {
    // A relayer without ETH: the transaction is signed and stored, and the node refuses it.
    relayerKey = generatePrivateKey();
    stack = await startStack({ chain, subprocess: true, relayerKey, env: { STABLEGATE_SWEEP_FLOOR: "1.00" } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test("the restarted server sends the same transaction, and the payment confirms with one transfer", async () => {
    const { payer, payment, id } = await payBySignature(stack, "25.00");
    const stored = await stack.waitFor(async () => {
      const row = await rowOf(stack, id);
      return row.status === "submitted" ? row : undefined;
    });
    expect(stored.relayer_nonce).toBe(0);
    expect(await chain.publicClient.getTransaction({ hash: stored.tx_hash! }).catch(() => null)).toBeNull();
    expect(await transfersTo(payer.address, payment.deposit_address)).toHaveLength(0);

    await stack.crash();
    await chain.setBalance(privateKeyToAccount(relayerKey).address, 10n ** 18n);
    await stack.restart();

    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    const done = await rowOf(stack, id);
    expect(done).toMatchObject({ status: "succeeded", tx_hash: stored.tx_hash, raw_tx: stored.raw_tx });
    await stack.mine(3);
    const transfers = await transfersTo(payer.address, payment.deposit_address);
    expect(transfers.map((t) => t.transactionHash)).toEqual([stored.tx_hash!]);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("75.00"));
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
  }, 90_000);
});

describe("kill -9 after the broadcast, before the server saw it mined", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      chain,
      subprocess: true,
      relayerKey: await chain.fundedKey(),
      env: { STABLEGATE_SWEEP_FLOOR: "1.00" },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test("the restarted server finds it mined and sends nothing more", async () => {
    const payer = await gaslessPayer(chain, usdc("100.00"));
    const payment = await stack.createPayment({ amount: "25.00" });
    const api = gaslessApi(stack.url);
    const offer = await api.offer(payment.id);
    // From here the relayer's transaction waits in the mempool until the test mines a block.
    await chain.anvil.rpc("evm_setAutomine", [false]);
    let sent: Row;
    try {
      const res = await api.post(payment.id, await signOffer(offer, payer.key));
      expect(res.status).toBe(202);
      sent = await stack.waitFor(async () => {
        const row = await rowOf(stack, res.json.authorization.id);
        return row.status === "submitted" ? row : undefined;
      });
      await atNode(chain.publicClient, sent.tx_hash!);
      await stack.crash();
      await chain.mine(1);
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
    }
    expect((await chain.publicClient.getTransactionReceipt({ hash: sent!.tx_hash! })).status).toBe("success");
    await stack.restart();
    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    await stack.mine(3);
    const [row] = await stack.sql<Row>(
      "SELECT status, relayer_nonce, tx_hash, raw_tx FROM authorizations WHERE payment_id = ?",
      payment.id,
    );
    expect(row).toMatchObject({ status: "succeeded", tx_hash: sent!.tx_hash });
    const transfers = await transfersTo(payer.address, payment.deposit_address);
    expect(transfers.map((t) => t.transactionHash)).toEqual([sent!.tx_hash!]);
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
  }, 90_000);
});
