/**
 * The refunds API over real HTTP against a running server (SQLite, or the suite's PostgreSQL on
 * the second pass): amounts and the cap, idempotency, scoping, cancel, address rules, events. The
 * payment's received funds are written to its row, as the watcher's credit would; the chain side
 * of refunds is tested on anvil (test/refunds/on-chain.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { markReceived } from "../support/refund-rows.ts";
import { api, startTestServer, type TestServer } from "../support/server.ts";

/** One account's calls: POST with a JSON body (and headers), GET. */
function client(key: string) {
  const call = api(server.url, key);
  return {
    post: (path: string, body: unknown, headers?: Record<string, string>) =>
      call(path, { method: "POST", body, headers }),
    get: (path: string) => call(path),
  };
}

let server: TestServer;
let merchant: ReturnType<typeof client>;
let other: ReturnType<typeof client>;

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

beforeAll(async () => {
  server = await startTestServer();
  merchant = client((await server.createAccount()).apiKey);
  other = client((await server.createAccount()).apiKey);
});
afterAll(() => server.stop());

/** A payment of `amount` that received `received` (micro-USDC), as if the watcher had credited it. */
async function paidPayment(
  amount = "25.00",
  received = 25_000_000n,
  status: Parameters<typeof markReceived>[3] = "confirmed",
): Promise<string> {
  const created = await merchant.post("/api/v1/payments", { amount });
  expect(created.status).toBe(201);
  const id = (created.json as { id: string }).id;
  await markReceived(server.env, id, received, status);
  return id;
}

type Refund = Record<string, unknown> & { id: string; status: string; amount: string };

