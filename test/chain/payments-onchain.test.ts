/**
 * Payments paid on a real chain, end to end: anvil with TestUSDC and the deposit factory, the
 * real server crediting transfers and settling them to the merchant's payout address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, type Hex, zeroAddress } from "viem";
import { generatePrivateKey } from "viem/accounts";
import {
  type DepositTermsV3,
  depositAddressV3,
  depositFactoryV3Abi,
  depositTermsV3Arg,
  factoryV3Address,
} from "../../src/chain/deposit-v3.ts";
import { ANVIL_KEY_3, ANVIL_KEY_4 } from "../support/anvil.ts";
import { deployTestToken, mined, testTokenAbi, walletClientFor } from "../support/chain.ts";
import { startRpcTap } from "../support/rpc-tap.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { expiryRanSince } from "../support/wait.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain });
});

afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

describe("a payment paid on chain", () => {
  test("exact amount: pending -> settling -> confirmed, the payout address holds it all", async () => {
    const before = await stack.usdcBalance(stack.payout);
    const payment = await stack.createPayment({ amount: "25.00", description: "exact" });
    expect(payment.status).toBe("pending");
    expect(payment.amount_received).toBeNull();

    const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
    // The watcher scans up to head - 2; the transfer's block is above that: nothing is credited.
    const { blockNumber } = await chain.publicClient.getTransactionReceipt({ hash: txHash });
    await stack.waitScanned(blockNumber - 2n, { mine: false });
    expect(await stack.getPayment(payment.id)).toMatchObject({
      status: "pending",
      amount_received: null,
      transfers: [],
    });

    await stack.mine(2);
    // Credited and settle() sent; the settlement itself now waits for its own confirmations.
    const settling = await stack.waitForStatus(payment.id, "settling");
    expect(settling.amount_received).toBe("25.00");

    await stack.settlementSent(payment.id); // mined at once (automine), 2 blocks on top confirm it
    await stack.mine(2);
    const confirmed = await stack.waitForStatus(payment.id, "confirmed");
    expect(confirmed.amount_received).toBe("25.00");
    expect(confirmed.transfers).toHaveLength(1);
    expect(confirmed.transfers[0]).toMatchObject({ tx_hash: txHash, amount: "25.00", confirmed: true });
    expect(typeof confirmed.transfers[0].block_number).toBe("number");
    expect(typeof confirmed.transfers[0].log_index).toBe("number");

    expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.00"));
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  });

  test("underpaid, then the remainder: underpaid -> settling -> confirmed", async () => {
    const payout = stack.payout;
    const before = await stack.usdcBalance(payout);
    const payment = await stack.createPayment({ amount: "25.00" });

    await stack.pay(payment.deposit_address, usdc("10.00"));
    await stack.mine(2);
    const underpaid = await stack.waitForStatus(payment.id, "underpaid");
    expect(underpaid.amount_received).toBe("10.00");
    expect(await stack.events(payment.id)).toEqual(["payment.underpaid"]);
    expect((await stack.publicPayment(payment.id)).amount_due).toBe("15.00");

    await stack.pay(payment.deposit_address, usdc("15.00"));
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.00");
    expect(confirmed.transfers).toHaveLength(2);
    expect(await stack.events(payment.id)).toEqual(["payment.underpaid", "payment.settling", "payment.confirmed"]);
    expect((await stack.usdcBalance(payout)) - before).toBe(usdc("25.00"));
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
  });

  test("overpaid by one micro-USDC: overpaid -> confirmed, the payout address gets all of it", async () => {
    const before = await stack.usdcBalance(stack.payout);
    const payment = await stack.createPayment({ amount: "25.00" });

    await stack.pay(payment.deposit_address, usdc("25.000001"));
    await stack.mine(2);
    const overpaid = await stack.waitForStatus(payment.id, "overpaid");
    expect(overpaid.amount_received).toBe("25.000001");

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.000001");
    expect(await stack.events(payment.id)).toEqual(["payment.overpaid", "payment.confirmed"]);
    expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.000001"));
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
  });

  test("funds after confirmation are credited, announced and swept; the status stays confirmed", async () => {
    const before = await stack.usdcBalance(stack.payout);
    const payment = await stack.createPayment({ amount: "5.00" });
    await stack.pay(payment.deposit_address, usdc("5.00"));
    await stack.waitForStatus(payment.id, "confirmed", { mine: true });

    await stack.pay(payment.deposit_address, usdc("1.00"));
    const grown = await stack.mineUntil(
      async () => {
        const p = await stack.getPayment(payment.id);
        return p.amount_received === "6.00" ? p : undefined;
      },
      15_000,
      "the late 1.00 to be credited",
    );
    expect(grown.status).toBe("confirmed");
    expect(grown.transfers).toHaveLength(2);
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed", "payment.funds_received"]);

    // Swept to the payout address as well, with no new status change.
    await stack.mineUntil(
      async () => (await stack.usdcBalance(stack.payout)) - before === usdc("6.00"),
      15_000,
      "the late funds to be swept",
    );
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);
    await stack.mineUntil(
      async () =>
        (await stack.sql("SELECT 1 FROM settlements WHERE payment_id = ? AND state = 'submitted'", payment.id))
          .length === 0,
    );
    expect((await stack.getPayment(payment.id)).status).toBe("confirmed");
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed", "payment.funds_received"]);
    const settled = await stack.sql<{ state: string; amount: number }>(
      "SELECT state, amount FROM settlements WHERE payment_id = ? ORDER BY id",
      payment.id,
    );
    expect(settled).toEqual([
      { state: "mined", amount: Number(usdc("5.00")) },
      { state: "mined", amount: Number(usdc("1.00")) },
    ]);
  });

  test("another token sent to a deposit address is not credited", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const other = await deployTestToken(chain.publicClient, chain.deployer, { decimals: 6 });
    const hash = await chain.deployer.writeContract({
      address: other,
      abi: testTokenAbi,
      functionName: "mint",
      args: [payment.deposit_address, usdc("25.00")],
    });
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });

    await stack.waitScanned(receipt.blockNumber);
    const after = await stack.getPayment(payment.id);
    expect(after.amount_received).toBeNull();
    expect(after.status).toBe("pending");
    expect(after.transfers).toEqual([]);
    expect(await stack.events(payment.id)).toEqual([]);
  });

  test("a zero-value USDC transfer credits nothing", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const hash = await stack.pay(payment.deposit_address, 0n);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash });
    expect(receipt.logs).toHaveLength(1); // the token did emit Transfer(payer, deposit, 0)

    await stack.waitScanned(receipt.blockNumber);
    // A sync with the hash records nothing either.
    const synced = await stack.sync(payment.id, hash);
    expect(synced.status).toBe(200);
    expect(synced.json.incoming_transfers).toEqual([]);
    const after = await stack.getPayment(payment.id);
    expect(after.amount_received).toBeNull();
    expect(after.transfers).toEqual([]);
    expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
    expect(await stack.events(payment.id)).toEqual([]);
  });
});

describe("a payment that expired", () => {
  test("expires after its window with nothing received, then a late payment confirms it", async () => {
    const short = await startStack({ chain, paymentWindow: "2s", relayerKey: ANVIL_KEY_3 });
    try {
      const payment = await short.createPayment({ amount: "25.00" });
      expect(Date.parse(payment.expires_at) - Date.parse(payment.created_at)).toBe(2_000);
      short.clock.advance(2_500);
      const expired = await short.waitForStatus(payment.id, "expired", { timeoutMs: 5_000 });
      expect(expired.amount_received).toBeNull();
      expect(await short.events(payment.id)).toEqual(["payment.expired"]);

      await short.pay(payment.deposit_address, usdc("25.00"));
      const confirmed = await short.waitForStatus(payment.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("25.00");
      expect(await short.events(payment.id)).toEqual(["payment.expired", "payment.settling", "payment.confirmed"]);
      expect(await short.usdcBalance(short.payout)).toBe(usdc("25.00"));
    } finally {
      await short.stop();
    }
  });

  test("an underpaid payment does not expire", async () => {
    const short = await startStack({ chain, paymentWindow: "2s", relayerKey: ANVIL_KEY_3 });
    try {
      const payment = await short.createPayment({ amount: "25.00" });
      await short.pay(payment.deposit_address, usdc("1.00"));
      await short.waitForStatus(payment.id, "underpaid", { mine: true });
      short.clock.advance(10_000);
      await expiryRanSince(short); // the loop has looked since the clock passed expires_at
      expect((await short.getPayment(payment.id)).status).toBe("underpaid");
      expect(await short.events(payment.id)).toEqual(["payment.underpaid"]);
    } finally {
      await short.stop();
    }
  });
});

describe("a platform fee", () => {
  test("fee = floor(received * fee_bps / 10000) to the fee recipient, the rest to the payout address", async () => {
    const feeRecipient = randomAddress();
    const fees = await startStack({ chain, feeBps: 250, feeRecipient, relayerKey: ANVIL_KEY_4 });
    try {
      const exact = await fees.createPayment({ amount: "10.00" });
      expect(exact.fee_bps).toBe(250);
      await fees.pay(exact.deposit_address, usdc("10.00"));
      await fees.waitForStatus(exact.id, "confirmed", { mine: true });
      expect(await fees.usdcBalance(feeRecipient)).toBe(usdc("0.25"));
      expect(await fees.usdcBalance(fees.payout)).toBe(usdc("9.75"));

      // 10.000003 * 2.5% = 0.250000075: the fee rounds down, the merchant keeps the remainder.
      const odd = await fees.createPayment({ amount: "10.00" });
      await fees.pay(odd.deposit_address, usdc("10.000003"));
      const confirmed = await fees.waitForStatus(odd.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("10.000003");
      expect(await fees.usdcBalance(feeRecipient)).toBe(usdc("0.25") + 250_000n);
      expect(await fees.usdcBalance(fees.payout)).toBe(usdc("9.75") + 9_750_003n);
      expect(await fees.usdcBalance(odd.deposit_address)).toBe(0n);
    } finally {
      await fees.stop();
    }
  });
});

/**
 * The terms of a payment's deposit address as its merchant would write them (docs/deposit-addresses.md: a server
 * without source chains on a chain with no CCTP domain commits to domain 0, no messenger, no
 * bound and no fast domains), checked against the address the server gave.
 */
