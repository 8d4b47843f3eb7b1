/**
 * A fee recipient on USDC's blocklist (TestUSDC blocks as Circle's FiatToken does: see
 * test/chain/deposit-factory-v3.test.ts) no longer stops settlements: the real server settles a
 * fee-bearing payment through its version 3 deposit address, the payout gets everything, the
 * operator is warned, and the merchant's figures (export, dashboard) show no fee taken. Real anvil,
 * real server.
 */
import { expect, test } from "bun:test";
import { type Address, parseAbi } from "viem";
import { CSV_COLUMNS } from "../../../src/payments/csv.ts";
import { mined } from "../../support/chain.ts";
import { createDashboardUser, signIn } from "../../support/dashboard.ts";
import { useStack } from "../../support/per-file.ts";
import { api } from "../../support/server.ts";
import { randomAddress, usdc } from "../../support/test-chain.ts";

const FEE_RECIPIENT = randomAddress();

const stack = useStack({ feeBps: 100, feeRecipient: FEE_RECIPIENT, logLevel: "warn" });

const blocklistAbi = parseAbi(["function blacklist(address account)", "function unBlacklist(address account)"]);

/** Puts `account` on the USDC blocklist (or takes it off), as Circle's blacklister would. */
async function blacklist(account: Address, on: boolean): Promise<void> {
  const { publicClient, deployer, usdc: token } = stack.chain;
  await mined(
    publicClient,
    deployer.writeContract({
      address: token,
      abi: blocklistAbi,
      functionName: on ? "blacklist" : "unBlacklist",
      args: [account],
    }),
  );
}

/** The payment's line of the merchant's CSV export, by column. */
async function exportedLine(paymentId: string): Promise<Record<string, string>> {
  const res = await api(stack.url, stack.apiKey)("/api/v1/payments.csv");
  expect(res.status).toBe(200);
  const line = res.text.split("\r\n").find((l) => l.startsWith(`${paymentId},`));
  expect(line).toBeDefined();
  const fields = line!.split(",");
  return Object.fromEntries(CSV_COLUMNS.map((name, i) => [name, fields[i]!]));
}

/** The Fee and Net rows of the payment's dashboard page, signed in as a user of the stack's account. */
async function dashboardSplit(paymentId: string): Promise<{ fee: string; net: string }> {
  const client = await signIn(stack.url, await createDashboardUser(stack.env, stack.accountId));
  const res = await client.get(`/dashboard/payments/${paymentId}`);
  expect(res.status).toBe(200);
  const page = await res.text();
  const fee = /<dt>Fee<\/dt><dd>([0-9.]+) USDC <span class="muted">\(1\.00%\)<\/span><\/dd>/.exec(page)?.[1];
  const net = /<dt>Net to you<\/dt><dd>([0-9.]+) USDC<\/dd>/.exec(page)?.[1];
  if (!fee || !net) throw new Error(`no Fee or Net row on the payment page of ${paymentId}`);
  return { fee, net };
}

test("with the fee recipient blocked, a fee-bearing payment is confirmed and the payout paid in full", async () => {
  await blacklist(FEE_RECIPIENT, true);
  const payment = await stack.createPayment({ amount: "25.00" });
  expect(payment.fee_bps).toBe(100);
  expect(await stack.sql("SELECT factory_version FROM payments WHERE id = ?", payment.id)).toEqual([
    { factory_version: 3 },
  ]);
  await stack.pay(payment.deposit_address, usdc("25.00"));

  const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
  expect(confirmed.amount_received).toBe("25.00");
  expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
  expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
  expect(await stack.usdcBalance(FEE_RECIPIENT)).toBe(0n);
  expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);

  // What was settled, with the fee as actually paid: none.
  expect(
    await stack.sql(
      "SELECT CAST(amount_settled AS TEXT) AS settled, CAST(fee_settled AS TEXT) AS fee FROM payments WHERE id = ?",
      payment.id,
    ),
  ).toEqual([{ settled: String(usdc("25.00")), fee: "0" }]);
  expect(await exportedLine(payment.id)).toMatchObject({ fee: "0.00", net: "25.00" });
  expect(await dashboardSplit(payment.id)).toEqual({ fee: "0.00", net: "25.00" });
  // The operator hears of it, with the payment and the fee that was not paid.
  const [skipped, ...more] = stack.logs().filter((line) => line.level === "warn" && line.payment_id === payment.id);
  expect(more).toEqual([]);
  expect(skipped).toMatchObject({ msg: expect.stringContaining("without the fee"), fee: String(usdc("0.25")) });

  // Once the fee recipient is off the list, the fee is taken again.
  await blacklist(FEE_RECIPIENT, false);
  const next = await stack.createPayment({ amount: "10.00" });
  await stack.pay(next.deposit_address, usdc("10.00"));
  await stack.waitForStatus(next.id, "confirmed", { mine: true });
  expect(await stack.usdcBalance(FEE_RECIPIENT)).toBe(usdc("0.10"));
  expect(await exportedLine(next.id)).toMatchObject({ fee: "0.10", net: "9.90" });
  expect(await dashboardSplit(next.id)).toEqual({ fee: "0.10", net: "9.90" });
}, 60_000);
