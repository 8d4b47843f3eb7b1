/**
 * The attestation service misbehaving (DESIGN.md §8): down, rate-limiting, or handing out a
 * message that has expired by the time it is received. Burns are never lost and are
 * redeemed exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import { decodeCctpMessage } from "../../../src/dev/attestation-service.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import type { Stack } from "../../support/stack.ts";
import { usdc } from "../../support/test-chain.ts";

let x: CrossChainStack;
let stack: Stack;

beforeAll(async () => {
  // No attestation delay: once the service is back the next poll finds the burn attested.
  x = await startCrossChainStack({ attestationDelayMs: 0 });
  stack = x.stack;
}, 30_000);

afterAll(async () => {
  x?.local.attestation.setMode("normal");
  await x?.stop();
});

/** Quotes a fast transfer while the service is up, then burns from the payer; returns the burn hash. */
async function quoteAndBurn(paymentId: string): Promise<Hex> {
  const quote = await x.crossChain(paymentId, LOCAL_SOURCE.name);
  expect(quote.status).toBe(200);
  return x.sendCalls(quote.json.fast.calls);
}

/**
 * The service is back: skips whatever backoff the burn is in (the injected clock, as the
 * settlement tests do), so the test need not sit out a retry schedule that grew during the outage.
 */
function skipBackoff() {
  stack.clock.advance(60_000);
}

/** Waits for redemption and settlement; checks the mint happened once and paid the payment. */
async function expectRedeemedOnce(paymentId: string, amount: string) {
  const row = await x.waitBurn(paymentId, "redeemed", 20_000);
  expect(await x.messagesReceived(row.message_nonce as Hex)).toHaveLength(1);
  const payment = await stack.getPayment(paymentId);
  const mints = await x.mintsTo(payment.deposit_address);
  expect(mints).toHaveLength(1);
  expect(mints[0]!).toBeGreaterThanOrEqual(usdc(amount));
  const confirmed = await stack.waitForStatus(paymentId, "confirmed", { mine: true });
  expect(usdc(confirmed.amount_received)).toBe(mints[0]!);
  expect(confirmed.cross_chain_transfers).toEqual([expect.objectContaining({ state: "redeemed", error: null })]);
  return row;
}

/** The burn row's last error, once it mentions `pattern` (the redeemer has met the outage). */
function waitBurnError(paymentId: string, pattern: RegExp) {
  return stack.waitFor(
    async () => {
      const [row] = await x.burns(paymentId);
      return row && row.state === "attesting" && pattern.test(row.error ?? "") ? row : undefined;
    },
    10_000,
    `a burn error matching ${pattern}`,
  );
}

/** The burn row once the redeemer has asked about it `attempts` times and it still waits. */
function waitBurnAttempts(paymentId: string, attempts: number) {
  return stack.waitFor(
    async () => {
      const [row] = await x.burns(paymentId);
      return row && Number(row.attempts) >= attempts ? row : undefined;
    },
    15_000,
    `a burn tried ${attempts} times`,
  );
}

describe("the attestation service", () => {
  test("down while a payer asks for a quote: a 503 to try again shortly, never a 500", async () => {
    const payment = await stack.createPayment({ amount: "3.00" });
    x.local.attestation.setMode("down");
    try {
      const quote = await x.crossChain(payment.id, LOCAL_SOURCE.name);
      expect({ status: quote.status, json: quote.json }).toEqual({
        status: 503,
        json: { error: "cross-chain fees are unavailable right now; try again shortly" },
      });
    } finally {
      x.local.attestation.setMode("normal");
    }
    expect((await x.crossChain(payment.id, LOCAL_SOURCE.name)).status).toBe(200);
  });

  test("down for a while: the burn waits, then is redeemed once it is back", async () => {
    const payment = await stack.createPayment({ amount: "10.00" });
    const burnTx = await quoteAndBurn(payment.id);
    x.local.attestation.setMode("down");
    try {
      const posted = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTx });
      expect(posted.status).toBe(202);
      await waitBurnError(payment.id, /503/);
      const waiting = await waitBurnAttempts(payment.id, 2); // it kept trying
      expect(waiting).toMatchObject({ state: "attesting", redeem_tx_hash: null });
      expect((await stack.publicPayment(payment.id)).cross_chain_transfers).toEqual([
        expect.objectContaining({ state: "attesting", error: null }),
      ]);
      expect(await x.mintsTo(payment.deposit_address)).toEqual([]);
    } finally {
      x.local.attestation.setMode("normal");
    }
    skipBackoff();
    await expectRedeemedOnce(payment.id, "10.00");
  }, 30_000);

  test("rate-limiting (429 with Retry-After): the burn is redeemed once the limit lifts", async () => {
    const payment = await stack.createPayment({ amount: "7.50" });
    const burnTx = await quoteAndBurn(payment.id);
    x.local.attestation.setMode("ratelimit", { retryAfterSeconds: 1 });
    try {
      expect((await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTx })).status).toBe(202);
      await waitBurnError(payment.id, /429/);
      const waiting = await waitBurnAttempts(payment.id, 2);
      expect(waiting).toMatchObject({ state: "attesting", redeem_tx_hash: null });
      // The next try is when Retry-After says (1 s), not later on the exponential schedule (>= 2 s by now).
      const wait = Number(waiting.next_attempt_at) - Number(waiting.updated_at);
      expect(wait).toBeGreaterThan(900);
      expect(wait).toBeLessThanOrEqual(1_000);
    } finally {
      x.local.attestation.setMode("normal");
    }
    // Retry-After is 1 s, so no backoff to skip: the next try redeems.
    await expectRedeemedOnce(payment.id, "7.50");
  }, 30_000);

  test("an expired message is re-attested and then redeemed, once", async () => {
    const reattestsBefore = x.local.attestation.reattestCount;
    x.local.attestation.expireNextMessages(1);
    const payment = await stack.createPayment({ amount: "3.00" });
    const { burnTxHash } = await x.payCrossChain(payment.id, "fast");
    const row = await expectRedeemedOnce(payment.id, "3.00");
    expect(x.local.attestation.reattestCount).toBe(reattestsBefore + 1);
    expect(await x.burns(payment.id)).toHaveLength(1);
    // The message received is the re-signed one: no expiry left in it.
    const [message] = await x.attested(burnTxHash);
    expect(message!.eventNonce).toBe(row.message_nonce as Hex);
    expect(row.message).toBe(message!.message);
    expect(decodeCctpMessage(row.message as Hex).body.expirationBlock).toBe(0n);
  }, 30_000);
});
