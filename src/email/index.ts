import type { AccountsService } from "../accounts/service.ts";
import type { Events } from "../events/index.ts";
import { CHAINS } from "../lib/chains.ts";
import { runEvery } from "../lib/loop.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import { describeSmtp, type SmtpTarget } from "../lib/smtp-url.ts";
import { type ChainGas, createEmailAlerts } from "./alerts.ts";
import { createEmailQueue, type InvoiceTerms, invoiceOnCreate, type PaymentForEmail } from "./queue.ts";
import { EMAIL_RETRY_SCHEDULE_MS } from "./schedule.ts";
import { createEmailService } from "./service.ts";
import { createEmailStore } from "./store.ts";
import { webhookDisabledNotice } from "./templates.ts";
import { type Attachment, type SendEmail, type SmtpTlsOptions, smtpTransport } from "./transport.ts";
import { createEmailWorker } from "./worker.ts";

/** Email's slice of the configuration. */
export interface EmailConfig {
  /** STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM; null: email is off. */
  email: { smtp: SmtpTarget; from: string } | null;
  baseUrl: string;
}

/** What tests and `stablegate dev` change. */
export interface EmailOptions {
  smtpTls?: SmtpTlsOptions;
  emailSchedule?: readonly number[];
  emailPollMs?: number;
}

/**
 * What the emails take from the merchant's documents (src/documents/ when it exists): the name
 * and Reply-To the merchant's customers see, and the PDFs an email carries. The default has the
 * account's name, no Reply-To and no attachment.
 */
export interface EmailDocuments {
  senderOf(accountId: string): Promise<{ name: string; replyTo: string | null }>;
  /** `kind`: the outbox row's (invoice, receipt...); called when the email is sent. */
  attachmentsFor(paymentId: string, kind: string): Attachment[] | Promise<Attachment[]>;
}

/** How often the daily summary and the relayer's gas are looked at. */
const ALERTS_EVERY_MS = 60_000;
const SEND_TIMEOUT_MS = 30_000;

/**
 * Email (docs/email.md): the outbox every event's emails are queued into in its transaction, the
 * worker that sends them, the daily and relayer alerts, and the settings and health service. Off
 * (nothing queued, nothing sent) until STABLEGATE_SMTP_URL and STABLEGATE_SMTP_FROM are set.
 */
export function createEmail(
  w: Plumbing & {
    config: EmailConfig;
    events: Pick<Events, "store" | "onWritten">;
    accounts: Pick<AccountsService, "findAccount">;
    payment: (id: string) => Promise<PaymentForEmail | null>;
    /** Every watched chain's relayer gas as last read (no RPC call). */
    chains: () => ChainGas[] | Promise<ChainGas[]>;
    documents?: EmailDocuments;
    options?: EmailOptions;
  },
) {
  const { db, clock, ids, log, config, options = {} } = w;
  const store = createEmailStore(db);
  const documents: EmailDocuments = w.documents ?? {
    senderOf: async (accountId) => ({
      name: (await w.accounts.findAccount(accountId))?.name ?? "Stablegate",
      replyTo: null,
    }),
    attachmentsFor: () => [],
  };
  const email = config.email;
  const timeoutMs = options.smtpTls?.timeoutMs ?? SEND_TIMEOUT_MS;
  const send: SendEmail | null = email ? smtpTransport(email.smtp, { ...options.smtpTls, timeoutMs }) : null;
  const messageDomain = email ? email.from.slice(email.from.lastIndexOf("@") + 1) : "localhost";
  const service = createEmailService({
    store,
    clock,
    baseUrl: config.baseUrl,
    smtp: email && send ? { target: email.smtp, from: email.from, send, messageDomain } : null,
  });
  const queue = createEmailQueue({
    store,
    ids,
    log,
    baseUrl: config.baseUrl,
    payment: w.payment,
    sender: (accountId) => documents.senderOf(accountId),
  });
  if (!email || !send) {
    return {
      service,
      sendsOnCreate: (_p: InvoiceTerms) => false,
      paymentCreated: async (_p: PaymentForEmail) => {},
      endpointDisabled: async (_e: { id: string; account_id: string; url: string }, _now: number) => {},
      run: async (_signal: AbortSignal) => {},
      activity: () => ({ emailRounds: 0, emailSending: 0 }),
      checkAlerts: async () => {},
    };
  }
  // Queued in the event's own transaction: the email commits with it or not at all.
  w.events.store.follow((event) => queue.eventWritten(event));
  const worker = createEmailWorker({
    store,
    send,
    claimer: w.replica,
    clock,
    log,
    schedule: options.emailSchedule ?? EMAIL_RETRY_SCHEDULE_MS,
    timeoutMs,
    pollMs: options.emailPollMs,
    async outgoing(row) {
      const sender = row.account_id === null ? null : await documents.senderOf(row.account_id);
      // The merchant's notices come from Stablegate; the customers' in the merchant's name.
      const customerFacing = row.unsubscribe_url === null && sender !== null;
      return {
        from: { name: customerFacing ? sender.name : "Stablegate", address: email.from },
        to: row.recipient,
        replyTo: customerFacing ? sender.replyTo : null,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        messageId: `<${row.id}@${messageDomain}>`,
        date: new Date(clock.now()),
        unsubscribeUrl: row.unsubscribe_url,
        attachments: row.payment_id === null ? [] : await documents.attachmentsFor(row.payment_id, row.kind),
      };
    },
  });
  w.events.onWritten(worker.wake);
  const alerts = createEmailAlerts({
    store,
    queue,
    clock,
    baseUrl: config.baseUrl,
    chains: w.chains,
    nativeOf: (chain) => CHAINS.get(chain)?.viem.nativeCurrency ?? { symbol: "ETH", decimals: 18 },
  });
  log.info("email on", { smtp: describeSmtp(email.smtp), from: email.from });
  return {
    service,
    /** Whether a payment about to be created may have its invoice emailed (`paymentCreated` then decides). */
    sendsOnCreate: invoiceOnCreate,
    /** A payment was created: its invoice, in the creation's transaction. */
    paymentCreated: (p: PaymentForEmail) => queue.paymentCreated(p, clock.now()),
    /** A webhook endpoint was disabled (410 Gone), in that transaction: its account's users are told. */
    async endpointDisabled(endpoint: { id: string; account_id: string; url: string }, now: number): Promise<void> {
      const notice = webhookDisabledNotice(config.baseUrl, endpoint.id, endpoint.url);
      await queue.toUsers(
        endpoint.account_id,
        `webhook_disabled:${endpoint.id}`,
        "webhook_disabled",
        null,
        notice,
        now,
      );
    },
    /** Emails queued by any request or loop are sent within a poll (half a second). */
    async run(signal: AbortSignal): Promise<void> {
      await Promise.all([worker.run(signal), runEvery("email alerts", ALERTS_EVERY_MS, alerts.check, { log, signal })]);
    },
    activity: worker.activity,
    /** Tests: one round of the alerts now. */
    checkAlerts: alerts.check,
  };
}

export type Email = ReturnType<typeof createEmail>;
