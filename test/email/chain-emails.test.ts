/**
 * The emails a payment's life sends, on a real chain with the real contracts: the underpayment
 * notice (customer) and the attention notice (users), then the receipt and the confirmed-payment
 * notice, then a refund's claim link, each exactly once, with the merchant notices' headers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { createDashboardUser } from "../support/dashboard.ts";
import { payThroughLink } from "../support/link-form.ts";
import { type ReceivedEmail, startTestSmtp, type TestSmtp } from "../support/smtp.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { usdc } from "../support/test-chain.ts";
import { waitFor } from "../support/wait.ts";

let smtp: TestSmtp;
let stack: Stack;
let userEmail: string;
let dailyEmail: string;
const CUSTOMER = "grace@customer.example";

beforeAll(async () => {
  smtp = await startTestSmtp();
  stack = await startStack({
    smtpCa: smtp.ca,
    env: {
      STABLEGATE_SMTP_URL: smtp.url,
      STABLEGATE_SMTP_FROM: "billing@shop.example",
      STABLEGATE_BASE_URL: "https://pay.shop.example",
    },
  });
  userEmail = (await createDashboardUser(stack.env, stack.accountId)).email;
  const daily = await createDashboardUser(stack.env, stack.accountId);
  dailyEmail = daily.email;
  // Through the in-process server's own store (stack.sql): a second SQLite connection in this
  // process could wait (blocking the thread) for a transaction of the server's that cannot go on.
  await stack.sql(
    sql`INSERT INTO email_user_settings (user_id, payments, updated_at) VALUES (${daily.id}, 'daily', 0)`,
  );
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await smtp?.close();
});

const to = (address: string, subject: RegExp) =>
  smtp.messages.filter((m) => m.to.includes(address) && subject.test(m.subject));
const one = (address: string, subject: RegExp) =>
  waitFor(
    () => (to(address, subject).length > 0 ? to(address, subject)[0] : undefined),
    20_000,
    `${subject} to ${address}`,
  );

describe("a payment's emails", () => {
  let paymentId: string;
  let underpaid: ReceivedEmail;
  let attention: ReceivedEmail;

  beforeAll(async () => {
    const payment = await stack.createPayment({
      amount: "30.00",
      invoice_number: "INV-77",
      customer_email: CUSTOMER,
      customer_name: "Grace",
    });
    paymentId = payment.id;
    await stack.pay(payment.deposit_address, usdc("10.00"));
    await stack.waitForStatus(paymentId, "underpaid", { mine: true });
    underpaid = await one(CUSTOMER, /still due/);
    // This payment's notice: another test's payment tells the same users too.
    attention = await one(userEmail, /needs attention.*INV-77/);
  }, 60_000);

  test("an underpayment tells the customer what is still due, with the pay link", () => {
    expect(underpaid.subject).toBe("20.00 USDC still due to Stack Shop");
    expect(underpaid.text).toContain("Stack Shop received 10.00 USDC of the 30.00 USDC asked");
    expect(underpaid.text).toContain(`https://pay.shop.example/pay/${paymentId}`);
    expect(underpaid.headers["list-unsubscribe"]).toBeUndefined();
  });

  test("and every dashboard user that it needs attention, from Stablegate, with List-Unsubscribe", () => {
    expect(attention.subject).toBe("Payment needs attention: underpaid (invoice INV-77)");
    expect(attention.headers.from).toBe("Stablegate <billing@shop.example>");
    expect(attention.headers["list-unsubscribe"]).toBe("<https://pay.shop.example/dashboard/settings#email>");
    expect(attention.text).toContain(`https://pay.shop.example/dashboard/payments/${paymentId}`);
    expect(to(dailyEmail, /needs attention.*INV-77/)).toHaveLength(1);
  });

  test("once paid: the receipt to the customer, the notice to the users who want each payment, once each", async () => {
    const payment = await stack.getPayment(paymentId);
    await stack.pay(payment.deposit_address, usdc("20.00"));
    await stack.waitForStatus(paymentId, "confirmed", { mine: true, timeoutMs: 30_000 });
    const receipt = await one(CUSTOMER, /^Receipt/);
    expect(receipt.subject).toBe("Receipt from Stack Shop: 30.00 USDC paid");
    expect(receipt.text).toContain("Invoice");
    expect(receipt.text).toContain("INV-77");
    const notice = await one(userEmail, /^Payment confirmed/);
    expect(notice.subject).toBe("Payment confirmed: 30.00 USDC (invoice INV-77)");
    // The daily user is told in tomorrow's summary instead.
    expect(to(dailyEmail, /^Payment confirmed/)).toEqual([]);
    // Every email is in the outbox once, and sent.
    const rows = await waitFor(
      async () => {
        const all = await stack.sql<{ recipient: string; kind: string; state: string }>(
          "SELECT recipient, kind, state FROM email_outbox WHERE payment_id = ? ORDER BY seq",
          paymentId,
        );
        return all.every((r) => r.state === "sent") ? all : undefined;
      },
      10_000,
      "every email of the payment marked sent",
    );
    expect(smtp.messages.filter((m) => m.subject === receipt.subject)).toHaveLength(1);
    expect(rows.filter((r) => r.kind === "receipt")).toHaveLength(1);
  }, 60_000);

  test("a refund awaiting the payer's address sends the customer its claim link", async () => {
    const created = await stack.request(`/api/v1/payments/${paymentId}/refunds`, { body: { amount: "5.00" } });
    expect(created.status).toBe(201);
    const mail = await one(CUSTOMER, /refunding you/);
    expect(mail.subject).toBe("Stack Shop is refunding you 5.00 USDC");
    expect(mail.text).toContain(created.json.claim_url);
    expect(mail.html).toContain(`href="${created.json.claim_url}"`);
  });
});

describe("a payment a payment link's visitor started", () => {
  test("sends no underpayment notice to the address the visitor typed; the users are still told", async () => {
    const link = await stack.request("/api/v1/payment_links", { body: { amount: "8.00", description: "Gift card" } });
    expect(link.status).toBe(201);
    const paymentId = await payThroughLink(stack.url, link.json.id, { email: "typed@stranger.example" });
    const payment = await stack.getPayment(paymentId);
    expect(payment.customer_email).toBe("typed@stranger.example");
    await stack.pay(payment.deposit_address, usdc("3.00"));
    await stack.waitForStatus(paymentId, "underpaid", { mine: true });
    await waitFor(
      () => smtp.messages.some((m) => m.to.includes(userEmail) && m.text.includes(paymentId)),
      20_000,
      "the attention notice",
    );
    const kinds = await stack.sql<{ kind: string; recipient: string }>(
      "SELECT kind, recipient FROM email_outbox WHERE payment_id = ?",
      paymentId,
    );
    expect(kinds.filter((r) => r.recipient === "typed@stranger.example")).toEqual([]);
    expect(smtp.messages.filter((m) => m.to.includes("typed@stranger.example"))).toEqual([]);
  }, 60_000);
});
