/**
 * Customer emails through a real SMTP server (STARTTLS, self-signed certificate trusted only
 * here): the invoice a new payment with an invoice number sends, its headers, the account's
 * switch, and the faults: the server down for a while, a refused recipient, a slow server.
 * Status-driven emails (receipt, underpayment, refund claim) are tested on a real chain in
 * chain-emails.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { createEmailStore } from "../../src/email/store.ts";
import { createLogger } from "../../src/lib/log.ts";
import { parseSmtpUrl } from "../../src/lib/smtp-url.ts";
import { runCli } from "../support/cli.ts";
import { createTestClock } from "../support/clock.ts";
import { createDashboardUser } from "../support/dashboard.ts";
import { pdfText } from "../support/pdf-text.ts";
import { startReceiver } from "../support/receiver.ts";
import { api, startTestServer, TEST_BASE_URL, type TestServer } from "../support/server.ts";
import { type ReceivedEmail, SMTP_PASSWORD, startTestSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitFor } from "../support/wait.ts";

let smtp: TestSmtp;
let server: TestServer;
let key: string;
const clock = createTestClock();
/** Every line the server logged, at debug level: none may hold the SMTP password. */
const logLines: string[] = [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  server = await startTestServer(
    // Webhooks may go to a local receiver (the disabled endpoint's notice).
    { webhookAllowPrivate: true, email: { smtp: loadSmtp(smtp.url), from: "billing@shop.example" } },
    {
      clock,
      smtpTls: { ca: smtp.ca, timeoutMs: 5_000 },
      emailPollMs: 50,
      log: createLogger("debug", (l) => logLines.push(l)),
    },
  );
  const account = await server.createAccount("Corner Shop");
  key = account.apiKey;
});
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
});

const loadSmtp = (url: string) => parseSmtpUrl("STABLEGATE_SMTP_URL", url);

let invoices = 0;
async function invoice(to: string, extra: Record<string, unknown> = {}) {
  const res = await api(server.url, key)("/api/v1/payments", {
    body: { amount: "42.50", invoice_number: `INV-${++invoices}`, customer_email: to, customer_name: "Ada", ...extra },
  });
  expect(res.status).toBe(201);
  return res.json as { id: string; invoice_number: string };
}

const arrivedFor = (to: string) => smtp.messages.filter((m) => m.to.includes(to));
const waitArrived = (to: string, n = 1) =>
  waitFor(() => (arrivedFor(to).length >= n ? arrivedFor(to) : undefined), 10_000, `${n} email(s) to ${to}`);

/**
 * Through the server's own store: a second SQLite connection in this process could wait (blocking
 * the thread) for a transaction of the server's that cannot go on meanwhile.
 */
const outbox = (recipient: string) =>
  server.running.db.all<{ id: string; state: string; attempts: number; last_error: string | null }>(
    sql`SELECT id, state, attempts, last_error FROM email_outbox WHERE recipient = ${recipient} ORDER BY seq`,
  );

