/**
 * Stablegate's x402 facilitator (`{base}/api/v1/x402`) against hostile requests, on a real anvil
 * with the EIP-3009 TestUSDC and the real relayer. Requests are made as the official resource
 * server makes them (`{x402Version, paymentPayload, paymentRequirements}`, v2 §7.1/7.2), the
 * authorizations signed with viem over the token's EIP-712 domain as the official exact EVM
 * client signs them; reasons are the spec's §9 strings where it names one (else the official
 * @x402/evm facilitator's), with the words in invalidMessage / errorMessage.
 *
 * Cases: replayed authorization, wrong chain (network and signed domain), wrong amount, wrong
 * payTo, expired, a signature by someone else, a payer without the balance, settle twice (same
 * answer, money once, one payment), dust, another account's payTo (payout and deposit address),
 * the fee refusal for a payout-address payTo, and a deposit-address settlement credited to its payment.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { AUTHORIZATIONS_PER_CLIENT_PER_HOUR } from "../../src/chain/authorizations/limits.ts";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../support/test-chain.ts";
import { facilitatorRequest, type Signed, signAuthorization } from "../support/x402.ts";

let chain: TestChain;
let stack: Stack;
/** Another account of the same server, with a fee (it may not take its payout address as payTo). */
let feeShop: { apiKey: string; payout: Address };
/** A third account, a stranger to the first. */
let stranger: { apiKey: string; payout: Address };

async function createAccount(name: string, feeBps?: number) {
  const payout = randomAddress();
  const out = (await runAccountCommand(
    "account",
    ["create", "--name", name, "--payout-address", payout, ...(feeBps ? ["--fee-bps", String(feeBps)] : [])],
    stack.env,
  )) as { api_key: string };
  return { apiKey: out.api_key, payout };
}

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain, feeRecipient: randomAddress() });
  feeShop = await createAccount("Fee Shop", 100);
  stranger = await createAccount("Stranger Shop");
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

const chainId = () => stack.config.chain.chainId;

