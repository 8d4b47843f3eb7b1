/**
 * A facilitator settlement to the payout address whose server dies (kill -9) after the relayer
 * sent the transfer and before /settle answered: the server started again records it, as a
 * confirmed payment, once (the follower, src/x402/index.ts), and a settle of the same payload
 * then answers the same transaction. Anvil mines only when told, so the crash falls between the
 * broadcast and the block.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { facilitatorRequest, signAuthorization } from "../support/x402.ts";

let chain: TestChain;
let stack: Stack;

// A server process of its own (on PostgreSQL, its own database too): more than the hook's 5 s on a busy machine.
beforeAll(async () => {
  chain = await startChain({ automine: false });
  stack = await startStack({ chain, subprocess: true });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

const settle = (body: unknown) =>
  fetch(`${stack.url}/api/v1/x402/settle`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

test("killed between the broadcast and its block: recorded once after the restart", async () => {
  const signer = privateKeyToAccount(generatePrivateKey());
  await chain.pay(signer.address, usdc("2.00"), { wait: false });
  await stack.mineUntil(async () => (await chain.usdcBalance(signer.address)) === usdc("2.00"));
  const chainId = stack.config.chain.chainId;
  const signed = await signAuthorization({ signer, chainId, usdc: chain.usdc, to: stack.payout, value: usdc("1.00") });
  const body = facilitatorRequest({ chainId, usdc: chain.usdc, payTo: stack.payout, amount: usdc("1.00"), signed });

  const answered = settle(body).catch(() => null); // the crash cuts it
  await stack.waitFor(
    async () =>
      (
        await stack.sql<{ status: string }>("SELECT status FROM authorizations WHERE from_address = ?", signer.address)
      )[0]?.status === "submitted",
    30_000,
    "the transfer sent",
  );
  await stack.crash();
  expect(await answered).toBeNull();
  const before = await chain.usdcBalance(stack.payout);
  await stack.restart();

  const recorded = await stack.mineUntil(
    async () =>
      (
        await stack.sql<{ payment_id: string | null; state: string }>(
          "SELECT payment_id, state FROM x402_settlements WHERE payer = ?",
          signer.address,
        )
      ).find((r) => r.state === "recorded"),
    30_000,
    "the settlement recorded",
  );
  const payment = await stack.getPayment(recorded.payment_id!);
  expect(payment).toMatchObject({ status: "confirmed", amount: "1.00", amount_received: "1.00" });
  expect(await chain.usdcBalance(stack.payout)).toBe(before + usdc("1.00"));

  const again = (await (await settle(body)).json()) as { success: boolean; transaction: string };
  expect(again).toMatchObject({ success: true, transaction: payment.metadata.x402_tx_hash });
  expect(await chain.usdcBalance(stack.payout)).toBe(before + usdc("1.00"));
  const made = await stack.sql<{ id: string }>(
    "SELECT id FROM payments WHERE metadata LIKE ?",
    `%${again.transaction}%`,
  );
  expect(made).toHaveLength(1);
}, 90_000);
