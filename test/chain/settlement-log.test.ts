/**
 * What a normal settlement leaves in the server's log: progress at info, and no warning. Blocks
 * are mined by hand so the settlement waits in the mempool and is rebroadcast at least once,
 * which the node refuses as a duplicate ("transaction already imported" in anvil).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Stack, startStack, usdc } from "../support/stack.ts";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ automine: false, logLevel: "debug" });
});

afterAll(async () => {
  await stack?.stop();
});

test("a settlement rebroadcast while it waits for a block logs no warning", async () => {
  const payment = await stack.createPayment({ amount: "25.00" });
  await stack.pay(payment.deposit_address, usdc("25.00"), { wait: false });
  await stack.waitForStatus(payment.id, "settling", { mine: true });
  const sent = await stack.settlementSent(payment.id); // in the mempool: no block comes by itself

  // The settler's next look finds it unmined and sends it again.
  await stack.waitFor(() => stack.logs().some((line) => /rebroadcast|broadcast refused/.test(line.msg)), 10_000, "a rebroadcast");
  await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));

  const lines = stack.logs();
  expect(lines.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
  expect(lines.filter((line) => line.level === "info" && line.payment_id === payment.id).map((line) => line.msg)).toEqual(["settlement sent", "settlement confirmed"]);
  expect(lines.some((line) => line.level === "info" && line.msg === "settlement confirmed" && line.tx_hash === sent)).toBe(true);
});
