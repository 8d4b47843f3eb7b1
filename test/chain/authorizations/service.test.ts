/**
 * The service as x402 and the facilitator call it (no HTTP): codes on refusals, a record without
 * a payment (a facilitator settlement to a payout address), outcome() resolving once the running
 * server's submitter has sent it. The service is built on the in-process server's own store and
 * chain, so its submitter is the one that sends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createAuthorizationsService } from "../../../src/chain/authorizations/service.ts";
import { createAuthorizationStore } from "../../../src/chain/authorizations/store.ts";
import { typedDataOf } from "../../../src/chain/authorizations/token.ts";
import type { Authorizations, TransferAuthorization } from "../../../src/chain/authorizations/types.ts";
import { randomIds } from "../../../src/lib/ids.ts";
import { createLogger } from "../../../src/lib/log.ts";
import { gaslessPayer, randomNonce } from "../../support/gasless.ts";
import { withServerStore } from "../../support/server-store.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { randomAddress, startChain, type TestChain, usdc } from "../../support/test-chain.ts";

let chain: TestChain;
let stack: Stack;
let service: Authorizations;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain });
  await withServerStore(stack.env, async (db) => {
    service = createAuthorizationsService({
      store: createAuthorizationStore(db),
      chain: { ...stack.config.chain },
      client: chain.publicClient,
      relayer: randomAddress(),
      clock: stack.clock,
      ids: randomIds,
      log: createLogger("error"),
      marginSeconds: 30,
      wake: () => {},
      changed: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
  });
});
afterAll(async () => {
  await stack?.stop();
  await chain?.stop();
});

async function signed(key: `0x${string}`, to: Address, value: bigint, chainId = chain.anvil.chainId) {
  const account = privateKeyToAccount(key);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization: TransferAuthorization = {
    from: account.address,
    to,
    value,
    validAfter: now - 60n,
    validBefore: now + 600n,
    nonce: randomNonce(),
  };
  const domain = { ...(await service.domain(chain.anvil.chainId)), chainId };
  return { authorization, signature: await account.signTypedData(typedDataOf(domain, authorization)) };
}

describe("authorizations service", () => {
  test("the domain is read from the token", async () => {
    expect(await service.domain(chain.anvil.chainId)).toEqual({
      name: "USD Coin",
      version: "2",
      chainId: chain.anvil.chainId,
      verifyingContract: getAddress(chain.usdc),
    });
  });

  test("another chain is wrong_chain, for verify and accept alike", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    const s = await signed(payer.key, to, usdc("2.00"), 1);
    const expect_ = { to, value: usdc("2.00") };
    expect(await service.verify({ chainId: 1, ...s, expect: expect_ })).toMatchObject({
      ok: false,
      code: "wrong_chain",
    });
    const refusal = await service
      .accept({
        chainId: 1,
        ...s,
        paymentId: null,
        accountId: stack.accountId,
        expect: expect_,
        source: "x402",
        client: "c",
      })
      .catch((e) => e);
    expect(refusal).toMatchObject({ code: "wrong_chain", kind: "invalid" });
    expect(refusal.message).toMatch(/this payment is paid on custom/);
  });

  test("below the floor is below_floor (the sweep floor here: one cent)", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    expect(await service.floor(chain.anvil.chainId)).toBe(usdc("0.01"));
    const dust = await signed(payer.key, to, 9_999n);
    expect(
      await service.verify({ chainId: chain.anvil.chainId, ...dust, expect: { to, value: 9_999n } }),
    ).toMatchObject({ ok: false, code: "below_floor", message: expect.stringMatching(/start at 0\.01 USDC/) });
  });

  test("codes a program can act on", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    const s = await signed(payer.key, to, usdc("2.00"));
    const verify = (over: Partial<TransferAuthorization> = {}, value = usdc("2.00")) =>
      service.verify({
        chainId: chain.anvil.chainId,
        authorization: { ...s.authorization, ...over },
        signature: s.signature,
        expect: { to, value },
      });
    expect(await verify()).toEqual({ ok: true, payer: payer.address });
    expect(await verify({}, usdc("3.00"))).toMatchObject({ ok: false, code: "wrong_amount" });
    expect(await verify({ to: randomAddress() })).toMatchObject({ ok: false, code: "wrong_recipient" });
    expect(await verify({ nonce: randomNonce() })).toMatchObject({ ok: false, code: "invalid_signature" });
    const rich = await signed(payer.key, to, usdc("6.00"));
    expect(
      await service.verify({ chainId: chain.anvil.chainId, ...rich, expect: { to, value: usdc("6.00") } }),
    ).toMatchObject({ ok: false, code: "insufficient_funds", message: expect.stringMatching(/holds 5\.00 USDC/) });
  });

  test("a facilitator's record without a payment: accepted once, and outcome() resolves when it is mined", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    const s = await signed(payer.key, to, usdc("2.00"));
    const ask = {
      chainId: chain.anvil.chainId,
      ...s,
      paymentId: null,
      accountId: stack.accountId,
      expect: { to, value: usdc("2.00") },
      source: "facilitator" as const,
      client: "facilitator-test",
      resource: "https://shop.example/paid",
    };
    const record = await service.accept(ask);
    expect(record).toMatchObject({ payment_id: null, source: "facilitator", status: "pending", value: usdc("2.00") });
    expect((await service.accept(ask)).id).toBe(record.id);
    const done = await service.outcome(record.id, Date.now() + 20_000);
    expect(done).toMatchObject({ id: record.id, status: "succeeded", failure: null });
    expect(await chain.usdcBalance(to)).toBe(usdc("2.00"));
    expect(await service.findSigned(chain.anvil.chainId, payer.address, s.authorization.nonce)).toEqual(done);
  }, 30_000);

  test("the per-account limit a day: 429 past it, in words", async () => {
    const limited = await withServerStore(stack.env, async (db) =>
      createAuthorizationsService({
        store: createAuthorizationStore(db),
        chain: { ...stack.config.chain },
        client: chain.publicClient,
        relayer: randomAddress(),
        clock: stack.clock,
        ids: randomIds,
        log: createLogger("error"),
        marginSeconds: 30,
        wake: () => {},
        changed: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        limits: { perPaymentPerHour: 100, perClientPerHour: 100, perAccountPerDay: 0 },
      }),
    );
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    const s = await signed(payer.key, to, usdc("1.00"));
    const refusal = await limited
      .accept({
        chainId: chain.anvil.chainId,
        ...s,
        paymentId: null,
        accountId: stack.accountId,
        expect: { to, value: usdc("1.00") },
        source: "facilitator",
        client: "account-limit-test",
      })
      .catch((e) => e);
    expect(refusal).toMatchObject({ kind: "too_many" });
    expect(refusal.message).toMatch(/as many signed payments today as it may/);
    expect(refusal.retryAfterSeconds).toBeGreaterThan(0);
  });

  test("outcome() at the deadline answers what the record is then", async () => {
    const payer = await gaslessPayer(chain, usdc("5.00"));
    const to = randomAddress();
    const s = await signed(payer.key, to, usdc("1.00"));
    await chain.anvil.rpc("evm_setAutomine", [false]);
    try {
      const record = await service.accept({
        chainId: chain.anvil.chainId,
        ...s,
        paymentId: null,
        accountId: stack.accountId,
        expect: { to, value: usdc("1.00") },
        source: "x402",
        client: "deadline-test",
      });
      const early = await service.outcome(record.id, Date.now() + 300);
      expect(["pending", "submitted"]).toContain(early.status);
    } finally {
      await chain.anvil.rpc("evm_setAutomine", [true]);
      await chain.mine(1);
    }
  });
});
