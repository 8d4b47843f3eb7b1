/**
 * Pay without gas: a payer holding USDC and no ETH signs an EIP-3009 authorization, the public
 * endpoint takes it, the relayer submits it, and the payment follows the usual path to
 * `confirmed`. Real anvil, real TestUSDC (EIP-3009 as Circle's FiatToken), real HTTP server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, getAddress } from "viem";
import { eip3009Abi, transferCall } from "../../../src/chain/authorizations/token.ts";
import { testTokenAbi, walletClientFor } from "../../support/chain.ts";
import { gaslessApi, gaslessPayer, type Offer, signOffer } from "../../support/gasless.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;
let api: ReturnType<typeof gaslessApi>;
let client = 0;
/** Each test its own client address (the server trusts 127.0.0.1 as a proxy), so the per-client limit is its own. */
const asNewClient = () => gaslessApi(stack.url, `198.51.100.${++client}`);

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({
    chain,
    env: { STABLEGATE_SWEEP_FLOOR: "1.00", STABLEGATE_TRUSTED_PROXIES: "127.0.0.1/32" },
  });
  api = asNewClient();
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

/** Transfers of TestUSDC from `from` to `to` in every block so far. */
async function transfersBetween(from: Address, to: Address) {
  const logs = await chain.publicClient.getContractEvents({
    address: chain.usdc,
    abi: eip3009Abi,
    eventName: "Transfer",
    args: { from, to },
    fromBlock: 0n,
  });
  return logs;
}

async function newPayment(amount = "25.00") {
  const payment = await stack.createPayment({ amount });
  return { payment, offer: await api.offer(payment.id) };
}

describe("pay without gas", () => {
  test("a payer with USDC and no ETH pays by signature; the payment ends confirmed", async () => {
    const payer = await gaslessPayer(chain, usdc("100.00"));
    const { payment, offer } = await newPayment();
    expect(offer).toMatchObject({
      available: true,
      reason: null,
      chain_id: chain.anvil.chainId,
      floor: "1.00",
      typed_data: {
        domain: { name: "USD Coin", version: "2", chainId: chain.anvil.chainId, verifyingContract: chain.usdc },
        primaryType: "TransferWithAuthorization",
        message: { to: getAddress(payment.deposit_address), value: "25000000" },
      },
    });
    expect(await chain.publicClient.getBalance({ address: payer.address })).toBe(0n);
    const signed = await signOffer(offer, payer.key);
    const res = await api.post(payment.id, signed);
    expect(res.status).toBe(202);
    expect(res.json.authorization).toMatchObject({ status: "pending", tx_hash: null, error: null });
    expect(res.json.authorization.id).toMatch(/^auth_/);
    expect(res.json.payment).toMatchObject({ id: payment.id, authorizations: [res.json.authorization] });

    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    expect(await stack.usdcBalance(stack.payout)).toBe(usdc("25.00"));
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("75.00"));
    expect(await chain.publicClient.getBalance({ address: payer.address })).toBe(0n);
    const view = await stack.publicPayment(payment.id);
    expect(view.authorizations).toHaveLength(1);
    expect(view.authorizations[0]).toMatchObject({ id: res.json.authorization.id, status: "succeeded", error: null });
    const moved = await transfersBetween(payer.address, getAddress(payment.deposit_address));
    expect(moved).toHaveLength(1);
    expect(view.authorizations[0].tx_hash).toBe(moved[0]!.transactionHash);
    // The public view says nothing of the payer beyond what the page itself sent.
    expect(JSON.stringify(view)).not.toContain(payer.address.slice(2).toLowerCase());
    expect(JSON.stringify(view).toLowerCase()).not.toContain(payer.address.slice(2).toLowerCase());

    // Replayed, after it succeeded: the same record, no second transfer.
    const again = await api.post(payment.id, signed);
    expect(again.status).toBe(202);
    expect(again.json.authorization).toMatchObject({ id: res.json.authorization.id, status: "succeeded" });
    await stack.mine(3);
    expect(await transfersBetween(payer.address, getAddress(payment.deposit_address))).toHaveLength(1);
  }, 60_000);

  test("the same authorization posted twice at once is one record and one transfer", async () => {
    const payer = await gaslessPayer(chain, usdc("30.00"));
    const { payment, offer } = await newPayment("10.00");
    const signed = await signOffer(offer, payer.key);
    const [a, b] = await Promise.all([api.post(payment.id, signed), api.post(payment.id, signed)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.json.authorization.id).toBe(b.json.authorization.id);
    await stack.waitForStatus(payment.id, "confirmed", { mine: true, timeoutMs: 30_000 });
    expect(await transfersBetween(payer.address, getAddress(payment.deposit_address))).toHaveLength(1);
    expect(await chain.usdcBalance(payer.address)).toBe(usdc("20.00"));
  }, 60_000);
});