async function call(op: "verify" | "settle", body: unknown, apiKey = stack.apiKey) {
  const res = await fetch(`${stack.url}/api/v1/x402/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function payer(funds = usdc("5.00")) {
  const account = privateKeyToAccount(generatePrivateKey());
  if (funds > 0n) await chain.pay(account.address, funds);
  return account;
}

/** A request to pay `payTo` `amount`, signed by `signer` unless changed by `over`. */
async function request(payTo: Address, amount: bigint, over: Partial<Parameters<typeof signAuthorization>[0]> = {}) {
  const signer = over.signer ?? (await payer());
  const signed: Signed = await signAuthorization({
    signer,
    chainId: chainId(),
    usdc: chain.usdc,
    to: payTo,
    value: amount,
    ...over,
  });
  return { signer, body: facilitatorRequest({ chainId: chainId(), usdc: chain.usdc, payTo, amount, signed }) };
}

const verdict = async (body: unknown, apiKey?: string) => {
  const res = await call("verify", body, apiKey);
  expect(res.status).toBe(200);
  return res.json;
};

describe("the facilitator's /supported", () => {
  test("exact on the settlement chain, the relayer as signer, no extensions declared", async () => {
    const res = await fetch(`${stack.url}/api/v1/x402/supported`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
    const body = (await res.json()) as any;
    expect(body.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: `eip155:${chainId()}` }]);
    expect(body.extensions).toEqual([]);
    expect(body.signers["eip155:*"]).toHaveLength(1);
  });
});

describe("refusals, each answered isValid false with the reason, and nothing moved", () => {
  test("wrong chain: another network, or a signature over another chain's domain", async () => {
    const { body } = await request(stack.payout, usdc("1.00"));
    const other = { ...body.paymentRequirements, network: "eip155:1" };
    const onOther = {
      ...body,
      paymentRequirements: other,
      paymentPayload: { ...body.paymentPayload, accepted: other },
    };
    expect(await verdict(onOther)).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    const signedElsewhere = (await request(stack.payout, usdc("1.00"), { chainId: 1 })).body;
    expect(await verdict(signedElsewhere)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_signature",
    });
  });

  test("wrong amount: the authorization is for less than the requirements ask", async () => {
    const { body } = await request(stack.payout, usdc("1.00"));
    body.paymentRequirements.amount = "2000000";
    body.paymentPayload.accepted.amount = "2000000";
    expect(await verdict(body)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_authorization_value_mismatch",
    });
  });

  test("wrong payTo: the authorization pays someone else than the requirements' payTo", async () => {
    const elsewhere = randomAddress();
    const { body } = await request(elsewhere, usdc("1.00"));
    body.paymentRequirements.payTo = stack.payout;
    body.paymentPayload.accepted.payTo = stack.payout;
    const answer = await verdict(body);
    expect(answer).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_payload_recipient_mismatch" });
    const settled = await call("settle", body);
    expect(settled.json).toMatchObject({ success: false, transaction: "" });
    expect(await chain.usdcBalance(elsewhere)).toBe(0n);
  });

  test("expired", async () => {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const { body } = await request(stack.payout, usdc("1.00"), { validBefore: now - 10n });
    expect(await verdict(body)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_authorization_valid_before",
    });
  });

  test("a signature by someone else for a payer who has the funds", async () => {
    const victim = await payer(usdc("5.00"));
    const thief = privateKeyToAccount(generatePrivateKey());
    const { body } = await request(stack.payout, usdc("1.00"), { signer: thief, from: victim.address });
    expect(await verdict(body)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_signature",
      payer: victim.address,
    });
    expect((await call("settle", body)).json.success).toBe(false);
    expect(await chain.usdcBalance(victim.address)).toBe(usdc("5.00"));
  });

  test("a payer without the balance", async () => {
    const broke = await payer(usdc("0.50"));
    const { body } = await request(stack.payout, usdc("1.00"), { signer: broke });
    expect(await verdict(body)).toMatchObject({ isValid: false, invalidReason: "insufficient_funds" });
    expect((await call("settle", body)).json).toMatchObject({ success: false, errorReason: "insufficient_funds" });
  });

  test("dust: below the relayer's floor, never sent", async () => {
    const { body } = await request(stack.payout, 1n);
    const answer = await verdict(body);
    expect(answer).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_authorization_value_too_low",
    });
    expect(answer.invalidMessage).toMatch(/\d/);
  });

  test("another account's payTo: its payout address or a deposit address of its payments", async () => {
    const { body } = await request(stranger.payout, usdc("1.00"));
    expect(await verdict(body)).toMatchObject({ isValid: false, invalidReason: "invalid_pay_to" });
    expect((await call("settle", body)).json).toMatchObject({ success: false, errorReason: "invalid_pay_to" });
    expect(await chain.usdcBalance(stranger.payout)).toBe(0n);

    const theirs = await fetch(`${stack.url}/api/v1/payments`, {
      method: "POST",
      headers: { authorization: `Bearer ${stranger.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "1.00" }),
    }).then((r) => r.json() as Promise<any>);
    const toTheirDeposit = (await request(theirs.deposit_address, usdc("1.00"))).body;
    expect(await verdict(toTheirDeposit)).toMatchObject({ isValid: false, invalidReason: "invalid_pay_to" });
    // Their own key is served for the same request.
    expect(await verdict(toTheirDeposit, stranger.apiKey)).toMatchObject({ isValid: true });
  });

  test("an account with a fee may not take its payout address as payTo: told to use a deposit address", async () => {
    const { body } = await request(feeShop.payout, usdc("1.00"));
    const answer = await verdict(body, feeShop.apiKey);
    expect(answer).toMatchObject({ isValid: false, invalidReason: "invalid_pay_to" });
    expect(answer.invalidMessage).toContain("deposit address");
  });

  test("a body that is no facilitator request is a 400 in words", async () => {
    const res = await call("verify", { x402Version: 2, paymentPayload: {} });
    expect(res.status).toBe(400);
    expect(typeof res.json.error).toBe("string");
  });
});

