/**
 * A refund end to end through the API alone, with the shipped binary (dist/stablegate serve) on a
 * real anvil: a payment paid and confirmed, part of it refunded to an address the merchant names,
 * the merchant's own wallet paying it exactly as `payment_instructions` say, the refund
 * `succeeded` with that transaction, and its webhooks delivered, signed, to a real receiver.
 *
 * STABLEGATE_TEST_BINARY=<path of another build's dist/stablegate> runs the same against it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { createRefund, merchantWallet, paidPayment, payRefund, waitForRefund } from "../support/refunds-on-chain.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { usdc } from "../support/test-chain.ts";

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = startReceiver();
  stack = await startStack({
    subprocess: true,
    binary: true,
    confirmations: 2,
    env: { STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  receiver?.stop();
});

test("pay, refund part by API, the merchant pays it from payment_instructions: succeeded with the tx hash, webhooks delivered and signed", async () => {
  const endpoint = await stack.request("/api/v1/webhook_endpoints", { body: { url: receiver.url } });
  expect(endpoint.status).toBe(201);
  const payment = await paidPayment(stack, "25.00");
  // The payer's own wallet: an account of the chain, not a made-up address.
  const payer = privateKeyToAccount(await stack.chain.fundedKey()).address;

  const refund = await createRefund(stack, payment.id, {
    amount: "10.00",
    reason: "one item returned",
    metadata: { order: "A-17" },
    refund_address: payer,
  });
  const transfer = { abi: erc20Abi, functionName: "transfer", args: [payer, usdc("10.00")] } as const;
  expect(refund).toMatchObject({
    object: "refund",
    payment: payment.id,
    amount: "10.00",
    status: "awaiting_payment",
    refund_address: payer,
    tx_hash: null,
    metadata: { order: "A-17" },
    payment_instructions: {
      chain_id: stack.chain.anvil.chainId,
      token: getAddress(stack.chain.usdc),
      to: payer,
      amount: "10.00",
      data: encodeFunctionData(transfer),
      uri: `ethereum:${getAddress(stack.chain.usdc)}@${stack.chain.anvil.chainId}/transfer?address=${payer}&uint256=10000000`,
    },
  });

  const merchant = await merchantWallet(stack.chain, usdc("50.00"));
  const sent = await payRefund(stack.chain, merchant, refund);
  const succeeded = await waitForRefund(stack, refund.id, "succeeded", { mine: true, timeoutMs: 30_000 });
  expect(succeeded).toMatchObject({ tx_hash: sent.hash, block_number: Number(sent.blockNumber), amount: "10.00" });
  expect(await stack.usdcBalance(payer)).toBe(usdc("10.00"));

  const after = await stack.getPayment(payment.id);
  expect(after).toMatchObject({ status: "confirmed", amount_received: "25.00", amount_refunded: "10.00" });
  const listed = await stack.request(`/api/v1/payments/${payment.id}/refunds`);
  expect(listed.json.data.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
    [refund.id, "succeeded"],
  ]);

  // Each refund event reaches the receiver, signed with the endpoint's secret, carrying the refund.
  const wanted = ["refund.created", "refund.payable", "refund.succeeded"];
  const hooks = await stack.waitFor(
    () => {
      const mine = receiver.hits
        .map((hit) => ({ hit, body: JSON.parse(hit.body) }))
        .filter(({ body }) => body.data?.refund?.id === refund.id);
      return wanted.every((type) => mine.some(({ body }) => body.type === type)) ? mine : undefined;
    },
    20_000,
    "the refund's three webhooks",
  );
  const verifier = new Webhook(endpoint.json.secret);
  for (const { hit } of hooks) expect(() => verifier.verify(hit.body, Object.fromEntries(hit.headers))).not.toThrow();
  const byType = new Map(hooks.map(({ body }) => [body.type, body.data.refund]));
  expect(byType.get("refund.created")).toMatchObject({ status: "awaiting_payment", tx_hash: null });
  expect(byType.get("refund.payable")).toMatchObject({ status: "awaiting_payment", refund_address: payer });
  expect(byType.get("refund.succeeded")).toMatchObject({
    status: "succeeded",
    tx_hash: sent.hash,
    block_number: Number(sent.blockNumber),
    metadata: { order: "A-17" },
  });
  expect((await stack.events(payment.id)).filter((t) => t.startsWith("refund."))).toEqual(wanted);
});
