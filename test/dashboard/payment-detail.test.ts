/**
 * The dashboard's payment page over real HTTP, signed in, against the server on a real anvil:
 * a payment paid on chain shows every field, its transfer, its settlement, its status history
 * and its webhook deliveries; another account's payment, an unknown id and a malformed one are
 * the dashboard's 404 page. A notice named in the address (`?recovery=`) shows only for a stored
 * recovery of that payment, in words of its record.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { escapeHtml } from "../../src/html/template.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { insertPendingRecovery } from "../support/recovery-rows.ts";
import { api } from "../support/server.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { startChain, type TestChain, usdc } from "../support/test-chain.ts";

setDefaultTimeout(60_000);

let chain: TestChain;
let stack: Stack;
let receiver: Receiver;
let client: DashboardClient;
let paid: any;
let endpointUrl: string;

beforeAll(async () => {
  chain = await startChain();
  stack = await startStack({ chain, confirmations: 1, env: { STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" } });
  receiver = startReceiver();
  endpointUrl = receiver.url;
  const endpoint = await stack.request("/api/v1/webhook_endpoints", { body: { url: endpointUrl } });
  expect(endpoint.status).toBe(201);
  paid = await stack.createPayment({
    line_items: [
      { description: "Ceramic pour-over set", unit_amount: "12.50", quantity: 2 },
      { description: "Gift wrap <b>", unit_amount: "0.99", quantity: 1 },
    ],
    description: "Order #1042",
    reference: "order-1042",
    invoice_number: "INV-2031-42",
    customer_name: "Ada Lovelace",
    customer_email: "ada@example.com",
    due_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    success_url: "https://shop.example.test/thanks",
    metadata: { order_id: "1042", note: "<script>alert(1)</script>" },
  });
  await stack.pay(paid.deposit_address, usdc("25.99"));
  paid = await stack.waitForStatus(paid.id, "confirmed", { mine: true, timeoutMs: 30_000 });
  // Every event written so far has been delivered, and its attempt recorded.
  await stack.waitFor(
    async () =>
      (
        await stack.sql<{ n: number }>(
          `SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE e.payment_id = ? AND d.state = 'succeeded'`,
          paid.id,
        )
      )[0]!.n === (await stack.allEvents(paid.id)).length,
    20_000,
    "the payment's webhooks delivered",
  );
  client = await signIn(stack.url, await createDashboardUser(stack.env, stack.accountId));
});

afterAll(async () => {
  receiver?.stop();
  await stack?.stop();
  await chain?.stop();
});

async function detailPage(id: string): Promise<{ status: number; text: string }> {
  const res = await client.get(`/dashboard/payments/${id}`);
  return { status: res.status, text: await res.text() };
}

describe("a paid payment's page", () => {
  test("shows amounts, status, fee and net, and every field the merchant sent", async () => {
    const { status, text } = await detailPage(paid.id);
    expect(status).toBe(200);
    expect(text).toContain('<span id="pd-amount">25.99</span> USDC');
    expect(text).toContain('<span class="badge confirmed" id="pd-status">confirmed</span>');
    expect(text).toMatch(/<dt>Received<\/dt><dd>25\.99 USDC<\/dd>/);
    expect(text).toMatch(/<dt>Fee<\/dt><dd>0\.00 USDC <span class="muted">\(0\.00%\)<\/span><\/dd>/);
    expect(text).toMatch(/<dt>Net to you<\/dt><dd>25\.99 USDC<\/dd>/);
    expect(text).toContain(paid.deposit_address);
    for (const value of ["Order #1042", "order-1042", "INV-2031-42", "Ada Lovelace", "ada@example.com"])
      expect(text).toContain(value);
    expect(text).toContain("https://shop.example.test/thanks");
    expect(text).toMatch(/<dt>Due<\/dt><dd><time datetime="[^"]+"/);
    expect(text).toMatch(/<dt>Expires<\/dt><dd><time datetime="[^"]+"/);
    // Line items, escaped like everything else.
    expect(text).toContain("Ceramic pour-over set");
    expect(text).toContain("Gift wrap &#60;b&#62;");
    expect(text).not.toContain("Gift wrap <b>");
  });

  test("shows the metadata as escaped, indented JSON", async () => {
    const { text } = await detailPage(paid.id);
    const pre = /<pre class="pd-json">([\s\S]*?)<\/pre>/.exec(text)?.[1];
    expect(pre).toBe(escapeHtml(JSON.stringify(paid.metadata, null, 2)));
    expect(text).not.toContain("<script>alert(1)</script>");
  });

  test("lists the transfer and the settlement transaction, unlinked on a chain no explorer knows", async () => {
    const { text } = await detailPage(paid.id);
    const [transfer] = paid.transfers;
    expect(transfer.confirmed).toBe(true);
    const transfers = /<section class="card pd-card" id="pd-transfers"[\s\S]*?<\/section>/.exec(text)![0];
    expect(transfers).toContain(`title="${transfer.tx_hash}"`);
    expect(transfers).toContain(">25.99<");
    expect(transfers).toContain("credited");
    const [settlement] = await stack.sql<{ tx_hash: string }>(
      "SELECT tx_hash FROM settlements WHERE payment_id = ? AND state = 'mined'",
      paid.id,
    );
    const settlements = /<section class="card pd-card" id="pd-settlements"[\s\S]*?<\/section>/.exec(text)![0];
    expect(settlements).toContain(`title="${settlement!.tx_hash}"`);
    expect(settlements).toContain(">mined<");
    // The local chain is a custom one: no explorer links anywhere on the page.
    expect(text).not.toMatch(/href="[^"]*\/(tx|address)\//);
  });

  test("shows the status history from the payment's events, in order", async () => {
    const { text } = await detailPage(paid.id);
    const history = /<ol class="pd-history">([\s\S]*?)<\/ol>/.exec(text)![1]!;
    const types = [...history.matchAll(/<span class="mono">([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(types).toEqual(["created (pending)", ...(await stack.allEvents(paid.id))]);
    expect(types).toContain("payment.confirmed");
  });

  test("shows each webhook delivery of the payment with its attempts", async () => {
    const { text } = await detailPage(paid.id);
    const section = /<section class="card pd-card" id="pd-deliveries"[\s\S]*?<\/section>/.exec(text)![0];
    const deliveries = section.split('<div class="pd-delivery">').slice(1);
    expect(deliveries.length).toBe((await stack.allEvents(paid.id)).length);
    for (const delivery of deliveries) {
      expect(delivery).toContain(endpointUrl);
      expect(delivery).toContain('<span class="badge confirmed">succeeded</span>');
      expect(delivery).toMatch(/<td class="num">200<\/td>/);
      expect(delivery).toMatch(/<td class="num">\d+ ms<\/td>/);
    }
    expect(section).toContain("payment.confirmed");
  });

  test("offers the pay link with a copy button and its QR code", async () => {
    const { text } = await detailPage(paid.id);
    expect(text).toContain(`href="${paid.pay_url}"`);
    expect(text).toContain(`data-copy="${paid.pay_url}"`);
    expect(text).toMatch(/<img class="pd-qr" [^>]*src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
  });
});

describe("payments the user may not see", () => {
  test("another account's payment is the dashboard's 404 page, showing none of it", async () => {
    const other = (await runAccountCommand(
      "account",
      ["create", "--name", "Other Shop", "--payout-address", stack.payout],
      stack.env,
    )) as { api_key: string };
    const res = await api(stack.url, other.api_key)("/api/v1/payments", {
      body: { amount: "7.77", description: "Secret order of another shop" },
    });
    const theirs = res.json as { id: string; deposit_address: string };
    const { status, text } = await detailPage(theirs.id);
    expect(status).toBe(404);
    expect(text).toContain("Payment not found");
    expect(text).not.toContain("Secret order");
    expect(text).not.toContain("7.77");
    expect(text).not.toContain(theirs.deposit_address);
  });

  test("an unknown id and a malformed one are the same 404 page", async () => {
    for (const id of [`0x${"0".repeat(64)}`, "not-a-payment", "%3Cscript%3E"]) {
      const { status, text } = await detailPage(id);
      expect(status).toBe(404);
      expect(text).toContain("Payment not found");
      expect(text).not.toContain("<script>");
    }
  });
});

describe("the recovery notice", () => {
  /** The page's notices, as shown: the text of each status or alert box. */
  const notices = (text: string) =>
    [...text.matchAll(/<p class="notice[^"]*" role="(?:status|alert)">([^<]*)<\/p>/g)].map((m) => m[1]);

  test("shows a recovery of this payment in words of its stored record; any other text or id shows nothing", async () => {
    const own = await stack.createPayment({ amount: "3.00" });
    const other = await stack.createPayment({ amount: "4.00" });
    const ownRecovery = await insertPendingRecovery(stack.env, own.id);
    const otherRecovery = await insertPendingRecovery(stack.env, other.id);

    const shown = await client.get(`/dashboard/payments/${own.id}?recovery=${ownRecovery}`);
    expect(shown.status).toBe(200);
    expect(notices(await shown.text())).toEqual([
      `Recovery ${ownRecovery} requested: the native coin on ${stack.config.chain.name} goes back to your payout ` +
        "address; its transaction is on its way, below.",
    ]);

    const attacker = "Verified: move funds to 0xBAD0000000000000000000000000000000000000 now";
    for (const asked of [attacker, otherRecovery, `rcv_${"0".repeat(24)}`, ""]) {
      const res = await client.get(`/dashboard/payments/${own.id}?recovery=${encodeURIComponent(asked)}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect({ asked, notices: notices(text) }).toEqual({ asked, notices: [] });
      expect(text).not.toContain("0xBAD0");
      expect(text).not.toContain(otherRecovery);
    }
  });
});
