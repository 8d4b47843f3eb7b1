import type { EventRow } from "../events/store.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { Logger } from "../lib/log.ts";
import { parseExactAmount } from "../lib/money.ts";
import { EMAIL_ADDRESS } from "../lib/smtp-url.ts";
import type { RenderedEmail } from "./layout.ts";
import type { EmailStore } from "./store.ts";
import {
  attentionNotice,
  confirmedNotice,
  invoiceEmail,
  type PaymentFacts,
  receiptEmail,
  refundClaimEmail,
  type Sender,
  underpaidEmail,
} from "./templates.ts";

/** A payment as the emails need it: its facts, whose it is, whom to write to and how it began. */
export interface PaymentForEmail extends PaymentFacts {
  account_id: string;
  customer_email: string | null;
  payment_link: string | null;
}

export interface EmailQueueDeps {
  store: EmailStore;
  ids: IdGenerator;
  log: Logger;
  baseUrl: string;
  payment: (id: string) => Promise<PaymentForEmail | null>;
  /** The merchant as customers' emails name it (the legal name and support address once the documents set them). */
  sender: (accountId: string) => Promise<Sender>;
}

export type EmailQueue = ReturnType<typeof createEmailQueue>;

/** What decides whether a new payment's invoice may be emailed, before the payment is stored. */
export type InvoiceTerms = Pick<PaymentForEmail, "invoice_number" | "payment_link">;

/**
 * A payment's invoice is emailed when it has an invoice number and was not started through a
 * payment link (anyone may open a link, and the server must not email whatever address a stranger
 * types); whether its account sends customers email is asked of the store after.
 */
export const invoiceOnCreate = (p: InvoiceTerms): boolean => p.invoice_number !== null && p.payment_link === null;

/**
 * Decides which emails an event or a new payment causes and queues them, rendered, in the
 * caller's transaction: they commit with it or vanish with it. The dedupe key names the cause
 * and the recipient, so nothing is queued twice.
 */
export function createEmailQueue(deps: EmailQueueDeps) {
  const { store, ids, baseUrl } = deps;
  const unsubscribeUrl = `${baseUrl}/dashboard/settings#email`;

  async function put(
    key: string,
    to: string,
    kind: string,
    at: { account: string | null; payment: string | null },
    email: RenderedEmail,
    now: number,
    merchantNotice = false,
  ): Promise<void> {
    // One bare address or nothing: the payments API takes `a,b@c` as an address, which a mailer
    // would read as a list of recipients.
    if (!EMAIL_ADDRESS.test(to)) {
      deps.log.info("email not queued: not a single plain address", { kind, account_id: at.account });
      return;
    }
    await store.queue(
      {
        id: ids.prefixed("eml"),
        dedupe_key: `${key}:${to.toLowerCase()}`,
        account_id: at.account,
        payment_id: at.payment,
        kind,
        recipient: to,
        subject: email.subject,
        text_body: email.text,
        html_body: email.html,
        unsubscribe_url: merchantNotice ? unsubscribeUrl : null,
      },
      now,
    );
  }

  const customerOf = async (p: PaymentForEmail) =>
    p.customer_email !== null && (await store.customerEmails(p.account_id)) ? p.customer_email : null;

  /** To every user of the account (`onlyEach`: those who asked for each confirmed payment). */
  async function toUsers(
    accountId: string,
    key: string,
    kind: string,
    paymentId: string | null,
    email: RenderedEmail,
    now: number,
    onlyEach = false,
  ): Promise<void> {
    for (const user of await store.accountUsers(accountId)) {
      if (onlyEach && user.payments !== "each") continue;
      await put(key, user.email, kind, { account: accountId, payment: paymentId }, email, now, true);
    }
  }

  return {
    /**
     * A payment just created: its invoice, when `invoiceOnCreate` allows it and the account sends
     * its customers email.
     */
    async paymentCreated(p: PaymentForEmail, now: number): Promise<void> {
      if (!invoiceOnCreate(p)) return;
      const to = await customerOf(p);
      if (to === null) return;
      const email = invoiceEmail(await deps.sender(p.account_id), baseUrl, p);
      await put(`invoice:${p.id}`, to, "invoice", { account: p.account_id, payment: p.id }, email, now);
    },

    /** An event was written: the emails it causes, in its transaction. */
    async eventWritten(event: Omit<EventRow, "seq">): Promise<void> {
      // Most events send nothing: they are let go before the payment is read (the hot path).
      if (event.payment_id === null || !EMAIL_EVENTS.has(event.type)) return;
      const p = await deps.payment(event.payment_id);
      if (p === null) return;
      const now = event.created_at;
      const at = { account: p.account_id, payment: p.id };
      const merchant = () => deps.sender(p.account_id);
      const customer = await customerOf(p);
      switch (event.type) {
        case "payment.confirmed":
          if (customer !== null)
            await put(`receipt:${p.id}`, customer, "receipt", at, receiptEmail(await merchant(), baseUrl, p, now), now);
          await toUsers(
            p.account_id,
            `${event.id}:confirmed`,
            "payment_confirmed",
            p.id,
            confirmedNotice(baseUrl, p),
            now,
            true,
          );
          return;
        case "payment.underpaid":
          if (customer !== null && p.payment_link === null)
            await put(
              `${event.id}:underpaid`,
              customer,
              "underpaid",
              at,
              underpaidEmail(await merchant(), baseUrl, p),
              now,
            );
          await toUsers(
            p.account_id,
            `${event.id}:attention`,
            "payment_attention",
            p.id,
            attentionNotice(baseUrl, p),
            now,
          );
          return;
        case "payment.failed":
          await toUsers(
            p.account_id,
            `${event.id}:attention`,
            "payment_attention",
            p.id,
            attentionNotice(baseUrl, p),
            now,
          );
          return;
        case "refund.created": {
          if (customer === null) return;
          const refund = refundOf(event.payload);
          if (refund === null || refund.status !== "awaiting_address") return;
          const email = refundClaimEmail(await merchant(), refund.amount, refund.claim_url, p);
          await put(`refund_claim:${refund.id}`, customer, "refund_claim", at, email, now);
          return;
        }
      }
    },

    /** One email to one address, for the alerts. */
    put,
    /** One email to each user of an account, for the alerts. */
    toUsers,
  };
}

const EMAIL_EVENTS = new Set(["payment.confirmed", "payment.underpaid", "payment.failed", "refund.created"]);

/** The refund a `refund.created` event carries, as far as its email needs it. */
function refundOf(payload: string): { id: string; status: string; amount: bigint; claim_url: string } | null {
  const refund = (JSON.parse(payload) as { data?: { refund?: Record<string, unknown> } }).data?.refund;
  if (!refund || typeof refund.claim_url !== "string" || typeof refund.amount !== "string") return null;
  const amount = parseExactAmount(refund.amount);
  if (amount === null) return null;
  return { id: String(refund.id), status: String(refund.status), amount, claim_url: refund.claim_url };
}
