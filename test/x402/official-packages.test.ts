/**
 * x402 against the real thing: the official packages from npm (@x402/core, @x402/evm,
 * @x402/fetch, @x402/hono 2.27.0) on a real anvil with the EIP-3009 TestUSDC, the real server
 * and its relayer. Both paths end `confirmed`:
 *
 * - a program pays a Stablegate payment at its `x402_url` with `wrapFetchWithPayment` and the
 *   exact EVM client scheme, from a viem account that holds USDC and no ETH
 *   (docs/examples/x402-pay-a-payment.ts, the docs' example, is what runs);
 * - a Hono app with the official `paymentMiddleware`, its facilitator client pointed at
 *   `{base}/api/v1/x402` with the API key in `createAuthHeaders`, sells a resource that a
 *   program buys through `@x402/fetch` (docs/examples/x402-paid-route.ts runs).
 *
 * Checked against the specification (coinbase/x402 specs/x402-specification-v2.md,
 * transports-v2/http.md, schemes/exact/scheme_exact_evm.md) and the packages' behaviour: the
 * client reads PAYMENT-REQUIRED (base64 JSON) and answers with PAYMENT-SIGNATURE; the 200
 * carries PAYMENT-RESPONSE, which the official decoder reads; the middleware calls /supported
 * at start, then /verify before the handler and /settle after it, and on `settlement_pending`
 * settles once more with the same payload (which Stablegate answers with the same record).
 * Read in the installed 2.27 packages, not in the specification: the client's spend controls
 * (only assets it is told of, $1 a payment by default: the docs' example sets a budget), the
 * facilitator client's 90 s timeout (Stablegate's settle answers within 30 s), and the
 * `settlement_pending` retry. The exact EVM client signs validAfter = now - 600 and
 * validBefore = now + maxTimeoutSeconds, which the core's 30 s margin accepts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodePaymentResponseHeader } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paidApp } from "../../docs/examples/x402-paid-route.ts";
import { payStablegatePayment } from "../../docs/examples/x402-pay-a-payment.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { payingFetch, type Signed, signAuthorization, TOKEN_NAME, TOKEN_VERSION } from "../support/x402.ts";

let chain: TestChain;
let stack: Stack;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

/** A wallet with `amount` of USDC and no ETH at all. */
async function gaslessWallet(amount: bigint) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  await chain.pay(account.address, amount);
  expect(await chain.publicClient.getBalance({ address: account.address })).toBe(0n);
  return { key, account };
}

const chainId = () => stack.config.chain.chainId;

describe("a Stablegate payment paid with @x402/fetch", () => {
  test("the payment object and the public view link its x402_url", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    const url = `${stack.url}/api/public/payments/${payment.id}/x402`;
    expect(payment.x402_url).toBe(`${stack.config.baseUrl}/api/public/payments/${payment.id}/x402`);
    expect((await stack.publicPayment(payment.id)).x402_url).toBe(payment.x402_url);
    const res = await fetch(url);
    expect(res.status).toBe(402);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("payment-required");
    const required = JSON.parse(Buffer.from(res.headers.get("PAYMENT-REQUIRED")!, "base64").toString());
    expect(required.x402Version).toBe(2);
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: `eip155:${chainId()}`,
        amount: "1000000",
        asset: chain.usdc,
        payTo: payment.deposit_address,
        maxTimeoutSeconds: 300,
        // Read from the token itself (name(), version()).
        extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
      },
    ]);
  });

  test("a wallet with USDC and no ETH pays it; it ends confirmed and the payer spent no gas", async () => {
    const payment = await stack.createPayment({ amount: "2.50", description: "API credits" });
    const { key, account } = await gaslessWallet(usdc("10.00"));
    const url = `${stack.url}/api/public/payments/${payment.id}/x402`;

    const paid = await payStablegatePayment(url, key, {
      network: `eip155:${chainId()}`,
      usdc: chain.usdc,
      maxPerPayment: "5000000",
    });

    expect(paid.status).toBe(200);
    expect(paid.settlement).toMatchObject({ success: true, network: `eip155:${chainId()}`, payer: account.address });
    expect(paid.settlement!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(paid.payment.id).toBe(payment.id);
    // Mined, not yet credited (the payment waits for its confirmations): asked again, the endpoint
    // says it is on its way (202) instead of a 402 for the whole amount, which would be paid twice.
    const during = await fetch(url);
    expect(during.status).toBe(202);
    expect(during.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("2.50");
    expect(confirmed.transfers.map((t: { tx_hash: string }) => t.tx_hash)).toContain(paid.settlement!.transaction);
    expect(await chain.usdcBalance(account.address)).toBe(usdc("7.50"));
    expect(await chain.publicClient.getBalance({ address: account.address })).toBe(0n);
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);

    // Paid: the same URL now answers the public view, nothing due, and asks for nothing.
    const again = await fetch(url);
    expect(again.status).toBe(200);
    expect((await again.json()).amount_due).toBe("0.00");
  });
});