describe("settling", () => {
  test("to the payout address: settled once however often asked, one payment, confirmed at depth, replays refused", async () => {
    const { signer, body } = await request(stack.payout, usdc("1.25"));
    const before = await chain.usdcBalance(stack.payout);
    expect(await verdict(body)).toEqual({ isValid: true, payer: signer.address });

    // Three at once, before any is recorded: one transfer, one payment, the same answer to each.
    const [first, second, third] = await Promise.all([
      call("settle", body),
      call("settle", body),
      call("settle", body),
    ]);
    expect(first.json).toMatchObject({ success: true, payer: signer.address, network: `eip155:${chainId()}` });
    expect(first.json.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(second.json).toEqual(first.json);
    expect(third.json).toEqual(first.json);
    expect((await call("settle", body)).json).toEqual(first.json);
    expect(await chain.usdcBalance(stack.payout)).toBe(before + usdc("1.25"));
    expect(await chain.usdcBalance(signer.address)).toBe(usdc("3.75"));

    // The replayed authorization is spent: verify says so.
    expect(await verdict(body)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_nonce_already_used",
    });

    const recorded = await stack.sql<{ payment_id: string; state: string }>(
      "SELECT payment_id, state FROM x402_settlements WHERE payer = ?",
      signer.address,
    );
    expect(recorded).toHaveLength(1);
    const made = await stack.sql<{ id: string }>(
      "SELECT id FROM payments WHERE metadata LIKE ?",
      `%${first.json.transaction}%`,
    );
    expect(made.map((p) => p.id)).toEqual([recorded[0]!.payment_id]);
    const payment = await stack.getPayment(recorded[0]!.payment_id);
    expect(payment).toMatchObject({ amount: "1.25", amount_received: "1.25" });
    expect(payment.metadata).toMatchObject({ x402_payer: signer.address, x402_tx_hash: first.json.transaction });
    // Settling until the transfer has the confirmations on top (test/x402/payout-depth.test.ts), then confirmed once.
    await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    const [after] = await stack.sql<{ state: string }>(
      "SELECT state FROM x402_settlements WHERE payer = ?",
      signer.address,
    );
    expect(after!.state).toBe("recorded");
  });

  test("one payer buying more often than a public client may: every settlement taken (the account's day limit bounds them)", async () => {
    const signer = await payer(usdc("20.00"));
    const buys = AUTHORIZATIONS_PER_CLIENT_PER_HOUR + 1;
    for (let i = 0; i < buys; i++) {
      const { body } = await request(stack.payout, usdc("1.00"), { signer });
      expect((await call("settle", body)).json).toMatchObject({ success: true, payer: signer.address });
    }
    expect(await chain.usdcBalance(signer.address)).toBe(usdc("20.00") - usdc("1.00") * BigInt(buys));
  }, 60_000);

  test("to a deposit address of an account with a fee: linked to that payment, credited and split as usual", async () => {
    const created = await fetch(`${stack.url}/api/v1/payments`, {
      method: "POST",
      headers: { authorization: `Bearer ${feeShop.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "2.00" }),
    }).then((r) => r.json() as Promise<any>);
    const { body } = await request(created.deposit_address, usdc("2.00"));
    const settled = await call("settle", body, feeShop.apiKey);
    expect(settled.json).toMatchObject({ success: true });
    const [row] = await stack.sql<{ payment_id: string }>(
      "SELECT payment_id FROM x402_settlements WHERE pay_to = ?",
      created.deposit_address,
    );
    expect(row!.payment_id).toBe(created.id);
    await stack.mineUntil(
      async () =>
        (
          (await fetch(`${stack.url}/api/v1/payments/${created.id}`, {
            headers: { authorization: `Bearer ${feeShop.apiKey}` },
          }).then((r) => r.json())) as any
        ).status === "confirmed",
      30_000,
      "the fee shop's payment confirmed",
    );
    // 1% to the fee recipient, the rest to the payout: the forwarder's split.
    expect(await chain.usdcBalance(feeShop.payout)).toBe(usdc("1.98"));
  });
});
