/**
 * A paid route in a Hono app, with the official x402 middleware and your Stablegate as its
 * facilitator. test/x402/official-packages.test.ts runs this very file on a local chain.
 */
import { HTTPFacilitatorClient } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/hono";
import { Hono } from "hono";

export interface PaidAppOptions {
  /** Your Stablegate's address, e.g. https://pay.example.com */
  stablegateUrl: string;
  /** An API key of your Stablegate account (sk_live_...): keep it on the server. */
  apiKey: string;
  /** Your account's payout address (accounts without a fee), or a deposit address of one of its payments. */
  payTo: string;
  /** The settlement chain as CAIP-2, e.g. "eip155:8453" for Base. */
  network: `${string}:${string}`;
  /** USDC on that chain, and its EIP-712 name and version (Base: "USD Coin", "2"). */
  usdc: string;
  tokenName: string;
  tokenVersion: string;
}

export function paidApp(o: PaidAppOptions) {
  const auth = { Authorization: `Bearer ${o.apiKey}` };
  const facilitator = new HTTPFacilitatorClient({
    url: `${o.stablegateUrl}/api/v1/x402`,
    createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
  });
  const resourceServer = new x402ResourceServer(facilitator).register(o.network, new ExactEvmScheme());

  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        "GET /report": {
          accepts: {
            scheme: "exact",
            network: o.network,
            payTo: o.payTo,
            // 0.25 USDC in micro-USDC. On Base and Base Sepolia `price: "$0.25"` does the same.
            price: { amount: "250000", asset: o.usdc, extra: { name: o.tokenName, version: o.tokenVersion } },
          },
          description: "Today's report",
          mimeType: "application/json",
        },
      },
      resourceServer,
    ),
  );
  app.get("/report", (c) => c.json({ report: "Sales are up 4% this week." }));
  return app;
}
