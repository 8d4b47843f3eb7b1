import type { EmailHealth } from "../email/service.ts";
import type { PaymentNotices } from "../email/store.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { csrfField, type DashboardSession } from "./kit.ts";

export interface EmailSettingsData {
  session: DashboardSession;
  health: EmailHealth;
  /** The account's switch for invoices, receipts, underpayment notices and refund links. */
  customerEmails: boolean;
  /** What this user is told of confirmed payments. */
  notices: PaymentNotices;
}

const NOTICES: Array<[PaymentNotices, string, string]> = [
  ["each", "Every confirmed payment", "One email as each payment is confirmed."],
  ["daily", "A daily summary", "One email a day (after midnight UTC) listing the day's confirmed payments, if any."],
  ["none", "No payment emails", "Only what needs attention (below)."],
];

/**
 * The settings page's email card: whether email works (the SMTP server, the last success and
 * error, what waits), the account's customer emails, this user's notices and the test button.
 */
export function emailSection(data: EmailSettingsData): Raw {
  const { health } = data;
  return html`<section class="card" id="email" aria-labelledby="email-title">
  <h2 id="email-title">Email</h2>
  <dl class="settings">
    <div><dt>Status</dt><dd id="email-status">${statusLine(health)}</dd></div>
    ${health.enabled ? healthRows(health) : ""}
  </dl>
  ${
    health.enabled
      ? forms(data)
      : html`<p class="muted hint">The server's operator turns email on by setting
    <code class="mono">STABLEGATE_SMTP_URL</code> and <code class="mono">STABLEGATE_SMTP_FROM</code>; nothing is
    queued meanwhile.</p>`
  }
</section>`;
}

function healthRows(h: EmailHealth): Raw {
  const lastSent = h.last_sent_at ? timeTag(h.last_sent_at) : "Nothing sent yet";
  const error = h.last_error;
  return html`<div><dt>Sending through</dt><dd class="mono">${h.server}, from ${h.from}</dd></div>
    <div><dt>Last sent</dt><dd id="email-last-sent">${lastSent}</dd></div>
    ${
      error
        ? html`<div><dt>Last error</dt><dd id="email-last-error">${timeTag(error.at)}: ${error.error}
      <span class="muted">(to ${error.recipient}, ${error.gave_up ? "given up" : "will retry"})</span></dd></div>`
        : ""
    }
    <div><dt>Waiting</dt><dd id="email-queued">${h.queued} queued, ${h.given_up} given up</dd></div>`;
}

function statusLine(h: EmailHealth): Raw {
  if (!h.enabled) return html`<span class="badge">Off</span>`;
  if (h.ok) return html`<span class="badge succeeded">Working</span>`;
  return html`<span class="badge failed">Failing</span>
    <span class="muted">the last attempt failed; emails wait and are retried</span>`;
}

const CUSTOMERS_ON =
  "When a payment has the customer's email: the invoice (for payments with an invoice number), the receipt " +
  "once paid, a notice of an underpayment with the amount still due, and the link to claim a refund.";

/** One choice of a radio group, drawn as the speed form's are. */
const radio = (name: string, value: string, checked: boolean, title: string, hint: string) =>
  html`<label class="speed-choice">
        <input type="radio" name="${name}" value="${value}"${checked ? html` checked` : ""}>
        <span><strong>${title}</strong><span class="muted hint">${hint}</span></span>
      </label>`;

function forms(data: EmailSettingsData): Raw {
  const { session } = data;
  return html`<form class="speed-form" method="post" action="/dashboard/settings/email/customers">
    ${csrfField(session)}
    <fieldset class="speed-choices">
      <legend>Emails to this account's customers</legend>
      ${radio("customer_emails", "on", data.customerEmails, "On", CUSTOMERS_ON)}
      ${radio("customer_emails", "off", !data.customerEmails, "Off", "Customers get no email from this server.")}
    </fieldset>
    <button class="btn" type="submit">Save customer emails</button>
  </form>
  <form class="speed-form" method="post" action="/dashboard/settings/email/notices">
    ${csrfField(session)}
    <fieldset class="speed-choices">
      <legend>What you (${session.email}) are sent about payments</legend>
      ${NOTICES.map(([value, title, hint]) => radio("payments", value, data.notices === value, title, hint))}
    </fieldset>
    <p class="muted hint">Always sent to every user of the account: payments that need attention (underpaid or
      failed), a webhook endpoint disabled, and the relayer running low on gas.</p>
    <button class="btn" type="submit">Save my emails</button>
  </form>
  <form class="speed-form email-test" method="post" action="/dashboard/settings/email/test">
    ${csrfField(session)}
    <label for="email-test-address">Send a test email to</label>
    <input id="email-test-address" type="email" name="address" value="${session.email}" required
      autocomplete="email">
    <p class="muted hint">Sent at once, not queued: the answer of the SMTP server shows here.</p>
    <button class="btn secondary" type="submit">Send test email</button>
  </form>`;
}
