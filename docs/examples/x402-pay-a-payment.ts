/**
 * A program paying a Stablegate payment at its `x402_url` with the official fetch wrapper, from a
 * wallet that holds USDC and no ETH. test/x402/official-packages.test.ts runs this very file.
 */
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface Budget {
  /** The chain as CAIP-2 ("eip155:8453") and its USDC: the client pays only assets it is told of. */
  network: `${string}:${string}`;
  usdc: string;
  /** The most one payment may take, in micro-USDC ("50000000" is 50 USDC). The client's default is $1. */
  maxPerPayment: string;
}

export async function payStablegatePayment(x402Url: string, privateKey: Hex, budget: Budget) {
  const account = privateKeyToAccount(privateKey);
  const client = new x402Client().register(budget.network, new ExactEvmScheme(account));
  client.setSpendControls({
    allowedAssets: [{ network: budget.network, asset: budget.usdc, maxAmountPerPayment: budget.maxPerPayment }],
  });
  const fetchWithPayment = wrapFetchWithPayment(fetch, client);

  const res = await fetchWithPayment(x402Url);
  const header = res.headers.get("PAYMENT-RESPONSE");
  return {
    status: res.status, // 200 paid, 202 sent and not mined yet, 402 refused (the reason is in PAYMENT-REQUIRED)
    settlement: header ? decodePaymentResponseHeader(header) : null, // { success, transaction, network, payer }
    payment: await res.json(), // the payment's public view: status, amount_due...
  };
}
