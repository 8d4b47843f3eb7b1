/**
 * The outbox's mechanisms on a real SQLite store with the real email capability and a real SMTP
 * server: an email is queued in its event's transaction (committed with it, gone with it), the
 * unique key queues each email once (the alerts run every minute), a failed send is retried
 * within a minute and given up after the schedule, and the alerts: the daily summary, the
 * relayer's low gas at most once a day, a disabled webhook endpoint.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createAccounts } from "../../src/accounts/index.ts";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { raw, type Sql, sql } from "../../src/db/engine.ts";
import { createGroupCommit } from "../../src/db/group-commit.ts";
import type { Db } from "../../src/db/index.ts";
import { openStore, storeLocationFrom } from "../../src/db/open.ts";
import { createEmail, type Email } from "../../src/email/index.ts";
import { EMAIL_RETRY_SCHEDULE_MS, emailRetryDelay } from "../../src/email/schedule.ts";
import { createEvents, type Events } from "../../src/events/index.ts";
import { randomIds } from "../../src/lib/ids.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { parseSmtpUrl } from "../../src/lib/smtp-url.ts";
import { createPaymentStore, type NewPaymentRow } from "../../src/payments/store.ts";
import { createTestClock } from "../support/clock.ts";
import { createDashboardUser } from "../support/dashboard.ts";
import { paymentRow } from "../support/payment-rows.ts";
import { makeTempDir, TEST_PAYOUT, testEnv } from "../support/server.ts";
import { startTestSmtp, type TestSmtp } from "../support/smtp.ts";
import { defaultTestDatabaseUrl } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";

const DAY = 86_400_000;
const PDF = new TextEncoder().encode("%PDF-1.4 a test document\n%%EOF\n");
let smtp: TestSmtp;
let dir: string;
let db: Db;
let events: Events;
let email: Email;
let accountId: string;
let user: string;
let gasLow = false;
const clock = createTestClock();
const abort = new AbortController();
let running: Promise<void>;

beforeAll(async () => {
  smtp = await startTestSmtp();
  dir = makeTempDir();
  // SQLite, or the suite's PostgreSQL on its second pass (STABLEGATE_TEST_ENGINE).
  const env = testEnv(dir, await defaultTestDatabaseUrl());
  accountId = (
    (await runAccountCommand("account", ["create", "--name", "Outbox Shop", "--payout-address", TEST_PAYOUT], env)) as {
      account: { id: string };
    }
  ).account.id;
  user = (await createDashboardUser(env, accountId)).email;
  db = await openStore(storeLocationFrom(env));
  const plumbing = {
    db,
    clock,
    ids: randomIds,
    log: silentLogger,
    groupCommit: createGroupCommit(db),
    replica: "test",
  };
  events = createEvents({ ...plumbing, config: { databaseUrl: null } });
  const accounts = await createAccounts({ ...plumbing, config: { feeRecipient: undefined, defaultSpeed: "standard" } });
  email = createEmail({
    ...plumbing,
    config: {
      email: { smtp: parseSmtpUrl("STABLEGATE_SMTP_URL", smtp.url), from: "billing@shop.example" },
      baseUrl: "https://pay.shop.example",
    },
    events,
    accounts,
    options: { smtpTls: { ca: smtp.ca, timeoutMs: 5_000 }, emailPollMs: 50, emailSchedule: [30_000, 120_000] },
    payment: (id) => createPaymentStore(db).findById(id),
    // What the documents capability hands over at the merge: the legal name, the support address, the PDF.
    documents: {
      senderOf: async () => ({ name: "Outbox Shop Ltd", replyTo: "help@shop.example" }),
      attachmentsFor: async (paymentId, kind) =>
        kind === "invoice"
          ? [{ filename: `invoice-${paymentId.slice(2, 10)}.pdf`, contentType: "application/pdf", content: PDF }]
          : [],
    },
    chains: () => [
      {
        name: "base",
        relayer_gas: {
          relayer: "0x2222222222222222222222222222222222222222",
          balance_wei: "1230000000000000",
          low: gasLow,
        },
      },
    ],
  });
  running = email.run(abort.signal);
});
afterAll(async () => {
  abort.abort();
  await running;
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
  await smtp?.close();
});

/** A payment row of the account, its customer at `<label>@customer.example`; answers its id. */
async function payment(label: string, fields: Partial<NewPaymentRow> = {}): Promise<string> {
  const row = paymentRow(accountId, clock.now(), {
    status: "confirmed",
    amount: 12_000_000n,
    amount_received: 12_000_000n,
    customer_email: `${label}@customer.example`,
    ...fields,
  });
  await createPaymentStore(db).insert(row);
  return row.id;
}