describe("refused, in words, with nothing stored or sent", () => {
  let payer: Awaited<ReturnType<typeof gaslessPayer>>;
  let payment: any;
  let offer: Offer;

  beforeAll(async () => {
    payer = await gaslessPayer(chain, usdc("100.00"));
    ({ payment, offer } = await newPayment());
  });

  const refused = async (body: unknown, pattern: RegExp) => {
    const res = await api.post(payment.id, body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(pattern);
    expect(JSON.stringify(res.json)).not.toMatch(/SELECT|at .*\.ts:|stack/);
  };

  test("signed for another chain", async () => {
    await refused(await signOffer(offer, payer.key, {}, { chainId: 1 }), /signature does not match/);
  });

  test("a wrong amount", async () => {
    await refused(
      await signOffer(offer, payer.key, { value: "24999999" }),
      /is for 24\.999999 USDC but 25\.00 USDC is due/,
    );
  });

  test("a wrong recipient", async () => {
    await refused(await signOffer(offer, payer.key, { to: randomAddress() }), /not this payment's address/);
  });

  test("expired, or expiring before it could be mined", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(
      await signOffer(offer, payer.key, { validBefore: String(now - 10) }),
      /^This authorization expired at \d\d:\d\d UTC; sign a new one\.?$/,
    );
    await refused(await signOffer(offer, payer.key, { validBefore: String(now + 5) }), /too soon to be sent/);
    await refused(await signOffer(offer, payer.key, { validAfter: String(now + 600) }), /valid only after/);
  });

  test("signed by someone else than `from`", async () => {
    const other = await gaslessPayer(chain, 0n);
    await refused(await signOffer(offer, other.key, { from: payer.address }), /signature does not match/);
  });

  test("a payer without the balance", async () => {
    const poor = await gaslessPayer(chain, usdc("3.20"));
    await refused(await signOffer(offer, poor.key), /^Your wallet holds 3\.20 USDC; this payment needs 25\.00 USDC/);
  });

  test("an authorization already used on chain", async () => {
    // A payment of its own: the stranger's transfer pays it.
    const own = await newPayment("2.00");
    const signed = await signOffer(own.offer, payer.key);
    const stranger = await chain.fundedKey();
    const a = signed.authorization;
    await chain.publicClient.waitForTransactionReceipt({
      hash: await walletClientFor(chain.rpcUrl, stranger).writeContract(
        transferCall(
          chain.usdc,
          {
            from: a.from,
            to: a.to,
            value: BigInt(a.value),
            validAfter: BigInt(a.validAfter),
            validBefore: BigInt(a.validBefore),
            nonce: a.nonce,
          },
          signed.signature,
        ),
      ),
    });
    const res = await api.post(own.payment.id, signed);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^This authorization was already used/);
  });

  test("a payer USDC's blocklist holds: only the simulation knows, and it says so", async () => {
    const blocked = await gaslessPayer(chain, usdc("30.00"));
    await chain.publicClient.waitForTransactionReceipt({
      hash: await chain.deployer.writeContract({
        address: chain.usdc,
        abi: testTokenAbi,
        functionName: "setBlocked",
        args: [blocked.address, true],
      }),
    });
    await refused(await signOffer(offer, blocked.key), /^USDC does not allow transfers from or to this wallet/);
  });

  test("malformed bodies", async () => {
    const signed = await signOffer(offer, payer.key);
    await refused({ ...signed, signature: "0x1234" }, /signature/);
    await refused({ authorization: { ...signed.authorization, value: 25 }, signature: signed.signature }, /value/);
    await refused({ ...signed, extra: 1 }, /./);
  });

  test("nothing of it was stored", async () => {
    expect(await stack.sql("SELECT id FROM authorizations WHERE payment_id = ?", payment.id)).toEqual([]);
    expect((await stack.publicPayment(payment.id)).authorizations).toEqual([]);
  });
});

describe("dust", () => {
  test("below the floor: not offered, and refused", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const payment = await stack.createPayment({ amount: "0.50" });
    const offer = await api.offer(payment.id);
    expect(offer).toMatchObject({ available: false, floor: "1.00", typed_data: null });
    expect(offer.reason).toMatch(/start at 1\.00 USDC/);
    const full = await api.offer((await stack.createPayment({ amount: "5.00" })).id);
    const signed = await signOffer(
      {
        ...full,
        typed_data: {
          ...full.typed_data!,
          message: { ...full.typed_data!.message, to: payment.deposit_address, value: "500000" },
        },
      },
      payer.key,
    );
    const res = await api.post(payment.id, signed);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/start at 1\.00 USDC; pay this one with a plain transfer/);
  });
});

describe("unknown payments", () => {
  test("404, as the other public endpoints", async () => {
    const res = await fetch(`${stack.url}/api/public/payments/0x${"ab".repeat(32)}/authorization`);
    expect(res.status).toBe(404);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});
