/**
 * What keeps recoveries from spending the relayer's gas on a stranger's contract, on two anvils
 * (the settlement chain and "local-source"): the gas cap, checked when asked and again before a
 * transaction is signed; the Transfer the token must have logged to the deposit address; and the
 * limits on requests, answered 429 with Retry-After. A refusal stores nothing and sends nothing:
 * the relayer's nonce on the chain stays as it was. A real stray token still recovers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, getAddress, type Hex, type PublicClient, parseTransaction } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { RECOVERY_GAS_CAP } from "../../../src/chain/recovering/gas.ts";
import { RECOVERIES_PER_ACCOUNT, RECOVERY_WINDOW_MS } from "../../../src/chain/recovering/limits.ts";
import { runAccountCommand } from "../../../src/cli/accounts.ts";
import { mined } from "../../support/chain.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { insertDueRecovery } from "../../support/recovery-rows.ts";
import { api } from "../../support/server.ts";
import type { Stack } from "../../support/stack.ts";
import {
  gasBurnerOnSource,
  sourceFactoryDeployed,
  strayTokenOnSource,
  unsentTokenOnSource,
} from "../../support/stray-tokens.ts";
import { waitFor } from "../../support/wait.ts";

let x: CrossChainStack;
let stack: Stack;
let settlementName: string;
let relayer: Address;

beforeAll(async () => {
  x = await startCrossChainStack();
  stack = x.stack;
  settlementName = stack.config.chain.name;
  relayer = privateKeyToAccount(stack.env.STABLEGATE_RELAYER_KEY as Hex).address;
  await sourceFactoryDeployed(x);
}, 60_000);

afterAll(async () => {
  await x?.stop();
});

/** A new account and its API key: each test that counts requests starts from none. */
async function newMerchant() {
  const created = (await runAccountCommand(
    "account",
    ["create", "--name", "Guarded Shop", "--payout-address", stack.payout],
    stack.env,
  )) as { api_key: string };
  const call = api(stack.url, created.api_key);
  return {
    createPayment: async () => (await call("/api/v1/payments", { body: { amount: "5.00" } })).json,
    recover: (paymentId: string, body: unknown) => call(`/api/v1/payments/${paymentId}/recover`, { body }),
  };
}

const recover = (paymentId: string, body: unknown) =>
  api(stack.url, stack.apiKey)(`/api/v1/payments/${paymentId}/recover`, { body });

const storedRecoveries = (paymentId: string) =>
  stack.sql<{ id: string; state: string; tx_hash: string | null; nonce: number | null; error: string | null }>(
    "SELECT id, state, tx_hash, nonce, error FROM recoveries WHERE payment_id = ?",
    paymentId,
  );

/** The relayer's nonce on a chain, mined and pending: a transaction sent, even unmined, moves the second. */
const relayerNonces = (client: PublicClient) =>
  Promise.all([
    client.getTransactionCount({ address: relayer, blockTag: "latest" }),
    client.getTransactionCount({ address: relayer, blockTag: "pending" }),
  ]);

/** Two whole rounds of the recoverer from now: whatever it was going to send by then, it has. */
async function recovererRan() {
  const seen = stack.activity().recovererRounds;
  await waitFor(() => stack.activity().recovererRounds >= seen + 2, 15_000, "two recoverer rounds");
}

/** Polls the recovery's row, mining a block on both chains each time, until it is `state`. */
function waitState(paymentId: string, id: string, state: string) {
  return waitFor(
    async () => {
      const row = (await storedRecoveries(paymentId)).find((r) => r.id === id);
      if (row?.state === state) return row;
      await Promise.all([stack.chain.mine(1), x.local.source.rpc("evm_mine")]);
      return null;
    },
    30_000,
    `recovery ${id} to be ${state}`,
    60,
  );
}

/**
 * Retry-After is the whole seconds from the server's clock at answering to `until`. The server read its clock
 * somewhere between the request leaving and the answer arriving, so the header is the figure for one instant
 * of that span: a second boundary may fall inside it.
 */
function expectRetryAfter(headers: Headers, until: number, askedFrom: number, answeredBy: number) {
  const seconds = Number(headers.get("retry-after"));
  expect(seconds).toBeGreaterThanOrEqual(Math.ceil((until - answeredBy) / 1000));
  expect(seconds).toBeLessThanOrEqual(Math.ceil((until - askedFrom) / 1000));
}