function event(paymentId: string, type: string, id = `evt_${crypto.randomUUID().slice(0, 8)}`) {
  return { id, account_id: accountId, type, payment_id: paymentId, payload: "{}", created_at: clock.now() };
}

/** The outbox's rows where `where` holds (a `sql` fragment: its values are parameters). */
const outbox = (where: Sql = raw("1 = 1")) =>
  db.all<{
    id: string;
    kind: string;
    recipient: string;
    state: string;
    attempts: number;
    next_attempt_at: number;
    last_error: string | null;
    created_at: number;
  }>(sql`SELECT * FROM email_outbox WHERE ${where} ORDER BY seq`);

describe("queued in the event's transaction", () => {
  test("committed with the event: the email row is there when the transaction returns", async () => {
    const id = await payment("pay_commit");
    await db.transaction(() => events.store.insert(event(id, "payment.confirmed")));
    expect((await outbox(sql`recipient = ${"pay_commit@customer.example"}`)).map((r) => r.kind)).toEqual(["receipt"]);
  });

  test("rolled back with the event: no email, then or later", async () => {
    const id = await payment("pay_rollback");
    const eventsOf = () => db.get<{ n: number }>(sql`SELECT count(*) AS n FROM events WHERE payment_id = ${id}`);
    await expect(
      db.transaction(async () => {
        await events.store.insert(event(id, "payment.confirmed"));
        throw new Error("the settlement's write failed");
      }),
    ).rejects.toThrow("the settlement's write failed");
    await Promise.resolve();
    const rounds = email.activity().emailRounds;
    await waitFor(() => email.activity().emailRounds > rounds + 1, 5_000, "worker rounds");
    expect(await outbox(sql`recipient = ${"pay_rollback@customer.example"}`)).toEqual([]);
    expect(await eventsOf()).toEqual({ n: 0 });
  });
});

describe("the unique key", () => {
  test("the same email is queued once, however often its cause is handled", async () => {
    const row = (await createPaymentStore(db).findById(await payment("pay_twice", { invoice_number: "T-1" })))!;
    await email.paymentCreated(row);
    await email.paymentCreated(row);
    expect((await outbox(sql`recipient = ${"pay_twice@customer.example"}`)).map((r) => r.kind)).toEqual(["invoice"]);
  });

  test("the relayer's low gas is emailed once a day, though checked every minute", async () => {
    gasLow = true;
    try {
      await email.checkAlerts();
      await email.checkAlerts();
      const rows = await outbox(sql`kind = 'relayer_gas'`);
      expect(rows.map((r) => r.recipient)).toEqual([user]);
      const mail = await waitFor(
        () => smtp.messages.find((m) => m.subject === "Relayer gas low on base"),
        10_000,
        "gas email",
      );
      expect(mail.text).toContain("0.00123 ETH");
      clock.advance(DAY);
      await email.checkAlerts();
      expect(await outbox(sql`kind = 'relayer_gas'`)).toHaveLength(2);
    } finally {
      gasLow = false;
    }
  });
});

describe("alerts", () => {
  test("the daily summary lists yesterday's confirmed payments, to the users who chose it, once", async () => {
    const users = (await db.get<{ id: string }>(sql`SELECT id FROM dashboard_users WHERE email = ${user}`))!;
    await db.run(sql`INSERT INTO email_user_settings (user_id, payments, updated_at) VALUES (${users.id}, 'daily', 0)`);
    const ids = [
      await payment("pay_day1", { invoice_number: "D-1", amount_received: 5_000_000n }),
      await payment("pay_day2", { description: "Tea", amount_received: 7_500_000n }),
    ];
    for (const id of ids) await db.transaction(() => events.store.insert(event(id, "payment.confirmed")));
    // Users who chose the summary get no email per payment.
    for (const id of ids) expect(await outbox(sql`payment_id = ${id} AND kind = 'payment_confirmed'`)).toEqual([]);
    clock.advance(DAY);
    await email.checkAlerts();
    await email.checkAlerts();
    const summaries = await outbox(sql`kind = 'daily_summary'`);
    expect(summaries.map((r) => r.recipient)).toEqual([user]);
    const mail = await waitFor(
      () => smtp.messages.find((m) => /payments? confirmed, /.test(m.subject)),
      10_000,
      "summary",
    );
    expect(mail.subject).toMatch(/^\d{4}-\d{2}-\d{2}: \d+ payments confirmed, /);
    expect(mail.text).toContain("invoice D-1");
    expect(mail.text).toContain("Tea");
    expect(mail.headers["list-unsubscribe"]).toBe("<https://pay.shop.example/dashboard/settings#email>");
  });

  test("a disabled webhook endpoint tells every user of its account", async () => {
    await db.transaction(() =>
      email.endpointDisabled(
        { id: "we_gone", account_id: accountId, url: "https://hooks.shop.example/x" },
        clock.now(),
      ),
    );
    const mail = await waitFor(
      () => smtp.messages.find((m) => m.subject === "Webhook endpoint disabled"),
      10_000,
      "notice",
    );
    expect(mail.to).toEqual([user]);
    expect(mail.text).toContain("https://hooks.shop.example/x");
  });
});

