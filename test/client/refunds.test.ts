/**
 * The TypeScript client's refunds against the real server: create (default amount, idempotency
 * keys, the caller's and the made-up one), retrieve, list with its filters and every page, a
 * payment's refunds, cancel, and the refusals as typed errors. A payment's received funds are
 * written to its row, as the watcher's credit would (the chain's side is tested on anvil).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ConflictError,
  IdempotencyError,
  NotFoundError,
  type Refund,
  Stablegate,
  ValidationError,
} from "../../clients/typescript/src/index.ts";
import { type LossyRelay, startLossyRelay } from "../support/lossy-relay.ts";
import { markReceived } from "../support/refund-rows.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let relay: LossyRelay;

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

beforeAll(async () => {
  server = await startTestServer();
  relay = await startLossyRelay(server.url);
});

afterAll(async () => {
  relay?.stop();
  await server?.stop();
});

/** A client for a fresh account, so lists hold only what the test made. */
async function merchant(baseUrl = server.url) {
  const { apiKey } = await server.createAccount();
  return { client: new Stablegate({ apiKey, baseUrl }), raw: api(server.url, apiKey) };
}

/** A payment that received `received` micro-USDC, as if the watcher had credited it. */
async function paidPayment(client: Stablegate, received = 25_000_000n): Promise<string> {
  const payment = await client.payments.create({ amount: "25.00" });
  await markReceived(server.env, payment.id, received);
  return payment.id;
}

describe("refunds.create and retrieve", () => {
  test("without an amount, everything received; retrieve answers the same refund", async () => {
    const { client } = await merchant();
    const paymentId = await paidPayment(client);
    const refund = await client.refunds.create(paymentId, { reason: "order canceled" });
    expect(refund).toMatchObject({
      object: "refund",
      payment: paymentId,
      amount: "25.00",
      status: "awaiting_address",
      reason: "order canceled",
      payment_instructions: null,
    });
    expect(refund.claim_url).toMatch(/\/refund\/[A-Za-z0-9_-]{43}$/);
    expect(await client.refunds.retrieve(refund.id)).toEqual(refund);
  });

  test("with the payer's address: payable at once, with the exact transfer to make", async () => {
    const { client } = await merchant();
    const paymentId = await paidPayment(client);
    const refund = await client.refunds.create(paymentId, { amount: "2.500001", refund_address: PAYER });
    expect(refund.status).toBe("awaiting_payment");
    expect(refund.payment_instructions).toMatchObject({ to: PAYER, amount: "2.500001" });
    expect(refund.payment_instructions?.uri).toContain("uint256=2500001");
  });

  test("the same key twice is one refund; with another body it is an IdempotencyError", async () => {
    const { client } = await merchant();
    const paymentId = await paidPayment(client);
    const first = await client.refunds.create(paymentId, { amount: "1.00" }, { idempotencyKey: "return-7" });
    const again = await client.refunds.create(paymentId, { amount: "1.00" }, { idempotencyKey: "return-7" });
    expect(again.id).toBe(first.id);
    const refused = await client.refunds
      .create(paymentId, { amount: "2.00" }, { idempotencyKey: "return-7" })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(IdempotencyError);
    expect((await client.refunds.listForPayment(paymentId)).data.map((r) => r.id)).toEqual([first.id]);
  });

  test("without a key, one is made up: an answer lost on the way is fetched again, and one refund exists", async () => {
    const { client, raw } = await merchant(relay.url);
    const paymentId = await paidPayment(client);
    const lost = relay.lost;
    relay.loseAnswers(1);
    const refund = await client.refunds.create(paymentId, { amount: "3.00" });
    expect(relay.lost - lost).toBe(1);
    const listed = await raw(`/api/v1/payments/${paymentId}/refunds`);
    expect(listed.json.data.map((r: Refund) => r.id)).toEqual([refund.id]);
  });

  test("more than may still be refunded is a ValidationError naming both figures; another payment is NotFound", async () => {
    const { client } = await merchant();
    const paymentId = await paidPayment(client, 5_000_000n);
    await client.refunds.create(paymentId, { amount: "4.00" });
    const tooMuch = await client.refunds.create(paymentId, { amount: "1.50" }).catch((e) => e);
    expect(tooMuch).toBeInstanceOf(ValidationError);
    expect(tooMuch.message).toBe("amount 1.50 USDC is more than the 1.00 USDC that may still be refunded");
    const elsewhere = await (await merchant()).client.refunds.create(paymentId, {}).catch((e) => e);
    expect(elsewhere).toBeInstanceOf(NotFoundError);
  });
});

describe("refunds.list and listForPayment", () => {
  test("one page with filters, every page with for await, and one payment's refunds", async () => {
    const { client } = await merchant();
    const a = await paidPayment(client);
    const b = await paidPayment(client);
    const made: string[] = [];
    for (const paymentId of [a, b, a]) made.push((await client.refunds.create(paymentId, { amount: "1.00" })).id);
    const [first, second, third] = made as [string, string, string];
    const page = await client.refunds.list({ limit: 2, status: "awaiting_address" });
    expect({ ids: page.data.map((r) => r.id), more: page.has_more }).toEqual({ ids: [third, second], more: true });
    expect((await client.refunds.list({ payment: b })).data.map((r) => r.id)).toEqual([second]);
    expect((await client.refunds.list({ status: "succeeded" })).data).toEqual([]);
    const all: string[] = [];
    for await (const refund of client.refunds.list({ limit: 1 })) all.push(refund.id);
    expect(all).toEqual([...made].reverse());
    const ofA: string[] = [];
    for await (const refund of client.refunds.listForPayment(a, { limit: 1 })) ofA.push(refund.id);
    expect(ofA).toEqual([third, first]);
  });
});

describe("refunds.cancel", () => {
  test("cancels an unpaid refund; a second cancel is a ConflictError at once, not retried", async () => {
    const { client } = await merchant();
    const paymentId = await paidPayment(client, 2_000_000n);
    const refund = await client.refunds.create(paymentId, {});
    const canceled = await client.refunds.cancel(refund.id);
    expect(canceled).toMatchObject({ id: refund.id, status: "canceled" });
    // What it held may be refunded again.
    expect((await client.refunds.create(paymentId, {})).amount).toBe("2.00");

    const started = performance.now();
    const again = await client.refunds.cancel(refund.id).catch((e) => e);
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ status: 409, message: `refund ${refund.id} has been canceled already` });
    // The client's 409 resends wait 0.5 s and more: this answer was not asked again.
    expect(performance.now() - started).toBeLessThan(500);
    expect(await client.refunds.cancel("re_AAAAAAAAAAAAAAAAAAAAAAAA").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });
});