/** Native coin sent to the deposit address on the settlement chain: what a recovery there moves. */
const sendNative = (deposit: string, wei: bigint) =>
  mined(stack.chain.publicClient, stack.chain.payer.sendTransaction({ to: getAddress(deposit), value: wei }));

describe("the gas cap", () => {
  test("a token whose transfer burns millions of gas is refused with the figure; nothing stored, no transaction", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await gasBurnerOnSource(x, deposit, 1_000n);
    const before = await relayerNonces(x.source.publicClient);

    for (const _ of [1, 2]) {
      const refused = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
      expect(refused.status).toBe(422);
      const match = (refused.json.error as string).match(
        new RegExp(
          `^recovering token ${token} on ${LOCAL_SOURCE.name} would take (\\d+) gas, above the ${RECOVERY_GAS_CAP} ` +
            "a recovery may use: this token's transfer costs far more than an ERC-20 transfer",
        ),
      );
      expect(match).not.toBeNull();
      expect(BigInt(match![1]!)).toBeGreaterThan(9_000_000n); // 400 fresh slots
    }
    expect(await storedRecoveries(payment.id)).toEqual([]);
    await recovererRan();
    expect(await relayerNonces(x.source.publicClient)).toEqual(before);
  }, 60_000);

  test("a request the recoverer finds above the cap when it would send fails unsigned; the relayer sends nothing", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await gasBurnerOnSource(x, deposit, 1_000n);
    const before = await relayerNonces(x.source.publicClient);
    // As if accepted while its transfer was cheap: the recoverer checks again before it signs.
    const id = await insertDueRecovery(stack.env, {
      paymentId: payment.id,
      chainId: LOCAL_SOURCE.chainId,
      token,
      now: stack.clock.now(),
    });

    const failed = await waitState(payment.id, id, "failed");
    expect(failed.error).toMatch(
      new RegExp(
        `^recovering token ${token} on ${LOCAL_SOURCE.name} would take \\d+ gas, above the ${RECOVERY_GAS_CAP}`,
      ),
    );
    expect(failed).toMatchObject({ tx_hash: null, nonce: null });
    await recovererRan();
    expect(await relayerNonces(x.source.publicClient)).toEqual(before);
  }, 60_000);

  test("a real stray token still recovers, signed within the cap and using well under it", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await strayTokenOnSource(x, deposit, 25_000n, 6);

    const created = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
    expect(created.status).toBe(202);
    const done = await waitState(payment.id, created.json.id, "succeeded");
    const [row] = await stack.sql<{ raw_tx: Hex }>("SELECT raw_tx FROM recoveries WHERE id = ?", created.json.id);
    expect(parseTransaction(row!.raw_tx).gas).toBeLessThanOrEqual(RECOVERY_GAS_CAP);
    const receipt = await x.source.publicClient.getTransactionReceipt({ hash: done.tx_hash as Hex });
    // The first recovery of the address deploys its clone too: about 116,000 (see src/chain/recovering/gas.ts).
    expect(receipt.gasUsed).toBeLessThan(RECOVERY_GAS_CAP / 2n);
  }, 60_000);
});

describe("the token's own Transfer to the deposit address", () => {
  test("a token that holds a balance there but never logged a Transfer to it is refused; nothing stored or sent", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const deposit = getAddress(payment.deposit_address);
    const token = await unsentTokenOnSource(x, deposit, 5_000n);
    const before = await relayerNonces(x.source.publicClient);

    const refused = await recover(payment.id, { chain: LOCAL_SOURCE.name, token });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toBe(
      `token ${token} has logged no Transfer to the deposit address ${deposit} on ${LOCAL_SOURCE.name} since the ` +
        "payment was created: only a token sent there can be recovered",
    );
    expect(await storedRecoveries(payment.id)).toEqual([]);
    await recovererRan();
    expect(await relayerNonces(x.source.publicClient)).toEqual(before);
  }, 60_000);
});

