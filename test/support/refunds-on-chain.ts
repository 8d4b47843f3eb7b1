/**
 * Refunds on a real anvil, for the tests that watch the chain pay them: a paid payment, a refund
 * of it, the merchant's transfer made exactly as `payment_instructions` says, and waiting on a
 * refund's status.
 *
 *   const payment = await paidPayment(stack, "25.00");
 *   const refund = await createRefund(stack, payment.id, { amount: "10.00", refund_address });
 *   const merchant = await merchantWallet(stack.chain, usdc("100.00"));
 *   const sent = await payRefund(stack.chain, merchant, refund);
 *   await waitForRefund(stack, refund.id, "succeeded", { mine: true });
 */
import { type Address, type Hex, parseAbi } from "viem";
import { mined, type TestWallet, testTokenAbi, walletClientFor } from "./chain.ts";
import type { Stack } from "./stack.ts";
import { randomAddress, type TestChain, usdc } from "./test-chain.ts";

/** A payment of `amount` paid in full on the stack's chain and `confirmed` (settled to the payout). */
export async function paidPayment(stack: Stack, amount = "25.00", body: Record<string, unknown> = {}): Promise<any> {
  const payment = await stack.createPayment({ amount, ...body });
  await stack.pay(payment.deposit_address, usdc(amount));
  return stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
}

/** POST /api/v1/payments/{id}/refunds; a fresh refund address unless the body names one. Fails unless 201. */
export async function createRefund(stack: Stack, paymentId: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await stack.request(`/api/v1/payments/${paymentId}/refunds`, {
    body: { refund_address: randomAddress(), ...body },
  });
  if (res.status !== 201) throw new Error(`creating a refund: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

export async function getRefund(stack: Stack, id: string): Promise<any> {
  const res = await stack.request(`/api/v1/refunds/${id}`);
  if (res.status !== 200) throw new Error(`GET /api/v1/refunds/${id}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** The merchant's own wallet, not the server's: ETH for gas and `units` test USDC. */
export async function merchantWallet(chain: TestChain, units: bigint): Promise<TestWallet> {
  const wallet = walletClientFor(chain.rpcUrl, await chain.fundedKey());
  await mined(
    chain.publicClient,
    chain.deployer.writeContract({
      address: chain.usdc,
      abi: testTokenAbi,
      functionName: "mint",
      args: [wallet.account.address, units],
    }),
  );
  return wallet;
}

/**
 * Pays a refund as its `payment_instructions` say, and only from them: the calldata `data` sent
 * to `token`, from the merchant's wallet. Waits for the receipt unless `wait` is false.
 */
export async function payRefund(
  chain: TestChain,
  from: TestWallet,
  refund: { payment_instructions: { token: string; data: string; chain_id: number } | null },
  { wait = true } = {},
): Promise<{ hash: Hex; blockNumber: bigint | null }> {
  const instructions = refund.payment_instructions;
  if (!instructions) throw new Error("the refund has no payment_instructions (no address yet, or canceled)");
  if (instructions.chain_id !== chain.anvil.chainId) throw new Error(`instructions for chain ${instructions.chain_id}`);
  const hash = await from.sendTransaction({ to: instructions.token as Address, data: instructions.data as Hex });
  if (!wait) return { hash, blockNumber: null };
  const receipt = await mined(chain.publicClient, Promise.resolve(hash));
  return { hash, blockNumber: receipt.blockNumber };
}

/** A plain USDC transfer from the merchant's wallet (not from instructions): other amounts, early transfers. */
export async function transferUsdc(chain: TestChain, from: TestWallet, to: string, units: bigint) {
  const hash = await from.writeContract({
    address: chain.usdc,
    abi: parseAbi(["function transfer(address to, uint256 amount) returns (bool)"]),
    functionName: "transfer",
    args: [to as Address, units],
  });
  const receipt = await mined(chain.publicClient, Promise.resolve(hash));
  return { hash, blockNumber: receipt.blockNumber };
}

/** Waits (mining a block per poll when `mine`) until the refund has `status`; returns it. */
export function waitForRefund(
  stack: Stack,
  id: string,
  status: string,
  { mine = false, timeoutMs = 20_000 } = {},
): Promise<any> {
  const check = async () => {
    const refund = await getRefund(stack, id);
    return refund.status === status ? refund : undefined;
  };
  const what = `refund ${id} to be ${status}`;
  return mine ? stack.mineUntil(check, timeoutMs, what) : stack.waitFor(check, timeoutMs, what);
}

/** Waits until the refund has a transfer seen for it (not counted yet); returns it. */
export function waitForSeen(stack: Stack, id: string, timeoutMs = 20_000): Promise<any> {
  return stack.waitFor(
    async () => {
      const refund = await getRefund(stack, id);
      return refund.tx_hash !== null ? refund : undefined;
    },
    timeoutMs,
    `a transfer seen for refund ${id}`,
  );
}
