/**
 * On-chain amounts are uint256; SQLite's INTEGER is signed 64-bit and bun:sqlite wraps a larger
 * bigint without a word. A custom token can move 2^63 units or more: such transfers are refused
 * (never stored, never credited, never shown negative), found by the watcher or through /sync.
 */
import { describe, expect, test } from "bun:test";
import type { Address, Hex } from "viem";
import { ANVIL_KEY_3 } from "../../support/anvil.ts";
import { testTokenAbi, walletClientFor } from "../../support/chain.ts";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";

const INT64_MAX = 2n ** 63n - 1n;

const stack = useStack({ confirmations: 1 });

/** Mints `units` of the test token to a fresh holder and transfers them to `to`: a real transfer. */
async function transferMinted(to: string, units: bigint): Promise<Hex> {
  const holder = walletClientFor(stack.chain.rpcUrl, ANVIL_KEY_3);
  const mint = await holder.writeContract({
    address: stack.chain.usdc,
    abi: testTokenAbi,
    functionName: "mint",
    args: [holder.account.address, units],
  });
  await stack.chain.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 });
  const hash = await holder.writeContract({
    address: stack.chain.usdc,
    abi: testTokenAbi,
    functionName: "transfer",
    args: [to as Address, units],
  });
  const receipt = await stack.chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new Error(`transfer ${hash} reverted`);
  return hash;
}

/** Stored amounts as exact text, so a wrapped (negative) value cannot hide behind a JS number. */
const stored = async (paymentId: string) =>
  (
    await stack.sql<{ received: string | null; settled: string }>(
      "SELECT CAST(amount_received AS TEXT) AS received, CAST(amount_settled AS TEXT) AS settled FROM payments WHERE id = ?",
      paymentId,
    )
  )[0]!;
const transfersOf = (paymentId: string) =>
  stack.sql<{ amount: string }>("SELECT CAST(amount AS TEXT) AS amount FROM transfers WHERE payment_id = ?", paymentId);

describe("amounts of 2^63 units or more", () => {
  test("a transfer of 2^63 units is refused through /sync (422) and by the watcher; the payment still completes", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const huge = await transferMinted(payment.deposit_address, 2n ** 63n);
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(2n ** 63n);

    const synced = await stack.sync(payment.id, huge);
    expect(synced.status).toBe(422);
    expect(synced.json).toEqual({ error: expect.stringMatching(/more than this server can account for/) });
    await stack.waitScanned(await stack.chain.head(), { mine: true });
    expect(await transfersOf(payment.id)).toEqual([]);
    expect(await stored(payment.id)).toEqual({ received: null, settled: "0" });
    expect(await stack.getPayment(payment.id)).toMatchObject({
      status: "pending",
      amount_received: null,
      transfers: [],
    });

    // The payer's real payment completes it; the sweep carries the refused units along.
    const before = await stack.usdcBalance(stack.payout);
    await stack.pay(payment.deposit_address, usdc("25.00"));
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("25.00");
    expect((await stack.usdcBalance(stack.payout)) - before).toBe(2n ** 63n + usdc("25.00"));
    expect(await stack.sql("SELECT state, amount FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
      { state: "mined", amount: null },
    ]);
    // Saturated, never wrapped: nothing looks unswept, so no second settlement is ever sent.
    expect(await stored(payment.id)).toEqual({ received: String(usdc("25.00")), settled: String(INT64_MAX) });
    await stack.waitScanned(await stack.chain.head(), { mine: true });
    expect(await stack.sql("SELECT count(*) AS n FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
      { n: 1 },
    ]);
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  });

  test("a transfer that would take a payment's total past 2^63 - 1 is refused; the total stays exact and positive", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    await transferMinted(payment.deposit_address, INT64_MAX); // fits exactly
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("9223372036854.775807");

    const oneMore = await transferMinted(payment.deposit_address, 1n);
    const synced = await stack.sync(payment.id, oneMore);
    expect(synced.status).toBe(422);
    expect(synced.json.error).toMatch(/more than this server can account for/);
    await stack.waitScanned(await stack.chain.head(), { mine: true });
    expect(await transfersOf(payment.id)).toEqual([{ amount: String(INT64_MAX) }]);
    expect((await stored(payment.id)).received).toBe(String(INT64_MAX));
    const after = await stack.getPayment(payment.id);
    expect(after.amount_received).toBe("9223372036854.775807");
    expect(after.transfers.map((t: { amount: string }) => t.amount)).toEqual(["9223372036854.775807"]);
    expect(await stack.events(payment.id)).toEqual(["payment.overpaid", "payment.confirmed"]);
    // The watcher moved on past it: a later payment to another address is still credited.
    const next = await stack.createPayment({ amount: "1.00" });
    await stack.pay(next.deposit_address, usdc("1.00"));
    expect((await stack.waitForStatus(next.id, "confirmed", { mine: true })).amount_received).toBe("1.00");
  });

  test("two transfers waiting to count that together pass 2^63 - 1: the first is credited, the second waits, the watcher goes on", async () => {
    // Under `final` both are recorded before they count (each fits on its own), then counted together.
    const payment = await stack.createPayment({ amount: "25.00", speed: "final" });
    await transferMinted(payment.deposit_address, INT64_MAX - 5n);
    await transferMinted(payment.deposit_address, 10n);
    await stack.waitFor(
      async () => (await transfersOf(payment.id)).length === 2 || undefined,
      15_000,
      "both transfers recorded",
    );
    expect((await stored(payment.id)).received).toBeNull();

    // Anvil's finalized block trails its head by 64 blocks: past both.
    await stack.mine(70);
    await stack.waitFor(async () => (await stored(payment.id)).received === String(INT64_MAX - 5n) || undefined);
    expect(
      await stack.sql<{ amount: string; credited: number }>(
        "SELECT CAST(amount AS TEXT) AS amount, credited_at IS NOT NULL AS credited FROM transfers WHERE payment_id = ? ORDER BY block_number",
        payment.id,
      ),
    ).toEqual([
      { amount: String(INT64_MAX - 5n), credited: 1 },
      { amount: "10", credited: 0 },
    ]);
    // The watcher moved on past it: a later payment to another address is still credited.
    const next = await stack.createPayment({ amount: "1.00" });
    await stack.pay(next.deposit_address, usdc("1.00"));
    expect((await stack.waitForStatus(next.id, "confirmed", { mine: true })).amount_received).toBe("1.00");
  });

  test("a /sync of a large transfer already credited answers 200 like any repeat: the size check is for new transfers only", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const large = await transferMinted(payment.deposit_address, INT64_MAX); // fits exactly, once
    await stack.waitForStatus(payment.id, "confirmed", { mine: true });

    const again = await stack.sync(payment.id, large);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: "confirmed", amount_received: "9223372036854.775807" });
    expect(await transfersOf(payment.id)).toEqual([{ amount: String(INT64_MAX) }]);
  });
});