describe("the invoice", () => {
  let mail: ReceivedEmail;
  let payment: { id: string; invoice_number: string };
  beforeAll(async () => {
    payment = await invoice("ada@customer.example", { description: "Two <b>mugs</b> & a teapot" });
    mail = (await waitArrived("ada@customer.example"))[0]!;
  });

  test("reaches the customer over STARTTLS, from the merchant's name, with the pay link", () => {
    expect(mail.secure).toBe(true);
    expect(mail.to).toEqual(["ada@customer.example"]);
    expect(mail.from).toBe("billing@shop.example");
    expect(mail.headers.from).toBe("Corner Shop <billing@shop.example>");
    expect(mail.subject).toBe(`Invoice ${payment.invoice_number} from Corner Shop: 42.50 USDC`);
    expect(mail.text).toContain(`${TEST_BASE_URL}/pay/${payment.id}`);
    expect(mail.text).toContain("Hello Ada, Corner Shop sent you an invoice for 42.50 USDC");
    expect(mail.html).toContain(`href="${TEST_BASE_URL}/pay/${payment.id}"`);
  });

  test("escapes what the merchant wrote in the HTML body, and fetches nothing", () => {
    expect(mail.html).toContain("Two &#60;b&#62;mugs&#60;/b&#62; &#38; a teapot");
    expect(mail.html).not.toContain("<b>mugs");
    expect(mail.text).toContain("Two <b>mugs</b> & a teapot");
    expect(mail.html).not.toMatch(/<img|src=|url\(/i);
  });

  test("has a stable Message-ID of its outbox row, a Date, and no List-Unsubscribe (it is not a notice)", async () => {
    // Marked sent just after the server accepted it.
    const row = await waitFor(
      async () => (await outbox("ada@customer.example")).find((r) => r.state === "sent"),
      5_000,
      "sent",
    );
    expect(mail.headers["message-id"]).toBe(`<${row.id}@shop.example>`);
    // Dated by the server's clock (the test's, which the fault tests move on).
    expect(Math.abs(Date.parse(mail.headers.date!) - clock.now())).toBeLessThan(60_000);
    expect(mail.headers["list-unsubscribe"]).toBeUndefined();
    expect(mail.headers["reply-to"]).toBeUndefined();
  });
});

describe("the invoice of a merchant with business details (src/documents/for-email.ts)", () => {
  test("is sent in the legal name, with the support address as Reply-To and the invoice PDF attached", async () => {
    const shop = await server.createAccount("Legal Shop");
    await runCli(
      [
        "account",
        "set-business",
        shop.accountId,
        "--legal-name",
        "Legal Shop GmbH",
        "--support-email",
        "help@legal.example",
      ],
      server.env,
    );
    const res = await api(server.url, shop.apiKey)("/api/v1/payments", {
      body: {
        amount: "9.99",
        invoice_number: "LS-77",
        customer_email: "grace@customer.example",
        customer_name: "Grace",
      },
    });
    expect(res.status).toBe(201);
    const mail = (await waitArrived("grace@customer.example"))[0]!;
    expect(mail.headers.from).toBe("Legal Shop GmbH <billing@shop.example>");
    expect(mail.headers["reply-to"]).toBe("help@legal.example");
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ["invoice-LS-77.pdf", "application/pdf"],
    ]);
    const text = await pdfText(mail.attachments[0]!.content);
    for (const field of ["LS-77", "Legal Shop GmbH", "help@legal.example", "Grace", "grace@customer.example", "9.99"])
      expect(text).toContain(field);
    // The same document the invoice's own link serves.
    const served = await fetch(`${server.url}/pay/${res.json.id}/invoice.pdf`);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(new Uint8Array(mail.attachments[0]!.content));
  });
});

describe("what sends no invoice", () => {
  test("a payment without an invoice number, or without a customer email", async () => {
    const res = await api(server.url, key)("/api/v1/payments", {
      body: { amount: "1.00", customer_email: "noinvoice@customer.example" },
    });
    expect(res.status).toBe(201);
    const res2 = await api(server.url, key)("/api/v1/payments", { body: { amount: "1.00", invoice_number: "X-1" } });
    expect(res2.status).toBe(201);
    expect(await outbox("noinvoice@customer.example")).toEqual([]);
  });

  test("an address the API takes that a mailer would read as two recipients", async () => {
    const res = await api(server.url, key)("/api/v1/payments", {
      body: { amount: "2.00", invoice_number: "L-1", customer_email: "list,victim@evil.example" },
    });
    expect(res.status).toBe(201);
    expect(await outbox("list,victim@evil.example")).toEqual([]);
    expect(await outbox("victim@evil.example")).toEqual([]);
  });

  test("an account that turned customer emails off", async () => {
    const off = await server.createAccount("Quiet Shop");
    await server.running.db.run(
      sql`INSERT INTO email_account_settings (account_id, customer_emails, updated_at) VALUES (${off.accountId}, 0, 0)`,
    );
    const res = await api(server.url, off.apiKey)("/api/v1/payments", {
      body: { amount: "3.00", invoice_number: "Q-1", customer_email: "quiet@customer.example" },
    });
    expect(res.status).toBe(201);
    expect(await outbox("quiet@customer.example")).toEqual([]);
  });
});