describe("what the documents give the emails", () => {
  test("the merchant's legal name, its support address as Reply-To, and the invoice's PDF attached", async () => {
    const id = await payment("pay_docs", { invoice_number: "DOC-1", status: "pending", amount_received: null });
    await email.paymentCreated((await createPaymentStore(db).findById(id))!);
    const mail = await waitFor(
      () => smtp.messages.find((m) => m.to.includes("pay_docs@customer.example")),
      10_000,
      "the invoice",
    );
    expect(mail.headers.from).toBe("Outbox Shop Ltd <billing@shop.example>");
    expect(mail.headers["reply-to"]).toBe("help@shop.example");
    expect(mail.subject).toBe("Invoice DOC-1 from Outbox Shop Ltd: 12.00 USDC");
    expect(mail.text).toContain("Reply to this email to reach them.");
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]!.filename).toBe(`invoice-${id.slice(2, 10)}.pdf`);
    expect(mail.attachments[0]!.contentType).toBe("application/pdf");
    expect(mail.attachments[0]!.content.equals(Buffer.from(PDF))).toBe(true);
  });
});

describe("retries", () => {
  test("the first retry comes within a minute, and the schedule ends in giving up", () => {
    expect(emailRetryDelay(EMAIL_RETRY_SCHEDULE_MS, 1)).toBeLessThanOrEqual(60_000);
    expect(emailRetryDelay(EMAIL_RETRY_SCHEDULE_MS, EMAIL_RETRY_SCHEDULE_MS.length + 1)).toBeNull();
    const total = EMAIL_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total / DAY).toBeGreaterThan(3);
  });

  test("an email that keeps failing is retried on the schedule, then given up, visible", async () => {
    // Others queued by tests before this one may fail and be given up beside it.
    const givenUpBefore = (await email.service.health()).given_up;
    await smtp.stop();
    try {
      await email.paymentCreated(
        (await createPaymentStore(db).findById(await payment("pay_fail", { invoice_number: "F-1" })))!,
      );
      const first = await waitFor(
        async () => (await outbox(sql`recipient = ${"pay_fail@customer.example"} AND attempts = 1`))[0],
        10_000,
        "attempt 1",
      );
      expect(first.state).toBe("pending");
      expect(first.next_attempt_at - clock.now()).toBeLessThanOrEqual(30_000);
      clock.advance(30_000);
      await waitFor(
        async () => (await outbox(sql`recipient = ${"pay_fail@customer.example"} AND attempts = 2`))[0],
        10_000,
        "attempt 2",
      );
      clock.advance(120_000);
      const last = await waitFor(
        async () => (await outbox(sql`recipient = ${"pay_fail@customer.example"} AND state = 'failed'`))[0],
        10_000,
        "given up",
      );
      expect(last.attempts).toBe(3);
      expect(last.last_error).toMatch(/ECONNREFUSED|connect/i);
      const health = await email.service.health();
      expect(health.given_up).toBeGreaterThanOrEqual(givenUpBefore + 1);
      expect(health.ok).toBe(false);
      expect(health.last_error?.gave_up).toBe(true);
      expect(JSON.stringify(health)).not.toContain("p@ss");
    } finally {
      await smtp.start();
    }
  });
});

describe("retention", () => {
  test("sent and given-up emails are deleted 30 days on; waiting ones are kept", async () => {
    // One sent here, whatever ran before.
    const id = await payment("pay_retained");
    await db.transaction(() => events.store.insert(event(id, "payment.confirmed")));
    await waitFor(
      async () => (await outbox(sql`recipient = ${"pay_retained@customer.example"} AND state = 'sent'`))[0],
      10_000,
      "sent",
    );
    const before = (await outbox(sql`state IN ('sent', 'failed')`)).length;
    expect(before).toBeGreaterThan(0);
    clock.advance(31 * DAY);
    await email.checkAlerts();
    expect(await outbox(sql`state IN ('sent', 'failed')`)).toEqual([]);
  });
});
