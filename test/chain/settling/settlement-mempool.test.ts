/**
 * A settlement waiting in the mempool: blocks are mined by hand, so it is rebroadcast (which the
 * node refuses as a duplicate, "transaction already imported" in anvil) and, once the injected
 * clock passes the stuck threshold, replaced with higher fees.
 */
import { expect, test } from "bun:test";
import { type Hex, parseGwei, toHex } from "viem";
import { useStack } from "../../support/per-file.ts";
import { usdc } from "../../support/test-chain.ts";
import { settlerRanSince } from "../../support/wait.ts";

const stack = useStack({ automine: false, logLevel: "debug" });

test("a settlement rebroadcast while it waits for a block logs no warning", async () => {
  // Only this test's lines: in a random order another test's small block may already have drawn
  // a refused rebroadcast's warning from the same server.
  const logsBefore = stack.logs().length;
  const ownLines = () => stack.logs().slice(logsBefore);
  const before = await stack.usdcBalance(stack.payout);
  const payment = await stack.createPayment({ amount: "25.00" });
  await stack.pay(payment.deposit_address, usdc("25.00"), { wait: false });
  // The transfer's block and its two confirmations, and no more: mining on until "settling" could
  // mine the settlement itself, broadcast a moment before the status was read.
  await stack.mine(3);
  await stack.waitForStatus(payment.id, "settling");
  const sent = await stack.settlementSent(payment.id); // in the mempool: no block comes by itself

  // The settler's next look finds it unmined and sends it again.
  await stack.waitFor(
    () => ownLines().some((line) => /rebroadcast|broadcast refused/.test(line.msg)),
    10_000,
    "a rebroadcast",
  );
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("25.00"));

  const lines = ownLines();
  expect(lines.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
  expect(
    lines.filter((line) => line.level === "info" && line.payment_id === payment.id).map((line) => line.msg),
  ).toEqual(["settlement sent", "settlement confirmed"]);
  expect(
    lines.some((line) => line.level === "info" && line.msg === "settlement confirmed" && line.tx_hash === sent),
  ).toBe(true);
});

test("a settlement held unmined past the stuck threshold is replaced with higher fees on its nonce and lands once", async () => {
  const { anvil, publicClient } = stack.chain;
  const before = await stack.usdcBalance(stack.payout);
  const payment = await stack.createPayment({ amount: "3.00" });
  await stack.pay(payment.deposit_address, usdc("3.00"), { wait: false });
  // The transfer's block and its two confirmations, and no more: mining on until "settling" could
  // mine the settlement itself, broadcast a moment before the status was read.
  await stack.mine(3);
  await stack.waitForStatus(payment.id, "settling");
  const first = await publicClient.getTransaction({ hash: await stack.settlementSent(payment.id) });
  expect(first.blockNumber).toBeNull();

  stack.clock.advance(31_000); // past the 30 s after which a held transaction counts as stuck
  const replacement = await stack.waitFor(
    async () => {
      const [row] = await stack.sql<{ tx_hash: Hex; tx_hashes: string }>(
        "SELECT tx_hash, tx_hashes FROM settlements WHERE payment_id = ?",
        payment.id,
      );
      return row && row.tx_hash !== first.hash ? row : undefined;
    },
    10_000,
    "a replacement",
  );
  expect(JSON.parse(replacement.tx_hashes)).toEqual([first.hash, replacement.tx_hash]);
  const second = await stack.waitFor(
    () => publicClient.getTransaction({ hash: replacement.tx_hash }),
    10_000,
    "the replacement to reach the node",
  );
  expect(second.nonce).toBe(first.nonce);
  expect(second.input).toBe(first.input);
  expect(second.maxFeePerGas!).toBeGreaterThanOrEqual((first.maxFeePerGas! * 115n) / 100n);
  expect(second.maxPriorityFeePerGas!).toBeGreaterThanOrEqual((first.maxPriorityFeePerGas! * 115n) / 100n);

  // A base fee the first transaction cannot pay, the replacement can.
  await anvil.rpc("anvil_setNextBlockBaseFeePerGas", [toHex((first.maxFeePerGas! * 11n) / 10n)]);
  await stack.mine(1);
  expect((await publicClient.getTransactionReceipt({ hash: second.hash })).status).toBe("success");
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.sql("SELECT state, tx_hash FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "mined", tx_hash: second.hash },
  ]);
  expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("3.00"));
  expect(await publicClient.getTransactionReceipt({ hash: first.hash }).catch(() => null)).toBeNull();
});

test("a stuck settlement is not replaced when outbidding it would pay far above the going fees: it is sent again as it is", async () => {
  const { anvil, publicClient } = stack.chain;
  const before = await stack.usdcBalance(stack.payout);
  const payment = await stack.createPayment({ amount: "2.00" });
  await stack.pay(payment.deposit_address, usdc("2.00"), { wait: false });
  await stack.mine(1);
  // A fee spike while the credit gathers its confirmations: the settlement is signed against it.
  await anvil.rpc("anvil_setNextBlockBaseFeePerGas", [toHex(parseGwei("100"))]);
  await stack.mine(2);
  await stack.waitForStatus(payment.id, "settling");
  const first = await publicClient.getTransaction({ hash: await stack.settlementSent(payment.id) });
  expect(first.blockNumber).toBeNull();

  // The spike passes in a block too small to hold the settlement, which so stays in the mempool.
  await anvil.rpc("evm_setBlockGasLimit", [toHex(first.gas - 1n)]);
  await anvil.rpc("anvil_setNextBlockBaseFeePerGas", [toHex(parseGwei("1"))]);
  await stack.mine(1);
  await anvil.rpc("evm_setBlockGasLimit", [toHex(30_000_000n)]);
  // A rebroadcast that met the small block was refused by the node, with a warning: what this
  // test holds to is the settler's handling of the stuck settlement from here on.
  await settlerRanSince(stack);
  const logsBefore = stack.logs().length;
  expect((await publicClient.getTransaction({ hash: first.hash })).blockNumber).toBeNull();
  const going = await publicClient.estimateFeesPerGas();
  expect((first.maxFeePerGas! * 115n) / 100n).toBeGreaterThan(going.maxFeePerGas * 3n); // else outbidding would be fine

  stack.clock.advance(31_000); // past the 30 s after which a held transaction counts as stuck
  await settlerRanSince(stack);
  expect(await stack.sql("SELECT tx_hash, tx_hashes FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { tx_hash: first.hash, tx_hashes: JSON.stringify([first.hash]) },
  ]);
  expect((await stack.readyz()).chain.settlement.last_error).toBeNull();
  expect(
    stack
      .logs()
      .slice(logsBefore)
      .filter((line) => line.level === "warn" || line.level === "error"),
  ).toEqual([]);

  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.sql("SELECT state, tx_hash FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
    { state: "mined", tx_hash: first.hash },
  ]);
  expect((await stack.usdcBalance(stack.payout)) - before).toBe(usdc("2.00"));
});
