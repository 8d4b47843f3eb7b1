/**
 * Recovering tokens sent by mistake, on two anvils (the settlement chain and "local-source" with
 * the CCTP rig): what `POST /api/v1/payments/{id}/recover` refuses (nothing stored), and what it
 * carries out, to the payout address on the chain where the funds sit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Address,
  createWalletClient,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseEther,
  parseTransaction,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { factoryAddress } from "../../../src/chain/contracts.ts";
import { factoryV3Address, forwarderV3Address } from "../../../src/chain/deposit-v3.ts";
import { sentWith } from "../../../src/chain/relayer-fees.ts";
import { runAccountCommand } from "../../../src/cli/accounts.ts";
import { CCTP_DEPLOYER_KEY, cctpAddresses, testTokenMessengerV2Abi } from "../../../src/dev/cctp-rig.ts";
import { mined, undeploy } from "../../support/chain.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { asVersion1 } from "../../support/legacy-payments.ts";
import { api } from "../../support/server.ts";
import type { Stack } from "../../support/stack.ts";
import { sourceFactoryDeployed, strayTokenOnSource } from "../../support/stray-tokens.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
let stack: Stack;
let settlementName: string;

beforeAll(async () => {
  x = await startCrossChainStack();
  stack = x.stack;
  settlementName = stack.config.chain.name;
  await sourceFactoryDeployed(x);
}, 60_000);

afterAll(async () => {
  await x?.stop();
});

const recover = (paymentId: string, body: unknown) =>
  stack.request(`/api/v1/payments/${paymentId}/recover`, { method: "POST", body });

const storedRecoveries = (paymentId: string) =>
  stack.sql<{ id: string; state: string; tx_hash: string | null }>(
    "SELECT id, state, tx_hash FROM recoveries WHERE payment_id = ?",
    paymentId,
  );

/** Polls the recovery through the API, mining a block on both chains each time, until it is `state`. */
function waitRecovery(id: string, state: string) {
  return waitFor(
    async () => {
      const { json } = await stack.request(`/api/v1/recoveries/${id}`);
      if (json.state === state) return json;
      await Promise.all([stack.chain.mine(1), x.local.source.rpc("evm_mine")]);
      throw new Error(`recovery ${json.state} (${json.error})`);
    },
    30_000,
    `recovery ${id} to be ${state}`,
    60,
  );
}

const balanceOn = (client: PublicClient, token: Address, owner: Address) =>
  client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] });