describe("creating a refund", () => {
  test("defaults to everything received, with a claim link and no address yet", async () => {
    const payment = await paidPayment();
    const res = await merchant.post(`/api/v1/payments/${payment}/refunds`, { reason: "changed my mind" });
    expect(res.status).toBe(201);
    const refund = res.json as Refund;
    expect(refund.id).toMatch(/^re_[0-9A-Za-z]{24}$/);
    expect(refund).toMatchObject({
      object: "refund",
      payment,
      amount: "25.00",
      currency: "USDC",
      status: "awaiting_address",
      reason: "changed my mind",
      refund_address: null,
      payment_instructions: null,
      tx_hash: null,
      metadata: null,
    });
    expect(refund.claim_url).toMatch(/^https:\/\/pay\.example\.test\/refund\/[A-Za-z0-9_-]{43}$/);
    const retrieved = await merchant.get(`/api/v1/refunds/${refund.id}`);
    expect(retrieved.json).toEqual(refund);
  });

  test("partial refunds add up to at most what was received; more is refused naming both figures", async () => {
    const payment = await paidPayment("25.00", 25_500_000n, "overpaid");
    expect((await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "0.50" })).status).toBe(201);
    expect((await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "20.00" })).status).toBe(201);
    const tooMuch = await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "5.000001" });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json).toEqual({
      error: "amount 5.000001 USDC is more than the 5.00 USDC that may still be refunded",
    });
    const rest = await merchant.post(`/api/v1/payments/${payment}/refunds`, {});
    expect((rest.json as Refund).amount).toBe("5.00");
    const none = await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "0.01" });
    expect(none.status).toBe(400);
    expect((none.json as { error: string }).error).toContain("nothing left to refund");
    const listed = await merchant.get(`/api/v1/payments/${payment}/refunds`);
    expect((listed.json as { data: Refund[] }).data.map((r) => r.amount)).toEqual(["5.00", "20.00", "0.50"]);
  });

  test("two refunds at once never add up to more than was received", async () => {
    const payment = await paidPayment("10.00", 10_000_000n);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "4.00" })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(4);
  });

  test("a payment that received nothing has nothing to refund", async () => {
    const created = await merchant.post("/api/v1/payments", { amount: "5.00" });
    const id = (created.json as { id: string }).id;
    const res = await merchant.post(`/api/v1/payments/${id}/refunds`, {});
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: `payment ${id} has received nothing to refund` });
  });

  test("bad input is refused with a message and stores nothing", async () => {
    const payment = await paidPayment();
    const cases: Array<[unknown, string]> = [
      [{ amount: "1" }, "amount"],
      [{ amount: "0.00" }, "amount must be greater than 0.00"],
      [{ amount: "1.0000001" }, "amount"],
      [{ refund_address: "0x123" }, "refund_address"],
      [{ refund_address: PAYER.replace("8ba1", "8BA1") }, "EIP-55"],
      [{ refund_address: "0x0000000000000000000000000000000000000000" }, "zero address"],
      [{ surprise: 1 }, "surprise"],
    ];
    for (const [body, words] of cases) {
      const res = await merchant.post(`/api/v1/payments/${payment}/refunds`, body);
      expect(res.status).toBe(400);
      expect((res.json as { error: string }).error).toContain(words);
    }
    const listed = await merchant.get(`/api/v1/payments/${payment}/refunds`);
    expect((listed.json as { data: unknown[] }).data).toEqual([]);
  });

  test("a deposit address is refused as a refund address", async () => {
    const payment = await paidPayment();
    const another = await merchant.post("/api/v1/payments", { amount: "1.00" });
    const deposit = (another.json as { deposit_address: string }).deposit_address;
    const res = await merchant.post(`/api/v1/payments/${payment}/refunds`, { refund_address: deposit });
    expect(res.status).toBe(400);
    expect((res.json as { error: string }).error).toContain("deposit address");
  });

  test("with the merchant's address it is payable at once, with the exact transfer to make", async () => {
    const payment = await paidPayment();
    const res = await merchant.post(`/api/v1/payments/${payment}/refunds`, {
      amount: "2.50",
      refund_address: PAYER.toLowerCase(),
      metadata: { ticket: "T-9" },
    });
    expect(res.status).toBe(201);
    const refund = res.json as Refund & { payment_instructions: Record<string, unknown> };
    expect(refund.status).toBe("awaiting_payment");
    expect(refund.refund_address).toBe(getAddress(PAYER));
    expect(refund.metadata).toEqual({ ticket: "T-9" });
    const usdc = server.config.chain.usdc;
    expect(refund.payment_instructions).toEqual({
      chain: server.config.chain.name,
      chain_id: server.config.chain.chainId,
      token: usdc,
      to: getAddress(PAYER),
      amount: "2.50",
      // transfer(address,uint256): selector a9059cbb, the address and 2500000 (0x2625a0), each padded to 32 bytes.
      data: `0xa9059cbb${PAYER.slice(2).toLowerCase().padStart(64, "0")}${(2_500_000).toString(16).padStart(64, "0")}`,
      uri: `ethereum:${usdc}@${server.config.chain.chainId}/transfer?address=${getAddress(PAYER)}&uint256=2500000`,
    });
  });

  test("the same Idempotency-Key returns the first refund and makes no second", async () => {
    const payment = await paidPayment();
    const headers = { "Idempotency-Key": `refund-${payment}` };
    const first = await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "1.00" }, headers);
    const again = await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "1.00" }, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    const changed = await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount: "2.00" }, headers);
    expect(changed.status).toBe(422);
    const listed = await merchant.get(`/api/v1/payments/${payment}/refunds`);
    expect((listed.json as { data: unknown[] }).data).toHaveLength(1);
  });
});