describe("the limits on requests", () => {
  test("one recovery per payment and token in 24 hours: the next is 429 with Retry-After, then allowed again", async () => {
    const merchant = await newMerchant();
    const payment = await merchant.createPayment();
    await sendNative(payment.deposit_address, 1_000n);
    const first = await merchant.recover(payment.id, { chain: settlementName });
    expect(first.status).toBe(202);
    await waitState(payment.id, first.json.id, "succeeded");
    const askedAt = (
      await stack.sql<{ created_at: number }>("SELECT created_at FROM recoveries WHERE id = ?", first.json.id)
    )[0]!.created_at;

    await sendNative(payment.deposit_address, 2_000n);
    const before = await relayerNonces(stack.chain.publicClient);
    const askedFrom = stack.clock.now();
    const again = await merchant.recover(payment.id, { chain: settlementName, token: null });
    const answeredBy = stack.clock.now();
    expect(again.status).toBe(429);
    const next = askedAt + RECOVERY_WINDOW_MS;
    expect(again.json).toEqual({
      error:
        `a recovery of the native coin on ${settlementName} was asked for this payment at ` +
        `${new Date(askedAt).toISOString()}; the same token may be recovered once in 24 hours, next from ` +
        new Date(next).toISOString(),
    });
    expectRetryAfter(again.headers, next, askedFrom, answeredBy);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(86_000);
    expect(await storedRecoveries(payment.id)).toHaveLength(1);
    await recovererRan();
    expect(await relayerNonces(stack.chain.publicClient)).toEqual(before);

    // Another token, or the same on another chain, is another recovery.
    const token = await strayTokenOnSource(x, getAddress(payment.deposit_address), 3_000n, 6);
    const other = await merchant.recover(payment.id, { chain: LOCAL_SOURCE.name, token });
    expect(other.status).toBe(202);
    await waitState(payment.id, other.json.id, "succeeded");

    stack.clock.advance(next - stack.clock.now());
    const later = await merchant.recover(payment.id, { chain: settlementName });
    expect(later.status).toBe(202);
    const done = await waitState(payment.id, later.json.id, "succeeded");
    expect(done.state).toBe("succeeded");
  }, 90_000);

  test(`an account may ask ${RECOVERIES_PER_ACCOUNT} recoveries in 24 hours; the next is 429 with Retry-After`, async () => {
    const merchant = await newMerchant();
    const asked: string[] = [];
    const payments: Array<{ id: string; deposit_address: string }> = [];
    for (let i = 0; i <= RECOVERIES_PER_ACCOUNT; i++) {
      const payment = await merchant.createPayment();
      await sendNative(payment.deposit_address, 1_000n + BigInt(i));
      payments.push(payment);
    }
    for (const payment of payments.slice(0, RECOVERIES_PER_ACCOUNT)) {
      const created = await merchant.recover(payment.id, { chain: settlementName });
      expect(created.status).toBe(202);
      asked.push(created.json.id);
    }
    const oldest = (
      await stack.sql<{ created_at: number }>("SELECT created_at FROM recoveries WHERE id = ?", asked[0]!)
    )[0]!.created_at;

    const last = payments.at(-1)!;
    const askedFrom = stack.clock.now();
    const refused = await merchant.recover(last.id, { chain: settlementName });
    const answeredBy = stack.clock.now();
    expect(refused.status).toBe(429);
    const until = oldest + RECOVERY_WINDOW_MS;
    expect(refused.json).toEqual({
      error:
        `this account has asked for ${RECOVERIES_PER_ACCOUNT} recoveries in the last 24 hours, the most allowed ` +
        `is ${RECOVERIES_PER_ACCOUNT}; the next may be asked from ${new Date(until).toISOString()}`,
    });
    expectRetryAfter(refused.headers, until, askedFrom, answeredBy);
    expect(await storedRecoveries(last.id)).toEqual([]);

    // Another account is not held back by this one's count.
    const payment = await stack.createPayment({ amount: "5.00" });
    await sendNative(payment.deposit_address, 1_000n);
    const mine = await recover(payment.id, { chain: settlementName });
    expect(mine.status).toBe(202);

    for (const [i, id] of asked.entries()) await waitState(payments[i]!.id, id, "succeeded");
    await waitState(payment.id, mine.json.id, "succeeded");
  }, 120_000);
});