describe("POST /api/v1/payments/{id}/recover", () => {
  test("a stray ERC-20 on the source chain goes to the payout address there, and the record follows it", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const units = 1_234_567_890_123_456_789n; // past 2^53: the amount must stay exact
    const token = await strayTokenOnSource(x, deposit, units);

    // Any letter case names the token (a wrong EIP-55 checksum included), as it is typed or pasted.
    const miscased = `0x${[...token.slice(2)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join("")}`;
    const created = await recover(payment.id, { chain: LOCAL_SOURCE.name, token: miscased });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({
      object: "recovery",
      payment: payment.id,
      chain: LOCAL_SOURCE.name,
      chain_id: LOCAL_SOURCE.chainId,
      token,
      decimals: 18,
      payout_address: stack.payout,
      amount_units: null,
      error: null,
    });
    expect(created.json.id).toMatch(/^rcv_[0-9A-Za-z]{24}$/);
    expect(["pending", "submitted"]).toContain(created.json.state);

    const done = await waitRecovery(created.json.id, "succeeded");
    expect(done.amount_units).toBe(units.toString());
    expect(await balanceOn(x.source.publicClient, token, stack.payout)).toBe(units);
    expect(await balanceOn(x.source.publicClient, token, deposit)).toBe(0n);
    const receipt = await x.source.publicClient.getTransactionReceipt({ hash: done.tx_hash as Hex });
    expect(getAddress(receipt.to!)).toBe(factoryV3Address);

    const list = await stack.request(`/api/v1/payments/${payment.id}/recoveries`);
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ object: "list", data: [done], has_more: false });
  }, 60_000);

  test("native coin on the settlement chain; a replayed Idempotency-Key or a repeat answers 200 with the same recovery", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const wei = parseEther("0.5");
    await mined(stack.chain.publicClient, stack.chain.payer.sendTransaction({ to: deposit, value: wei }));
    const before = await stack.chain.publicClient.getBalance({ address: stack.payout });

    const send = (key: string) =>
      api(stack.url, stack.apiKey)(`/api/v1/payments/${payment.id}/recover`, {
        body: { chain: settlementName },
        headers: { "idempotency-key": key },
      });
    const first = await send("rescue-1");
    expect(first.status).toBe(202);
    const created = first.json as { id: string; token: string | null; decimals: number };
    expect(created).toMatchObject({ token: null, decimals: 18, chain: settlementName });
    const replay = await send("rescue-1");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((replay.json as { id: string }).id).toBe(created.id);

    const done = await waitRecovery(created.id, "succeeded");
    expect(done.amount_units).toBe(wei.toString());
    expect((await stack.chain.publicClient.getBalance({ address: stack.payout })) - before).toBe(wei);
    expect(await stack.chain.publicClient.getBalance({ address: deposit })).toBe(0n);
    expect(await storedRecoveries(payment.id)).toHaveLength(1);
  }, 60_000);

  test("the same request while one is under way answers it (200), even once mined but not yet confirmed", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    await mined(stack.chain.publicClient, stack.chain.payer.sendTransaction({ to: deposit, value: 1_000n }));
    // Blocks only when the test mines them: the first recovery cannot finish before the second request.
    await stack.chain.anvil.rpc("evm_setAutomine", [false]);
    let first: { id: string };
    try {
      const created = await recover(payment.id, { chain: settlementName, token: null });
      expect(created.status).toBe(202);
      first = created.json;
      const sent = await waitFor(
        async () => (await storedRecoveries(payment.id)).find((r) => r.state === "submitted"),
        15_000,
        "the recovery sent",
      );
      await waitFor(
        () => stack.chain.publicClient.getTransaction({ hash: sent.tx_hash as Hex }),
        15_000,
        "the node to hold it",
      );
      // Mined in this block, two confirmations short: the deposit address is empty, the recovery still open.
      await stack.chain.mine(1);
      expect(await stack.chain.publicClient.getBalance({ address: deposit })).toBe(0n);
    } finally {
      await stack.chain.anvil.rpc("evm_setAutomine", [true]);
    }
    const again = await recover(payment.id, { chain: settlementName });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: first.id, state: "submitted" });
    await waitRecovery(first.id, "succeeded");
    expect(await storedRecoveries(payment.id)).toHaveLength(1);
  }, 60_000);
});