describe("the x402 endpoint refuses what the official client would never send", () => {
  const signatureFor = (signed: Signed, payTo: string, amount: bigint) => {
    const accepted = {
      scheme: "exact",
      network: `eip155:${chainId()}`,
      amount: amount.toString(),
      asset: chain.usdc,
      payTo,
      maxTimeoutSeconds: 300,
      extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
    };
    const payload = { x402Version: 2, accepted, payload: { ...signed } };
    return Buffer.from(JSON.stringify(payload)).toString("base64");
  };
  const reasonOf = (res: Response) =>
    JSON.parse(Buffer.from(res.headers.get("PAYMENT-RESPONSE")!, "base64").toString()).errorReason;

  test("an authorization made for one payment, replayed at another: 402, nothing moved", async () => {
    const first = await stack.createPayment({ amount: "1.00" });
    const second = await stack.createPayment({ amount: "1.00" });
    const { account } = await gaslessWallet(usdc("3.00"));
    const signed = await signAuthorization({
      signer: account,
      chainId: chainId(),
      usdc: chain.usdc,
      to: first.deposit_address,
      value: usdc("1.00"),
    });
    const res = await fetch(`${stack.url}/api/public/payments/${second.id}/x402`, {
      headers: { "PAYMENT-SIGNATURE": signatureFor(signed, first.deposit_address, usdc("1.00")) },
    });
    expect(res.status).toBe(402);
    expect(reasonOf(res)).toBe("invalid_exact_evm_payload_recipient_mismatch");
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeTruthy();
    expect(await chain.usdcBalance(account.address)).toBe(usdc("3.00"));
  });

  test("less than the amount due: 402 with the value mismatch", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    const { account } = await gaslessWallet(usdc("3.00"));
    const signed = await signAuthorization({
      signer: account,
      chainId: chainId(),
      usdc: chain.usdc,
      to: payment.deposit_address,
      value: usdc("0.50"),
    });
    const res = await fetch(`${stack.url}/api/public/payments/${payment.id}/x402`, {
      method: "POST",
      headers: { "PAYMENT-SIGNATURE": signatureFor(signed, payment.deposit_address, usdc("0.50")) },
    });
    expect(res.status).toBe(402);
    expect(reasonOf(res)).toBe("invalid_exact_evm_payload_authorization_value_mismatch");
  });

  test("a PAYMENT-SIGNATURE that is not a payload is a 400 in words; an unknown payment a 404", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    const junk = await fetch(`${stack.url}/api/public/payments/${payment.id}/x402`, {
      headers: { "PAYMENT-SIGNATURE": "bm90IGEgcGF5bG9hZA==" },
    });
    expect(junk.status).toBe(400);
    expect(typeof ((await junk.json()) as { error: unknown }).error).toBe("string");
    const unknown = await fetch(`${stack.url}/api/public/payments/0x${"ab".repeat(32)}/x402`);
    expect(unknown.status).toBe(404);
  });
});

describe("a resource sold through the official Hono middleware with Stablegate as facilitator", () => {
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    const app = paidApp({
      stablegateUrl: stack.url,
      apiKey: stack.apiKey,
      payTo: stack.payout,
      network: `eip155:${chainId()}`,
      usdc: chain.usdc,
      tokenName: TOKEN_NAME,
      tokenVersion: TOKEN_VERSION,
    });
    server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch });
  });
  afterAll(() => server?.stop(true));

  test("a program buys it; the settlement is a confirmed payment of the account, with payer, tx and resource", async () => {
    const { account } = await gaslessWallet(usdc("1.00"));
    const resource = `http://127.0.0.1:${server.port}/report`;
    const before = await chain.usdcBalance(stack.payout);

    const res = await payingFetch(account, chainId(), chain.usdc)(resource);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ report: "Sales are up 4% this week." });
    const settlement = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE")!);
    expect(settlement).toMatchObject({ success: true, payer: account.address });
    expect(await chain.usdcBalance(stack.payout)).toBe(before + usdc("0.25"));
    expect(await chain.publicClient.getBalance({ address: account.address })).toBe(0n);

    const list = await stack.request("/api/v1/payments?limit=5");
    const made = list.json.data.find(
      (p: { metadata: Record<string, string> | null }) => p.metadata?.x402_tx_hash === settlement.transaction,
    );
    // Settling once mined; confirmed once the transfer has the confirmations on top.
    expect(made.status).toBe("settling");
    const recorded = await stack.waitForStatus(made.id, "confirmed", { mine: true });
    expect(recorded).toMatchObject({
      status: "confirmed",
      amount: "0.25",
      amount_received: "0.25",
      description: "Today's report",
      metadata: {
        x402_resource: resource,
        x402_payer: account.address,
        x402_tx_hash: settlement.transaction,
        x402_network: `eip155:${chainId()}`,
        x402_pay_to: stack.payout,
      },
    });
    expect(await stack.events(recorded.id)).toEqual(["payment.settling", "payment.confirmed"]);
    const csv = await stack.request("/api/v1/payments.csv");
    expect(String(csv.json)).toContain(recorded.id);
    // Settled straight to the payout address: nothing for the settler to sweep.
    const [row] = await stack.sql<{ amount_settled: number }>(
      "SELECT amount_settled FROM payments WHERE id = ?",
      recorded.id,
    );
    expect(BigInt(row!.amount_settled)).toBe(usdc("0.25"));
  });

  test("without a payment the middleware answers 402 with Stablegate's requirements", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/report`);
    expect(res.status).toBe(402);
    const required = JSON.parse(Buffer.from(res.headers.get("PAYMENT-REQUIRED")!, "base64").toString());
    expect(required.accepts[0]).toMatchObject({ scheme: "exact", payTo: stack.payout, amount: "250000" });
  });
});
