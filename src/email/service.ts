import type { Clock } from "../lib/clock.ts";
import { isoMillis } from "../lib/clock.ts";
import { ValidationError } from "../lib/errors.ts";
import { randomBase62 } from "../lib/ids.ts";
import { describeSmtp, EMAIL_ADDRESS, type SmtpTarget } from "../lib/smtp-url.ts";
import type { EmailStore, PaymentNotices } from "./store.ts";
import { testEmail } from "./templates.ts";
import { type SendEmail, smtpError } from "./transport.ts";

export interface EmailServiceDeps {
  store: EmailStore;
  clock: Clock;
  baseUrl: string;
  /** null: email is off (STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM unset). */
  smtp: { target: SmtpTarget; from: string; send: SendEmail; messageDomain: string } | null;
}

/** What /readyz (with the metrics token) and the settings page say of email. */
export interface EmailHealth {
  enabled: boolean;
  /** Where it sends, without user or password; null when off. */
  server: string | null;
  from: string | null;
  last_sent_at: string | null;
  last_error: { at: string; error: string; recipient: string; gave_up: boolean } | null;
  /** Emails waiting to be sent (including those waiting for a retry). */
  queued: number;
  /** Emails given up after their last attempt. */
  given_up: number;
  /** false when the newest attempt failed, or emails wait with none sent yet. */
  ok: boolean;
}

export type EmailService = ReturnType<typeof createEmailService>;

export const PAYMENT_NOTICES: readonly PaymentNotices[] = ["each", "daily", "none"];

/** Email settings, health and the test email, for the dashboard, the CLI and /readyz. */
export function createEmailService(deps: EmailServiceDeps) {
  const { store, clock } = deps;
  // The last test email this process sent (it bypasses the outbox), so the page it was sent from
  // shows its outcome as the last success or the last error.
  let lastTest: { at: number; to: string; error: string | null } | null = null;
  return {
    enabled: deps.smtp !== null,
    async health(): Promise<EmailHealth> {
      const h = await store.health();
      let sentAt = h.lastSentAt;
      let error =
        h.lastError === null
          ? null
          : {
              at: Number(h.lastError.at),
              error: h.lastError.error,
              recipient: h.lastError.recipient,
              gave_up: h.lastError.state === "failed",
            };
      if (lastTest && lastTest.error === null && (sentAt === null || lastTest.at > sentAt)) sentAt = lastTest.at;
      if (lastTest && lastTest.error !== null && (error === null || lastTest.at > error.at))
        error = { at: lastTest.at, error: lastTest.error, recipient: lastTest.to, gave_up: true };
      const lastError = error === null ? null : { ...error, at: isoMillis(error.at) };
      const failingNow = error !== null && (sentAt === null || error.at > sentAt);
      return {
        enabled: deps.smtp !== null,
        server: deps.smtp ? describeSmtp(deps.smtp.target) : null,
        from: deps.smtp?.from ?? null,
        last_sent_at: isoMillis(sentAt),
        last_error: lastError,
        queued: h.pending,
        given_up: h.failed,
        ok: deps.smtp !== null && !failingNow,
      };
    },
    customerEmails: (accountId: string) => store.customerEmails(accountId),
    async setCustomerEmails(accountId: string, on: boolean): Promise<void> {
      await store.setCustomerEmails(accountId, on, clock.now());
    },
    paymentNotices: (userId: string) => store.paymentNotices(userId),
    async setPaymentNotices(userId: string, value: string): Promise<PaymentNotices> {
      const notices = PAYMENT_NOTICES.find((n) => n === value);
      if (!notices) throw new ValidationError(`payments: must be one of ${PAYMENT_NOTICES.join(", ")}`);
      await store.setPaymentNotices(userId, notices, clock.now());
      return notices;
    },

    /**
     * Sends a test email now, bypassing the outbox, and says what the SMTP server answered: the
     * point is to find out whether sending works, while the operator waits.
     */
    async sendTest(address: string) {
      const at = clock.now();
      const result = await sendTestEmail(deps.smtp, deps.baseUrl, address, at);
      lastTest = { at, to: address.trim(), error: result.ok ? null : result.error };
      return result;
    },
  };
}

/** The test email, sent at once to `address`; what the SMTP server answered. */
export async function sendTestEmail(
  smtp: EmailServiceDeps["smtp"],
  baseUrl: string,
  address: string,
  now: number,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const to = address.trim();
  if (!EMAIL_ADDRESS.test(to)) throw new ValidationError(`address: "${to}" is not an email address`);
  if (smtp === null)
    throw new ValidationError("email is off: set STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM, then restart");
  const rendered = testEmail(baseUrl, smtp.from);
  try {
    await smtp.send({
      from: { name: "Stablegate", address: smtp.from },
      to,
      replyTo: null,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      messageId: `<test.${now}.${randomBase62(12)}@${smtp.messageDomain}>`,
      date: new Date(now),
      unsubscribeUrl: null,
      attachments: [],
    });
    return { ok: true };
  } catch (error) {
    return { ok: false, error: smtpError(error).message };
  }
}
