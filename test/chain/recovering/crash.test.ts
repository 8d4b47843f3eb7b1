/**
 * kill -9 of the server (`bun src/main.ts serve` as a child process) once a recovery's signed
 * transaction is stored: the restarted server sends that same transaction again (the test drops
 * it from the node's mempool, so only the stored copy can bring it back), and the tokens are
 * recovered exactly once. The source chain stops automining so the transaction waits for the test.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi, getAddress, type Hex } from "viem";
import { depositFactoryV3Abi, factoryV3Address } from "../../../src/chain/deposit-v3.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { sourceFactoryDeployed, strayTokenOnSource } from "../../support/stray-tokens.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;

beforeAll(async () => {
  x = await startCrossChainStack({ subprocess: true });
  await sourceFactoryDeployed(x);
}, 60_000);

afterAll(async () => {
  await x?.local.source.rpc("evm_setAutomine", [true]).catch(() => {});
  await x?.stop();
});

interface RecoveryDbRow {
  id: string;
  state: string;
  nonce: number | null;
  tx_hash: string | null;
  amount_units: string | null;
}

test("a recovery stored before a kill -9 is sent again after the restart and recovers once", async () => {
  const { stack, local } = x;
  const client = x.source.publicClient;
  const payment = await stack.createPayment({ amount: "5.00" });
  const deposit = getAddress(payment.deposit_address);
  const token = await strayTokenOnSource(x, deposit, 4_200_000n, 6);

  await local.source.rpc("evm_setAutomine", [false]);
  const created = await stack.request(`/api/v1/payments/${payment.id}/recover`, {
    method: "POST",
    body: { chain: LOCAL_SOURCE.name, token },
  });
  expect(created.status).toBe(202);
  const rows = () => stack.sql<RecoveryDbRow>("SELECT * FROM recoveries WHERE payment_id = ?", payment.id);
  const stored = await waitFor(
    async () => (await rows()).find((r) => r.state === "submitted"),
    15_000,
    "the signed recovery stored",
  );

  await stack.crash();
  // Whatever the node got before the crash is gone: only the stored transaction can bring it back.
  await local.source.rpc("anvil_dropTransaction", [stored.tx_hash]);
  await stack.restart();
  await local.source.rpc("evm_setAutomine", [true]);

  const done = await waitFor(
    async () => {
      const row = (await rows())[0]!;
      if (row.state === "succeeded") return row;
      await local.source.rpc("evm_mine");
      throw new Error(`recovery ${row.state}`);
    },
    30_000,
    "the recovery to succeed after the restart",
    100,
  );
  expect(await rows()).toHaveLength(1);
  expect(done).toMatchObject({ tx_hash: stored.tx_hash, nonce: stored.nonce, amount_units: "4200000" });
  const recovered = await client.getContractEvents({
    address: factoryV3Address,
    abi: depositFactoryV3Abi,
    eventName: "Recovered",
    args: { paymentId: payment.id as Hex },
    fromBlock: 0n,
    toBlock: "latest",
  });
  expect(recovered.map((e) => e.transactionHash)).toEqual([stored.tx_hash as Hex]);
  expect(
    await client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [stack.payout] }),
  ).toBe(4_200_000n);
}, 90_000);
