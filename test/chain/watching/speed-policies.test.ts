/**
 * The three speed policies on a real anvil with the real contracts (docs/speed.md): where a
 * transfer is credited and where the payment is `confirmed`. Anvil automines (each transaction in
 * its own block) and runs with one slot per epoch, so its `finalized` block trails the head by two
 * blocks and its `safe` block by one: fewer than the five confirmations `standard` asks here, so a
 * payment under `final` counting before `standard` would proves the tag was read, not a count.
 */
import { describe, expect, test } from "bun:test";
import { createDepthReader } from "../../../src/chain/watching/depth.ts";
import { silentLogger } from "../../../src/lib/log.ts";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { watcherRanSince } from "../../support/wait.ts";

const CONFIRMATIONS = 5;
const stack = useStack({ confirmations: CONFIRMATIONS, slotsInAnEpoch: 1 });

/** The block the payer's transfer landed in, once its receipt is there (anvil answers it a moment after the send). */
async function blockOf(txHash: `0x${string}`): Promise<bigint> {
  return (await stack.chain.publicClient.waitForTransactionReceipt({ hash: txHash, pollingInterval: 20 })).blockNumber;
}

/** The block the payment's settlement landed in. */
async function settlementBlock(paymentId: string): Promise<bigint> {
  const [settlement] = await stack.sql<{ tx_hash: `0x${string}` }>(
    "SELECT tx_hash FROM settlements WHERE payment_id = ?",
    paymentId,
  );
  return blockOf(settlement!.tx_hash);
}

/** Waits until the watcher has scanned `block` and finished a whole round after it (credits included). */
async function watcherCaughtUp(block: bigint): Promise<void> {
  await stack.waitScanned(block, { mine: false });
  await watcherRanSince(stack);
}

describe("fast", () => {
  test("credits a transfer once it is in a block, settles at once, and is confirmed once the settlement is", async () => {
    const payment = await stack.createPayment({ amount: "25.00", speed: "fast" });
    expect(payment.speed).toBe("fast");
    const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
    const paid = await blockOf(txHash);

    // No block is mined by the test: the settlement is the only block on top of the transfer.
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: false });
    expect(confirmed).toMatchObject({ speed: "fast", amount_received: "25.00" });
    expect(confirmed.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: true })]);
    const [settlement] = await stack.sql<{ block_number: number }>(
      "SELECT block_number FROM settlements WHERE payment_id = ? AND state = 'mined'",
      payment.id,
    );
    expect(BigInt(settlement!.block_number)).toBe(paid + 1n);
    expect(await stack.chain.head()).toBe(paid + 1n);
    expect(await stack.allEvents(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    expect(await stack.usdcBalance(stack.payout)).toBeGreaterThanOrEqual(usdc("25.00"));
  });
});

describe("standard", () => {
  test("announces the transfer at inclusion, credits it at the confirmations, confirms at the settlement's", async () => {
    const payment = await stack.createPayment({ amount: "25.00", speed: "standard" });
    const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
    const paid = await blockOf(txHash);

    // Seen at once: the merchant hears of it, the payer's page lists it, nothing is credited.
    await stack.waitFor(async () => (await stack.allEvents(payment.id)).includes("payment.funds_seen") || undefined);
    const seen = await stack.getPayment(payment.id);
    expect(seen).toMatchObject({ status: "pending", amount_received: null, speed: "standard" });
    expect(seen.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false })]);
    const view = await stack.publicPayment(payment.id);
    expect(view.incoming_transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false })]);

    // One block short of the confirmations: still not credited.
    await stack.mine(CONFIRMATIONS - 1);
    await watcherCaughtUp(paid + BigInt(CONFIRMATIONS - 1));
    expect((await stack.getPayment(payment.id)).amount_received).toBeNull();

    await stack.mine(1);
    // Credited, and the settlement sent at once.
    const credited = await stack.waitForStatus(payment.id, "settling", { mine: false });
    expect(credited.amount_received).toBe("25.00");
    // The settlement counts at the same depth: not confirmed until it has the confirmations too.
    const settledIn = await settlementBlock(payment.id);
    await stack.mine(CONFIRMATIONS - 1);
    await watcherCaughtUp(settledIn + BigInt(CONFIRMATIONS - 1));
    expect((await stack.getPayment(payment.id)).status).toBe("settling");
    await stack.mine(1);
    await stack.waitForStatus(payment.id, "confirmed", { mine: false });
    expect(await stack.allEvents(payment.id)).toEqual(["payment.funds_seen", "payment.settling", "payment.confirmed"]);
  });
});

describe("final", () => {
  test("credits a transfer and confirms the payment only at the chain's finalized block, read with the tag", async () => {
    const payment = await stack.createPayment({ amount: "25.00", speed: "final" });
    const txHash = await stack.pay(payment.deposit_address, usdc("25.00"));
    const paid = await blockOf(txHash);
    await stack.waitFor(async () => (await stack.allEvents(payment.id)).includes("payment.funds_seen") || undefined);

    // One block on top: the finalized block (head - 2) is still below the transfer's.
    await stack.mine(1);
    await watcherCaughtUp(paid + 1n);
    expect((await stack.getPayment(payment.id)).amount_received).toBeNull();

    // Two on top: finalized, though `standard` would want five.
    await stack.mine(1);
    // Credited, and the settlement sent at once.
    const credited = await stack.waitForStatus(payment.id, "settling", { mine: false });
    expect(credited.amount_received).toBe("25.00");
    const settledIn = await settlementBlock(payment.id);
    await stack.mine(1);
    await watcherCaughtUp(settledIn + 1n);
    expect((await stack.getPayment(payment.id)).status).toBe("settling");
    await stack.mine(1);
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: false });
    expect(confirmed.speed).toBe("final");
    expect(await stack.chain.head()).toBe(settledIn + 2n);
  });

  test("the reader takes the block the tag names from the node: `finalized` two epochs back, `safe` one", async () => {
    const head = await stack.chain.head();
    const read = (finalTag: "finalized" | "safe") =>
      createDepthReader({
        client: stack.chain.publicClient,
        confirmations: CONFIRMATIONS,
        finalTag,
        log: silentLogger,
        name: "custom",
      }).read();
    expect(await read("finalized")).toEqual({ head, confirmations: CONFIRMATIONS, finalized: head - 2n });
    expect(await read("safe")).toEqual({ head, confirmations: CONFIRMATIONS, finalized: head - 1n });
  });
});

describe("the policy in effect", () => {
  test("a payment without `speed` runs under the account's policy, here the operator's default", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    expect(payment.speed).toBe("standard");
    expect((await stack.getPayment(payment.id)).speed).toBe("standard");
  });
});
