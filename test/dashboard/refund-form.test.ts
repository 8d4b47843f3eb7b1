/**
 * The payment page's refunds over real HTTP, signed in, against a running server: the form makes a
 * refund (303 back to the page, which lists it with its claim link), a refused one says why on the
 * page and stores nothing, Cancel cancels, another account's refund is a 404, and a refund with an
 * address shows the exact transfer that pays it. Received funds are written to the payment's row,
 * as the watcher's credit would leave them; paying from a wallet is browser-refund-wallet.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeFunctionData, erc20Abi } from "viem";
import { sql } from "../../src/db/engine.ts";
import { createRefundStore } from "../../src/refunds/store.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { markReceived } from "../support/refund-rows.ts";
import { type Api, api, startTestServer, type TestServer } from "../support/server.ts";

let server: TestServer;
let merchant: Api;
let client: DashboardClient;
let stranger: DashboardClient;

const PAYER = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("Refund Shop");
  merchant = api(server.url, account.apiKey);
  client = await signIn(server.url, await createDashboardUser(server.env, account.accountId));
  const other = await server.createAccount("Other Shop");
  stranger = await signIn(server.url, await createDashboardUser(server.env, other.accountId));
});
afterAll(() => server.stop());

/** A payment of 25.00 that received `received` micro-USDC. */
async function paidPayment(received = 25_000_000n): Promise<string> {
  const res = await merchant("/api/v1/payments", { body: { amount: "25.00" } });
  expect(res.status).toBe(201);
  if (received > 0n) await markReceived(server.env, res.json.id, received);
  return res.json.id;
}

type StoredRefund = {
  id: string;
  amount: bigint;
  status: string;
  reason: string | null;
  refund_address: string | null;
};
const refundsOf = (paymentId: string) =>
  server.running.db.all<StoredRefund>(
    sql`SELECT id, amount, status, reason, refund_address FROM refunds WHERE payment_id = ${paymentId} ORDER BY seq`,
    { bigints: true },
  );
const reservedOf = async (paymentId: string) =>
  (await server.running.db.get<{ refund_reserved: bigint }>(
    sql`SELECT refund_reserved FROM payments WHERE id = ${paymentId}`,
    { bigints: true },
  ))!.refund_reserved;

const page = async (paymentId: string) => {
  const res = await client.get(`/dashboard/payments/${paymentId}`);
  expect(res.status).toBe(200);
  return res.text();
};
const nonceOf = (html: string) => /name="nonce" value="([0-9A-Za-z]{24})"/.exec(html)![1]!;