describe("a stuck recovery", () => {
  test("held by the node too long, it is replaced on its nonce with higher fees, and recovers once", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await strayTokenOnSource(x, deposit, 9_000n, 6);
    const row = async () =>
      (
        await stack.sql<{ id: string; state: string; tx_hash: string; tx_hashes: string; raw_tx: string }>(
          "SELECT * FROM recoveries WHERE payment_id = ?",
          payment.id,
        )
      )[0];

    await x.local.source.rpc("evm_setAutomine", [false]);
    let first: { tx_hash: string; raw_tx: string };
    try {
      const created = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
      expect(created.status).toBe(202);
      first = await waitFor(
        async () => (await row())?.state === "submitted" && (await row()),
        15_000,
        "the recovery sent",
      );
      await waitFor(
        () => x.source.publicClient.getTransaction({ hash: first.tx_hash as Hex }),
        15_000,
        "the node to hold it",
      );
      stack.clock.advance(31_000); // past the 30 s after which a held transaction counts as stuck
      const hashes = await waitFor(
        async () => {
          const sent = JSON.parse((await row())!.tx_hashes) as Hex[];
          return sent.length === 2 && sent;
        },
        15_000,
        "a replacement",
      );
      // Stored before it is broadcast: mining on before the node holds it would mine the first.
      await waitFor(
        () => x.source.publicClient.getTransaction({ hash: hashes[1]! }),
        15_000,
        "the node to hold the replacement",
      );
    } finally {
      await x.local.source.rpc("evm_setAutomine", [true]);
    }
    const replaced = (await row())!;
    expect(JSON.parse(replaced.tx_hashes)).toEqual([first.tx_hash, replaced.tx_hash]);
    const before = sentWith(first.raw_tx as Hex);
    const after = sentWith(replaced.raw_tx as Hex);
    expect(after.maxFeePerGas).toBeGreaterThanOrEqual((before.maxFeePerGas * 115n) / 100n);
    expect(after.maxPriorityFeePerGas).toBeGreaterThanOrEqual((before.maxPriorityFeePerGas * 115n) / 100n);
    expect(parseTransaction(replaced.raw_tx as Hex).nonce).toBe(parseTransaction(first.raw_tx as Hex).nonce);

    const done = await waitRecovery(replaced.id, "succeeded");
    expect(done.tx_hash).toBe(replaced.tx_hash);
    expect(done.amount_units).toBe("9000");
    expect(await balanceOn(x.source.publicClient, token, stack.payout)).toBe(9_000n);
  }, 60_000);
});

describe("refusals change nothing", () => {
  test("USDC is refused on both chains with the reason in words", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    await x.sourceTransfer(deposit, 2_000_000n);

    const onSettlement = await recover(payment.id, { chain: settlementName, token: stack.chain.usdc });
    expect(onSettlement.status).toBe(400);
    expect(onSettlement.json.error).toContain("is the USDC this payment settles in");

    // The rig's source USDC shares the settlement USDC's address (the same deployer and nonce on both
    // anvils), which the contract refuses as the committed token.
    const onSource = await recover(payment.id, { chain: LOCAL_SOURCE.name, token: x.source.usdc });
    expect(onSource.status).toBe(400);
    expect(onSource.json.error).toContain(`bridges from ${LOCAL_SOURCE.name} to the settlement chain`);

    // On real chains each USDC has its own address: refused because Circle's minter burns it there.
    const ownUsdc = await strayTokenOnSource(x, deposit, 3_000_000n, 6);
    const messengerOwner = createWalletClient({
      chain: { ...foundry, id: LOCAL_SOURCE.chainId },
      transport: http(x.local.source.rpcUrl),
      account: privateKeyToAccount(CCTP_DEPLOYER_KEY),
    });
    await mined(
      x.source.publicClient,
      messengerOwner.writeContract({
        address: cctpAddresses.tokenMessenger,
        abi: testTokenMessengerV2Abi,
        functionName: "setMaxBurnAmountPerMessage",
        args: [ownUsdc, 1_000_000_000_000n],
      }),
    );
    const bridgeable = await recover(payment.id, { chain: LOCAL_SOURCE.name, token: ownUsdc });
    expect(bridgeable.status).toBe(400);
    expect(bridgeable.json.error).toBe(
      `token ${ownUsdc} is USDC that the deposit address bridges from ${LOCAL_SOURCE.name} to the settlement ` +
        "chain, where it settles; it cannot be recovered",
    );
    expect(await storedRecoveries(payment.id)).toEqual([]);
  }, 30_000);

  test("nothing to recover is 422; an unknown chain or a malformed token is 400 naming the field", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });

    const empty = await recover(payment.id, { chain: LOCAL_SOURCE.name });
    expect(empty.status).toBe(422);
    expect(empty.json.error).toBe(
      `nothing to recover: the deposit address holds no native coin on ${LOCAL_SOURCE.name}`,
    );

    const chain = await recover(payment.id, { chain: "ethereum" });
    expect(chain.status).toBe(400);
    expect(chain.json.error).toBe(`chain must be one of: ${settlementName}, ${LOCAL_SOURCE.name}`);

    const token = await recover(payment.id, { chain: settlementName, token: "0x1234" });
    expect(token.status).toBe(400);
    expect(token.json.error).toMatch(/^token must be an ERC-20 contract address/);

    const missing = await recover(payment.id, {});
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/^chain is required/);
    expect(await storedRecoveries(payment.id)).toEqual([]);
  }, 30_000);

  test("another account's payment and recovery are 404", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    await mined(stack.chain.publicClient, stack.chain.payer.sendTransaction({ to: deposit, value: 1_000n }));
    const mine = await recover(payment.id, { chain: settlementName });
    expect(mine.status).toBe(202);

    const other = (await runAccountCommand(
      "account",
      ["create", "--name", "Other Shop", "--payout-address", "0x1111111111111111111111111111111111111111"],
      stack.env,
    )) as { api_key: string };
    const asOther = api(stack.url, other.api_key);

    const post = await asOther(`/api/v1/payments/${payment.id}/recover`, { body: { chain: settlementName } });
    expect({ status: post.status, json: post.json }).toEqual({
      status: 404,
      json: { error: `no payment ${payment.id}` },
    });
    expect((await asOther(`/api/v1/payments/${payment.id}/recoveries`)).status).toBe(404);
    const recovery = await asOther(`/api/v1/recoveries/${mine.json.id}`);
    expect({ status: recovery.status, json: recovery.json }).toEqual({
      status: 404,
      json: { error: `no recovery ${mine.json.id}` },
    });
    expect(await storedRecoveries(payment.id)).toHaveLength(1);
    await waitRecovery(mine.json.id, "succeeded");
  }, 60_000);
});

