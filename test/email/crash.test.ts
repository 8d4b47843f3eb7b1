/**
 * The shipped binary, with nodemailer inside, killed with -9 while it is sending: every email in
 * the outbox is sent exactly once after it restarts. The SMTP server holds each sender before
 * MAIL FROM, so nothing is transmitted before the kill; the binary trusts the test certificate
 * through NODE_EXTRA_CA_CERTS.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestSmtp, type TestSmtp } from "../support/smtp.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { waitFor } from "../support/wait.ts";

let smtp: TestSmtp;
let stack: Stack;

beforeAll(async () => {
  smtp = await startTestSmtp();
  stack = await startStack({
    subprocess: true,
    binary: true,
    env: {
      STABLEGATE_SMTP_URL: smtp.url,
      STABLEGATE_SMTP_FROM: "billing@shop.example",
      NODE_EXTRA_CA_CERTS: smtp.caFile,
    },
  });
}, 240_000);
afterAll(async () => {
  await stack?.stop();
  await smtp?.close();
});

test("kill -9 with emails in the outbox and in flight: each is sent exactly once after restart", async () => {
  smtp.hold = true;
  const customers = Array.from({ length: 6 }, (_, i) => `crash${i}@customer.example`);
  for (const [i, to] of customers.entries())
    await stack.createPayment({ amount: "9.00", invoice_number: `K-${i}`, customer_email: to });
  // The worker (4 at a time) has claimed some and hangs on them; the rest wait in the outbox.
  await waitFor(
    async () =>
      (await stack.sql<{ n: number }>("SELECT count(*) AS n FROM email_outbox WHERE claimed_by IS NOT NULL"))[0]!.n >=
      4,
    15_000,
    "emails claimed by the worker",
  );
  expect(smtp.messages).toEqual([]);
  await stack.crash();
  smtp.hold = false;
  await stack.restart();
  await waitFor(
    async () =>
      (await stack.sql<{ n: number }>("SELECT count(*) AS n FROM email_outbox WHERE state = 'sent'"))[0]!.n === 6,
    30_000,
    "every email sent",
  );
  const received = smtp.messages.flatMap((m) => m.to).sort();
  expect(received).toEqual([...customers].sort());
  // Nothing more comes: the worker has had time for further rounds (/readyz shows the queue).
  await waitFor(async () => (await stack.readyz()).email?.queued === 0, 10_000, "an empty queue");
  expect(smtp.messages).toHaveLength(6);
  const ready = await stack.readyz();
  expect(ready.email).toMatchObject({ enabled: true, ok: true, queued: 0, given_up: 0, from: "billing@shop.example" });
  expect(JSON.stringify(ready)).not.toContain("p%40ss");
  expect(JSON.stringify(ready)).not.toContain("mailer");
}, 120_000);
