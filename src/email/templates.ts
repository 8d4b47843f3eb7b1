import { formatExact } from "../lib/money.ts";
import { type Block, type RenderedEmail, renderEmail } from "./layout.ts";

/** What the emails about a payment say of it. */
export interface PaymentFacts {
  id: string;
  amount: bigint;
  amount_received: bigint | null;
  description: string | null;
  reference: string | null;
  invoice_number: string | null;
  customer_name: string | null;
  due_at: number | null;
  status: string;
}

const usdc = (micro: bigint) => `${formatExact(micro)} USDC`;
/** 28 Nov 2026, 09:10 UTC: one zone for every reader, as the server cannot know theirs. */
export const utcDate = (ms: number) => {
  const d = new Date(ms);
  const month = d.toLocaleString("en-GB", { month: "short", timeZone: "UTC" });
  const hm = d.toISOString().slice(11, 16);
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${hm} UTC`;
};
const payUrl = (base: string, id: string) => `${base}/pay/${id}`;
const dashboardPayment = (base: string, id: string) => `${base}/dashboard/payments/${id}`;

function paymentRows(p: PaymentFacts): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (p.invoice_number) rows.push(["Invoice", p.invoice_number]);
  if (p.description) rows.push(["For", p.description]);
  if (p.reference) rows.push(["Reference", p.reference]);
  rows.push(["Amount", usdc(p.amount)]);
  return rows;
}

/** Who a customer's email is from: the merchant's name, and the support address replies go to, if any. */
export interface Sender {
  name: string;
  replyTo: string | null;
}

const customerFooter = (merchant: Sender) =>
  `Sent by ${merchant.name} through their payment server, because this address was given for this payment.` +
  (merchant.replyTo ? " Reply to this email to reach them." : "");

const merchantFooter = (base: string) =>
  `Sent by Stablegate to the users of this dashboard. Choose what you receive at ${base}/dashboard/settings.`;

/** To the customer, when a payment with an invoice number is created. */
export function invoiceEmail(from: Sender, base: string, p: PaymentFacts): RenderedEmail {
  const merchant = from.name;
  const rows = paymentRows(p);
  if (p.due_at !== null) rows.push(["Due", utcDate(p.due_at)]);
  return renderEmail(
    `Invoice ${p.invoice_number} from ${merchant}: ${usdc(p.amount)}`,
    `Invoice ${p.invoice_number} from ${merchant}`,
    [
      { p: `${greeting(p)}${merchant} sent you an invoice for ${usdc(p.amount)}, payable in USDC.` },
      { rows },
      { link: payUrl(base, p.id), label: "View and pay" },
    ],
    customerFooter(from),
  );
}

/** To the customer, once the payment is confirmed. */
export function receiptEmail(from: Sender, base: string, p: PaymentFacts, paidAt: number): RenderedEmail {
  const merchant = from.name;
  const rows = paymentRows(p);
  rows.push(["Paid", usdc(p.amount_received ?? p.amount)], ["Date", utcDate(paidAt)], ["Payment", p.id]);
  return renderEmail(
    `Receipt from ${merchant}: ${usdc(p.amount_received ?? p.amount)} paid`,
    `Payment received, thank you`,
    [
      { p: `${greeting(p)}${merchant} has received your payment.` },
      { rows },
      { link: payUrl(base, p.id), label: "View the payment" },
    ],
    customerFooter(from),
  );
}

/** To the customer, when less than the amount arrived. */
export function underpaidEmail(from: Sender, base: string, p: PaymentFacts): RenderedEmail {
  const merchant = from.name;
  const received = p.amount_received ?? 0n;
  const due = p.amount - received;
  return renderEmail(
    `${usdc(due)} still due to ${merchant}`,
    `Part of your payment arrived: ${usdc(due)} still due`,
    [
      {
        p:
          `${greeting(p)}${merchant} received ${usdc(received)} of the ${usdc(p.amount)} asked. ` +
          "Send the rest to the same payment page to complete it.",
      },
      { rows: [...paymentRows(p), ["Received", usdc(received)], ["Still due", usdc(due)]] },
      { link: payUrl(base, p.id), label: `Pay the remaining ${usdc(due)}` },
    ],
    customerFooter(from),
  );
}

/** To the customer, when the merchant refunds them and needs their address. */
export function refundClaimEmail(from: Sender, amount: bigint, claimUrl: string, p: PaymentFacts): RenderedEmail {
  const merchant = from.name;
  return renderEmail(
    `${merchant} is refunding you ${usdc(amount)}`,
    `A refund of ${usdc(amount)} is waiting for you`,
    [
      { p: `${greeting(p)}${merchant} is refunding ${usdc(amount)} of your payment. Tell them where to send it:` },
      { rows: paymentRows(p) },
      { link: claimUrl, label: "Claim your refund" },
      { note: "The link is yours alone: anyone who has it can choose where the refund goes. Do not forward it." },
    ],
    customerFooter(from),
  );
}

/** To the merchant's users who chose to hear of each confirmed payment. */
export function confirmedNotice(base: string, p: PaymentFacts): RenderedEmail {
  return renderEmail(
    `Payment confirmed: ${usdc(p.amount_received ?? p.amount)}${invoiceNote(p)}`,
    "Payment confirmed",
    [{ rows: [...paymentRows(p), ["Received", usdc(p.amount_received ?? p.amount)]] }, paymentLink(base, p.id)],
    merchantFooter(base),
  );
}

/** To every user of the account: a payment that needs someone to look at it. */
export function attentionNotice(base: string, p: PaymentFacts): RenderedEmail {
  const why =
    p.status === "underpaid"
      ? `The payer sent ${usdc(p.amount_received ?? 0n)} of ${usdc(p.amount)}. ` +
        "It completes if they send the rest; otherwise you may refund what arrived."
      : "Forwarding its funds to the payout address failed. Stablegate retries on its own; the payment page says why.";
  return renderEmail(
    `Payment needs attention: ${p.status}${invoiceNote(p)}`,
    `A payment is ${p.status}`,
    [{ p: why }, { rows: paymentRows(p) }, paymentLink(base, p.id)],
    merchantFooter(base),
  );
}

/** To every user of the account: an endpoint answered 410 Gone and gets no more webhooks. */
export function webhookDisabledNotice(base: string, endpointId: string, url: string): RenderedEmail {
  return renderEmail(
    "Webhook endpoint disabled",
    "A webhook endpoint was disabled",
    [
      {
        p:
          "The endpoint answered 410 Gone, which asks senders to stop, so it receives no more events. " +
          "Add it again from the dashboard once it works.",
      },
      {
        rows: [
          ["Endpoint", endpointId],
          ["URL", url],
        ],
      },
      { link: `${base}/dashboard/webhooks`, label: "Open webhooks" },
    ],
    merchantFooter(base),
  );
}

/** To every dashboard user: the relayer's gas is low on a chain (at most once a day per chain). */
export function relayerGasNotice(base: string, chain: string, relayer: string, balance: string): RenderedEmail {
  return renderEmail(
    `Relayer gas low on ${chain}`,
    `The relayer is running low on gas on ${chain}`,
    [
      {
        p:
          "The relayer pays the gas that forwards payments to payout addresses. Below about five " +
          "settlements' worth, payments may soon wait. Send it some of the chain's native coin.",
      },
      {
        rows: [
          ["Chain", chain],
          ["Relayer", relayer],
          ["Balance", balance],
        ],
      },
      { link: `${base}/dashboard/settings`, label: "Open settings" },
    ],
    merchantFooter(base),
  );
}

/** To users who chose a daily summary: yesterday's confirmed payments. */
export function dailySummary(
  base: string,
  day: string,
  payments: Array<Pick<PaymentFacts, "id" | "amount_received" | "amount" | "invoice_number" | "description">>,
): RenderedEmail {
  const total = payments.reduce((sum, p) => sum + (p.amount_received ?? p.amount), 0n);
  const shown = payments.slice(0, 50);
  return renderEmail(
    `${day}: ${payments.length} payment${payments.length === 1 ? "" : "s"} confirmed, ${usdc(total)}`,
    `Payments confirmed on ${day} (UTC)`,
    [
      {
        rows: [
          ["Payments", String(payments.length)],
          ["Total received", usdc(total)],
        ],
      },
      {
        rows: shown.map((p) => [
          usdc(p.amount_received ?? p.amount),
          p.invoice_number ? `invoice ${p.invoice_number}` : (p.description ?? p.id),
        ]),
      },
      ...(payments.length > shown.length ? [{ note: `and ${payments.length - shown.length} more.` }] : []),
      { link: `${base}/dashboard/payments?status=confirmed`, label: "Open payments" },
    ],
    merchantFooter(base),
  );
}

/** What `stablegate email test` and the settings page's button send. */
export function testEmail(base: string, sender: string): RenderedEmail {
  return renderEmail(
    "Stablegate test email",
    "Email works",
    [
      { p: `This test was sent by the Stablegate server at ${base} through its SMTP server, from ${sender}.` },
      { p: "Customers and dashboard users will receive their emails the same way." },
    ],
    "Sent because someone asked for a test email from the dashboard or the command line.",
  );
}

const invoiceNote = (p: PaymentFacts) => (p.invoice_number ? ` (invoice ${p.invoice_number})` : "");
const greeting = (p: PaymentFacts) => (p.customer_name ? `Hello ${p.customer_name}, ` : "Hello, ");
const paymentLink = (base: string, id: string): Block => ({
  link: dashboardPayment(base, id),
  label: "Open the payment",
});