describe("the refund form on the payment page", () => {
  test("offers everything received; a refund made from it is listed with its claim link and a copy button", async () => {
    const payment = await paidPayment();
    const before = await page(payment);
    expect(before).toContain('<h2 id="pd-refunds-title">Refunds</h2>');
    expect(before).toContain('<input id="rf-amount" name="amount" class="mono" value="25.00"');
    expect(before).toContain("Up to 25.00 USDC of the\n        25.00 USDC received may still be refunded.");
    expect(before).toMatch(/<dt>Refunded<\/dt><dd>0\.00 USDC<\/dd>/);

    const nonce = nonceOf(before);
    const form = { amount: "7.50", reason: "Damaged in transit", refund_address: "", nonce };
    const res = await client.post(`/dashboard/payments/${payment}/refunds`, form);
    expect(res.status).toBe(303);
    const [row] = await refundsOf(payment);
    expect(row).toMatchObject({ amount: 7_500_000n, status: "awaiting_address", reason: "Damaged in transit" });
    expect(row!.refund_address).toBeNull();
    expect(res.headers.get("location")).toBe(`/dashboard/payments/${payment}?refund=${row!.id}#refund-${row!.id}`);

    // The same form sent again (a double click) answers with the same refund, and makes no other.
    const again = await client.post(`/dashboard/payments/${payment}/refunds`, form);
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(res.headers.get("location"));
    expect(await refundsOf(payment)).toHaveLength(1);

    const after = await (await client.get(res.headers.get("location")!)).text();
    expect(after).toContain("Refund of 7.50 USDC created. Send your customer its claim link, below.");
    const claimUrl = (await merchant(`/api/v1/refunds/${row!.id}`)).json.claim_url as string;
    expect(claimUrl).toMatch(/\/refund\/[A-Za-z0-9_-]{43}$/);
    expect(after).toContain(`<a class="mono rf-value" href="${claimUrl}" data-claim-url>${claimUrl}</a>`);
    expect(after).toContain(`data-copy="${claimUrl}" hidden>Copy link</button>`);
    expect(after).toContain(">awaiting address</span>");
    expect(after).toContain("Damaged in transit");
    // What is left to refund is the form's default now.
    expect(after).toContain('<input id="rf-amount" name="amount" class="mono" value="17.50"');
  });

  test("a refund of more than may still be refunded is refused on the page, what was typed kept, nothing stored", async () => {
    const payment = await paidPayment(10_000_000n);
    const nonce = nonceOf(await page(payment));
    const res = await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "10.000001",
      reason: "Too generous",
      refund_address: "",
      nonce,
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain(
      '<p class="notice bad" role="alert">Amount 10.000001 USDC is more than the 10.00 USDC that may still be refunded.</p>',
    );
    expect(html).toContain('value="10.000001"');
    expect(html).toContain('value="Too generous"');
    expect(await refundsOf(payment)).toEqual([]);
    expect(await reservedOf(payment)).toBe(0n);

    // The same nonce stays good for the corrected values.
    const fixed = await client.post(`/dashboard/payments/${payment}/refunds`, { amount: "10.00", nonce });
    expect(fixed.status).toBe(303);
    expect((await refundsOf(payment)).map((r) => r.amount)).toEqual([10_000_000n]);
    const full = await page(payment);
    expect(full).not.toContain('id="rf-form"');
    expect(full).toContain("Everything received (10.00 USDC) is refunded or\n      being refunded.");
  });

  test.each([
    [
      "an amount that is not a decimal",
      { amount: "ten" },
      "Amount must be a decimal string with two to six decimals, such as &#34;12.50&#34;.",
    ],
    ["a zero amount", { amount: "0.00" }, "Amount must be greater than 0.00."],
    ["a malformed address", { refund_address: "0x1234" }, "Refund address must be a 0x address of 40 hex digits."],
    ["the zero address", { refund_address: `0x${"0".repeat(40)}` }, "Refund address cannot be the zero address."],
  ])("%s is refused on the page and stores nothing", async (_name, values, message) => {
    const payment = await paidPayment();
    const res = await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "1.00",
      nonce: nonceOf(await page(payment)),
      ...values,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(message);
    expect(await refundsOf(payment)).toEqual([]);
  });

  test("a payment that received nothing has no form, and a refund posted anyway is refused", async () => {
    const payment = await paidPayment(0n);
    const html = await page(payment);
    expect(html).not.toContain('id="rf-form"');
    expect(html).toContain("Nothing has been received yet: a refund can be made once funds\n      arrive.");
    const res = await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "1.00",
      nonce: nonceOf(await page(await paidPayment())),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`Payment ${payment} has received nothing to refund.`);
    expect(await refundsOf(payment)).toEqual([]);
  });

  test("Cancel cancels an unpaid refund and gives its amount back; a second cancel says why", async () => {
    const payment = await paidPayment();
    const created = await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "5.00",
      nonce: nonceOf(await page(payment)),
    });
    expect(created.status).toBe(303);
    const [row] = await refundsOf(payment);
    const html = await page(payment);
    expect(html).toContain(
      `<form class="inline" method="post" action="/dashboard/refunds/${row!.id}/cancel" data-refund-cancel>`,
    );

    const res = await client.post(`/dashboard/refunds/${row!.id}/cancel`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/payments/${payment}?refund=${row!.id}#refund-${row!.id}`);
    expect((await refundsOf(payment))[0]!.status).toBe("canceled");
    expect(await reservedOf(payment)).toBe(0n);
    const after = await (await client.get(res.headers.get("location")!)).text();
    expect(after).toContain("Refund of 5.00 USDC canceled: it may be refunded again.");
    expect(after).toContain(">canceled</span>");
    expect(after).not.toContain(`/dashboard/refunds/${row!.id}/cancel`);
    expect(after).not.toContain("data-claim-url"); // a canceled refund's link leads nowhere
    expect(after).toContain('<input id="rf-amount" name="amount" class="mono" value="25.00"');

    const twice = await client.post(`/dashboard/refunds/${row!.id}/cancel`, {});
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain(`Refund ${row!.id} has been canceled already.`);
  });

  test("another account's refund cannot be canceled, nor refunded from: 404, and it stays as it was", async () => {
    const payment = await paidPayment();
    await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "5.00",
      nonce: nonceOf(await page(payment)),
    });
    const [row] = await refundsOf(payment);
    const res = await stranger.post(`/dashboard/refunds/${row!.id}/cancel`, {});
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("This account has no refund with that id.");
    const refund = await stranger.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "1.00",
      nonce: "strangerNonce00000000000",
    });
    expect(refund.status).toBe(404);
    expect(await refundsOf(payment)).toEqual([row!]);
    expect(await reservedOf(payment)).toBe(5_000_000n);
    expect((await stranger.get(`/dashboard/payments/${payment}?refund=${row!.id}`)).status).toBe(404);
  });

  test("a refund with an address shows the exact transfer that pays it: figures, calldata, its QR code", async () => {
    const payment = await paidPayment();
    const res = await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "3.25",
      refund_address: PAYER.toLowerCase(),
      nonce: nonceOf(await page(payment)),
    });
    expect(res.status).toBe(303);
    const [row] = await refundsOf(payment);
    expect(row).toMatchObject({ status: "awaiting_payment", refund_address: PAYER });
    const html = await (await client.get(res.headers.get("location")!)).text();
    expect(html).toContain("Refund of 3.25 USDC created. Pay it from your wallet, below.");
    const usdc = server.config.chain.usdc;
    const calldata = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [PAYER, 3_250_000n] });
    expect(html).toContain(
      `<div class="rf-pay" data-refund-pay="${row!.id}" data-chain-id="31337" data-chain="custom"\n` +
        `    data-token="${usdc}" data-to="${PAYER}" data-amount="3.25" data-calldata="${calldata}">`,
    );
    expect(html).toContain("<dd><strong>3.25 USDC</strong></dd>");
    expect(html).toContain(`<span class="mono rf-value">${calldata}</span>`);
    expect(html).toMatch(
      /<img class="pd-qr rf-qr" width="156" height="156" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/,
    );
    // Only the page's script shows the wallet button, once it finds a wallet.
    expect(html).toContain('<button class="btn" type="button" data-refund-wallet hidden>Pay with wallet</button>');
  });

  test("a refund whose transfer is seen, then counted: no Cancel, no transfer to make; then its hash and the payment's amount_refunded", async () => {
    const payment = await paidPayment();
    await client.post(`/dashboard/payments/${payment}/refunds`, {
      amount: "2.00",
      refund_address: PAYER,
      nonce: nonceOf(await page(payment)),
    });
    const [row] = await refundsOf(payment);
    const store = createRefundStore(server.running.db);
    const tx = `0x${"cd".repeat(32)}`;
    // As the watcher leaves it: the transfer seen, not yet at the payment's confirmation depth.
    expect(
      await store.seeTransfer(row!.id, { txHash: tx, logIndex: 0, blockNumber: 9, blockHash: tx }, Date.now()),
    ).toBe(true);
    const seen = await page(payment);
    expect(seen).toContain(
      "A transfer paying this refund is on chain; it succeeds once\n  the chain has confirmed it.",
    );
    expect(seen).toContain(`title="${tx}"`);
    expect(seen).not.toContain(`data-refund-pay="${row!.id}"`);
    expect(seen).not.toContain(`/dashboard/refunds/${row!.id}/cancel`);
    const refused = await client.post(`/dashboard/refunds/${row!.id}/cancel`, {});
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(`a transfer paying it (${tx}) is on chain`);
    expect((await refundsOf(payment))[0]!.status).toBe("awaiting_payment");

    await server.running.db.transaction(async () => {
      expect(await store.succeed(row!.id, Date.now())).toBe(true);
      await store.addRefunded(payment, 2_000_000n, Date.now());
    });
    const done = await page(payment);
    expect(done).toContain(">succeeded</span>");
    expect(done).toContain(`title="${tx}"`);
    expect(done).not.toContain("data-claim-url");
    expect(done).toMatch(/<dt>Refunded<\/dt><dd>2\.00 USDC<\/dd>/);
    expect(done).toContain('<input id="rf-amount" name="amount" class="mono" value="23.00"');
  });
});