function termsOf(stack: Stack, payment: { id: string; token_address: string; deposit_address: string }) {
  const terms: DepositTermsV3 = {
    paymentId: payment.id as Hex,
    token: payment.token_address as Address,
    payout: stack.payout,
    feeRecipient: zeroAddress,
    feeBps: 0,
    settlementDomain: 0,
    tokenMessenger: zeroAddress,
    maxBridgeFeeBps: 0,
    fastDomains: 0n,
  };
  expect(depositAddressV3(terms)).toBe(payment.deposit_address as Address);
  return terms;
}

describe("a payment settled by someone else", () => {
  test("the merchant calls settle() by hand while the relayer has no gas: the server confirms it without sending", async () => {
    // A relayer with no gas: the server signs settle() but the node refuses it.
    const own = await startStack({ chain, relayerKey: generatePrivateKey() });
    try {
      const payment = await own.createPayment({ amount: "7.00" });
      await own.pay(payment.deposit_address, usdc("7.00"));
      await own.mine(2);
      await own.waitForStatus(payment.id, "settling");

      // Anyone may call settle(); it can only pay the committed recipients.
      const merchant = walletClientFor(chain.anvil.rpcUrl, ANVIL_KEY_3);
      await mined(
        chain.publicClient,
        merchant.writeContract({
          address: factoryV3Address,
          abi: depositFactoryV3Abi,
          functionName: "settle",
          args: [depositTermsV3Arg(termsOf(own, payment))],
        }),
      );
      expect(await own.usdcBalance(own.payout)).toBe(usdc("7.00"));

      const confirmed = await own.waitForStatus(payment.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("7.00");
      expect(
        await own.sql<{ state: string }>("SELECT state FROM settlements WHERE payment_id = ?", payment.id),
      ).toEqual([{ state: "dropped" }]);
      // What the merchant's own call swept is accounted for as settled, so nothing looks unswept.
      expect(
        await own.sql("SELECT CAST(amount_settled AS TEXT) AS settled FROM payments WHERE id = ?", payment.id),
      ).toEqual([{ settled: String(usdc("7.00")) }]);
      expect(await own.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    } finally {
      await own.stop();
    }
  });

  test("the merchant calls settle() before the relayer's first attempt: the server confirms it without sending", async () => {
    const relayerKey = await chain.fundedKey();
    const own = await startStack({ chain, relayerKey });
    try {
      const payment = await own.createPayment({ amount: "5.00" });
      await own.pay(payment.deposit_address, usdc("5.00"));
      // One block after the transfer: the credit lacks its 2 confirmations, so the relayer has not tried yet.
      const merchant = walletClientFor(chain.anvil.rpcUrl, ANVIL_KEY_3);
      await mined(
        chain.publicClient,
        merchant.writeContract({
          address: factoryV3Address,
          abi: depositFactoryV3Abi,
          functionName: "settle",
          args: [depositTermsV3Arg(termsOf(own, payment))],
        }),
      );
      expect(await own.sql("SELECT id FROM settlements WHERE payment_id = ?", payment.id)).toEqual([]);

      const confirmed = await own.waitForStatus(payment.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("5.00");
      expect(await own.usdcBalance(own.payout)).toBe(usdc("5.00"));
      // Nothing sent: no settlement recorded, the relayer's nonce unused.
      expect(await own.sql("SELECT id FROM settlements WHERE payment_id = ?", payment.id)).toEqual([]);
      expect(
        await chain.publicClient.getTransactionCount({
          address: walletClientFor(chain.rpcUrl, relayerKey).account.address,
        }),
      ).toBe(0);
      expect(
        await own.sql("SELECT CAST(amount_settled AS TEXT) AS settled FROM payments WHERE id = ?", payment.id),
      ).toEqual([{ settled: String(usdc("5.00")) }]);
      expect(await own.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    } finally {
      await own.stop();
    }
  });

  test("a node that reads balances from blocks back makes no unsettled payment confirmed", async () => {
    // The deposit's balance is read from 6 blocks back, before the credited transfer: a zero
    // that proves nothing. The server waits for a view that shows the funds, then settles.
    const lagging = startRpcTap(chain.rpcUrl, { callsBlocksBehind: 6 });
    const own = await startStack({ chain, rpcUrl: lagging.url, relayerKey: await chain.fundedKey() });
    try {
      const payment = await own.createPayment({ amount: "9.00" });
      await own.pay(payment.deposit_address, usdc("9.00"));
      const confirmed = await own.waitForStatus(payment.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("9.00");
      expect(await own.usdcBalance(own.payout)).toBe(usdc("9.00"));
      expect(await own.usdcBalance(payment.deposit_address)).toBe(0n);
      expect(
        await own.sql<{ state: string }>("SELECT state FROM settlements WHERE payment_id = ?", payment.id),
      ).toEqual([{ state: "mined" }]);
      expect(
        await own.sql<{ amount_settled: number }>("SELECT amount_settled FROM payments WHERE id = ?", payment.id),
      ).toEqual([{ amount_settled: Number(usdc("9.00")) }]);
      expect(await own.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    } finally {
      await own.stop();
      lagging.stop();
    }
  });
});