describe("faults", () => {
  test("the SMTP server down for a while: the email is retried and arrives once it is back, once", async () => {
    await smtp.stop();
    await invoice("down@customer.example");
    const failed = await waitFor(
      async () => (await outbox("down@customer.example")).find((r) => r.attempts >= 1),
      10_000,
      "a failed attempt",
    );
    expect(failed.state).toBe("pending");
    expect(failed.last_error).toMatch(/ECONNREFUSED|connect/i);
    await smtp.start();
    // The first retry comes within a minute: moved there by the clock, not waited for.
    clock.advance(31_000);
    await waitArrived("down@customer.example");
    const sent = await waitFor(
      async () => (await outbox("down@customer.example")).find((r) => r.state === "sent"),
      5_000,
      "sent",
    );
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    // Later rounds, even with the clock far ahead, send nothing more.
    clock.advance(10 * 60_000);
    const rounds = server.running.activity().emailRounds;
    await waitFor(() => server.running.activity().emailRounds > rounds + 2, 5_000, "more worker rounds");
    expect(arrivedFor("down@customer.example")).toHaveLength(1);
  });

  test("a refused recipient is given up and shown, and the others still get theirs", async () => {
    smtp.refuse.add("gone@customer.example");
    await invoice("gone@customer.example");
    await invoice("fine@customer.example");
    await waitArrived("fine@customer.example");
    const refused = await waitFor(
      async () => (await outbox("gone@customer.example")).find((r) => r.state === "failed"),
      10_000,
      "given up",
    );
    expect(refused.last_error).toMatch(/^550 /);
    expect(arrivedFor("gone@customer.example")).toEqual([]);
    const settings = await readyzEmail();
    expect(settings.given_up).toBeGreaterThanOrEqual(1);
    expect(settings.last_error.recipient).toBe("gone@customer.example");
    smtp.refuse.delete("gone@customer.example");
  });

  test("a slow server never slows the API: the payment is answered before the email is accepted", async () => {
    smtp.delayMs = 3_000;
    try {
      await invoice("slow@customer.example");
      // Answered while the server still holds the email back: the request did not wait for it.
      expect(arrivedFor("slow@customer.example")).toEqual([]);
      await waitArrived("slow@customer.example");
    } finally {
      smtp.delayMs = 0;
    }
  });
});

/** What /readyz and the settings page are drawn from (they are tested in health.test.ts). */
async function readyzEmail() {
  const h = await createEmailStore(server.running.db).health();
  return { given_up: h.failed, last_error: h.lastError! };
}

describe("the merchant's notices", () => {
  test("an endpoint that answers 410 Gone is disabled and every user of the account is told", async () => {
    const receiver = startReceiver();
    try {
      const account = await server.createAccount("Hook Shop");
      const user = await createDashboardUser(server.env, account.accountId);
      const created = await api(server.url, account.apiKey)("/api/v1/webhook_endpoints", {
        body: { url: receiver.url },
      });
      expect(created.status).toBe(201);
      receiver.answer = () => new Response("gone", { status: 410 });
      const sent = await api(server.url, account.apiKey)(`/api/v1/webhook_endpoints/${created.json.id}/test`, {
        method: "POST",
      });
      expect(sent.status).toBe(202);
      const [mail] = await waitArrived(user.email);
      expect(mail!.subject).toBe("Webhook endpoint disabled");
      expect(mail!.text).toContain(receiver.url);
      expect(mail!.headers["list-unsubscribe"]).toBe(`<${TEST_BASE_URL}/dashboard/settings#email>`);
      const listed = await api(server.url, account.apiKey)("/api/v1/webhook_endpoints");
      expect(JSON.stringify(listed.json)).toContain('"status":"disabled"');
    } finally {
      receiver.stop();
    }
  });
});

describe("the password", () => {
  test("is in no log line, a failed attempt and a given-up email's included", async () => {
    // Its own failures, whichever tests ran before: the server down once, then a refused recipient.
    await smtp.stop();
    await invoice("nopass-retry@customer.example");
    await waitFor(
      async () => (await outbox("nopass-retry@customer.example")).find((r) => r.attempts >= 1),
      10_000,
      "a failure",
    );
    await smtp.start();
    smtp.refuse.add("nopass-gone@customer.example");
    try {
      await invoice("nopass-gone@customer.example");
      await waitFor(
        async () => (await outbox("nopass-gone@customer.example")).find((r) => r.state === "failed"),
        10_000,
        "given up",
      );
    } finally {
      smtp.refuse.delete("nopass-gone@customer.example");
    }
    expect(logLines.some((l) => l.includes("email attempt failed"))).toBe(true);
    expect(logLines.some((l) => l.includes("email given up"))).toBe(true);
    expect(logLines.some((l) => l.includes("email on"))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toContain(SMTP_PASSWORD);
      expect(line).not.toContain(encodeURIComponent(SMTP_PASSWORD));
    }
  });
});