describe("scoping", () => {
  test("another account's payment and refund are 404, as missing ones", async () => {
    const payment = await paidPayment();
    const refund = (await merchant.post(`/api/v1/payments/${payment}/refunds`, {})).json as Refund;
    expect((await other.post(`/api/v1/payments/${payment}/refunds`, {})).status).toBe(404);
    expect((await other.get(`/api/v1/payments/${payment}/refunds`)).status).toBe(404);
    expect((await other.get(`/api/v1/refunds/${refund.id}`)).status).toBe(404);
    expect((await other.post(`/api/v1/refunds/${refund.id}/cancel`, {})).status).toBe(404);
    expect((await other.get("/api/v1/refunds")).json).toMatchObject({ data: [] });
    expect((await merchant.get(`/api/v1/refunds/${refund.id}`)).status).toBe(200);
  });
});

describe("canceling", () => {
  test("an unpaid refund is canceled once; what it held may be refunded again", async () => {
    const payment = await paidPayment("3.00", 3_000_000n);
    const refund = (await merchant.post(`/api/v1/payments/${payment}/refunds`, {})).json as Refund;
    const canceled = await merchant.post(`/api/v1/refunds/${refund.id}/cancel`, {});
    expect(canceled.status).toBe(200);
    expect(canceled.json).toMatchObject({ id: refund.id, status: "canceled" });
    const again = await merchant.post(`/api/v1/refunds/${refund.id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.json).toEqual({ error: `refund ${refund.id} has been canceled already` });
    const anew = await merchant.post(`/api/v1/payments/${payment}/refunds`, {});
    expect((anew.json as Refund).amount).toBe("3.00");
  });
});

describe("listing", () => {
  test("newest first, with a cursor and filters", async () => {
    const payment = await paidPayment("9.00", 9_000_000n);
    const ids: string[] = [];
    for (const amount of ["1.00", "2.00", "3.00"])
      ids.push(((await merchant.post(`/api/v1/payments/${payment}/refunds`, { amount })).json as Refund).id);
    await merchant.post(`/api/v1/refunds/${ids[0]}/cancel`, {});
    const page = (await merchant.get(`/api/v1/refunds?limit=2&payment=${payment}`)).json as {
      data: Refund[];
      has_more: boolean;
    };
    expect(page.data.map((r) => r.id)).toEqual(ids.slice(1).reverse());
    expect(page.has_more).toBe(true);
    const next = (await merchant.get(`/api/v1/refunds?limit=2&payment=${payment}&starting_after=${ids[1]}`)).json as {
      data: Refund[];
      has_more: boolean;
    };
    expect(next.data.map((r) => r.id)).toEqual(ids.slice(0, 1));
    expect(next.has_more).toBe(false);
    const canceled = (await merchant.get(`/api/v1/refunds?status=canceled&payment=${payment}`)).json as {
      data: Refund[];
    };
    expect(canceled.data.map((r) => r.id)).toEqual(ids.slice(0, 1));
    expect((await merchant.get("/api/v1/refunds?status=paid")).status).toBe(400);
  });
});

describe("events", () => {
  test("each change is an event carrying the refund, metadata as sent", async () => {
    const payment = await paidPayment();
    const sent = '{"order": "A-1",  "note":"x"}';
    const res = await merchant.post(`/api/v1/payments/${payment}/refunds`, `{"amount":"1.00","metadata":${sent}}`);
    const refund = res.json as Refund;
    await merchant.post(`/api/v1/refunds/${refund.id}/cancel`, {});
    const events = (await merchant.get("/api/v1/events?limit=5")).json as {
      data: Array<{ type: string; data: { refund?: Refund } }>;
    };
    const ours = events.data.filter((e) => e.data.refund?.id === refund.id);
    expect(ours.map((e) => e.type)).toEqual(["refund.canceled", "refund.created"]);
    expect(ours[1]!.data.refund).toMatchObject({ status: "awaiting_address", metadata: { order: "A-1", note: "x" } });
  });

  test("the payment shows what its succeeded refunds paid back, and keeps its status", async () => {
    const payment = await paidPayment();
    const view = (await merchant.get(`/api/v1/payments/${payment}`)).json as Record<string, unknown>;
    expect(view).toMatchObject({ status: "confirmed", amount_refunded: "0.00" });
  });
});