describe("a version 1 payment", () => {
  test("is refused on a source chain, and recovers through the version 1 factory on the settlement chain", async () => {
    // As an older build issued it: new payments get version 3.
    const payment = await asVersion1(stack, await stack.createPayment({ amount: "5.00" }));
    expect(await stack.sql("SELECT factory_version FROM payments WHERE id = ?", payment.id)).toEqual([
      { factory_version: 1 },
    ]);
    const deposit = getAddress(payment.deposit_address);
    await mined(stack.chain.publicClient, stack.chain.payer.sendTransaction({ to: deposit, value: 7_000n }));

    const refused = await recover(payment.id, { chain: LOCAL_SOURCE.name });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe(
      `chain must be ${settlementName} for this payment: its deposit address is a version 1 address, ` +
        `which exists on ${settlementName} only`,
    );
    expect(await storedRecoveries(payment.id)).toEqual([]);

    const created = await recover(payment.id, { chain: settlementName });
    expect(created.status).toBe(202);
    const done = await waitRecovery(created.json.id, "succeeded");
    expect(done.amount_units).toBe("7000");
    const receipt = await stack.chain.publicClient.getTransactionReceipt({ hash: done.tx_hash as Hex });
    expect(getAddress(receipt.to!)).toBe(factoryAddress);
  }, 90_000);
});

describe("a source chain reorg that takes the deposit factory", () => {
  test("requests there wait with a 503 until the recoverer deploys it again, then go through", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await strayTokenOnSource(x, deposit, 4_000n, 6);
    await undeploy(x.local.source, [factoryV3Address, forwarderV3Address]);

    const waiting = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
    expect(waiting.status).toBe(503);
    expect(waiting.json.error).toContain(`not deployed on ${LOCAL_SOURCE.name} yet`);
    expect(await storedRecoveries(payment.id)).toEqual([]);

    stack.clock.advance(61_000); // the recoverer looks for each source chain's factory once a minute
    await sourceFactoryDeployed(x);
    const created = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
    expect(created.status).toBe(202);
    const done = await waitRecovery(created.json.id, "succeeded");
    expect(done.amount_units).toBe("4000");
    expect(await balanceOn(x.source.publicClient, token, stack.payout)).toBe(4_000n);
  }, 60_000);
});
