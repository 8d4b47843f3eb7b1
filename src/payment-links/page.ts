import { layout, messagePage } from "../checkout/page.ts";
import { itemsTable } from "../checkout/page-summary.ts";
import { html, type Raw } from "../html/template.ts";
import { asSentence } from "../lib/errors.ts";
import { formatAmount } from "../lib/money.ts";
import { lineItemsView } from "../payments/view.ts";
import type { PaymentLinkRow } from "./store.ts";

export interface LinkPageOptions {
  merchantName: string;
  /** One-time token for this rendering of the form (form-token.ts): the same form sent twice makes one payment. */
  nonce: string;
  /** What was wrong with the last submit, and what the payer had entered. */
  error?: string;
  amount?: string;
  email?: string;
}

/**
 * A payment link's page: who is paid, what for, how much (or a field for the amount when the
 * payer chooses), an optional email and a Pay button. It works without JavaScript; the POST
 * creates the payment and sends the payer on to its checkout.
 */
export function linkPage(link: PaymentLinkRow, opts: LinkPageOptions): string {
  const merchant = opts.merchantName || "Merchant";
  const fixed = link.amount === null ? null : formatAmount(link.amount);
  const items = lineItemsView(link);
  const body = html`<main class="checkout link-page">
  <section class="head" aria-labelledby="title">
    <h1 id="title">
      <span class="merchant"><span class="avatar" aria-hidden="true">${initial(merchant)}</span>
        <span><span class="sr-only">Pay </span><span id="merchant-name">${merchant}</span></span></span>
      ${
        fixed === null
          ? ""
          : html`<span class="total"><span id="amount">${fixed}</span>
        <span class="unit">USDC</span></span>`
      }
    </h1>
    ${link.description ? html`<p class="description" id="description">${link.description}</p>` : ""}
  </section>
  <form class="pay link-form" method="post" action="/l/${link.id}" novalidate>
    ${opts.error ? html`<p class="notice bad" role="alert" id="form-error">${asSentence(opts.error)}</p>` : ""}
    ${fixed === null ? amountField(link, opts.amount) : ""}
    <div class="field">
      <label for="email">Email <span class="muted">(optional)</span></label>
      <input id="email" name="email" type="email" autocomplete="email" maxlength="320" value="${opts.email ?? ""}"
        aria-describedby="email-hint">
      <p class="fine" id="email-hint">Shared with ${merchant} with your payment, for a receipt or a question.</p>
    </div>
    <input type="hidden" name="nonce" value="${opts.nonce}">
    <button class="btn primary" type="submit">Pay</button>
    <p class="fine">Next you pay in USDC from your wallet, or by sending it to an address.</p>
  </form>
  ${items && fixed !== null ? itemsSection(items, fixed) : ""}
</main>`;
  const title = fixed === null ? `Pay ${merchant}` : `Pay ${fixed} USDC to ${merchant}`;
  return layout(title, body, { embed: false, scripts: false });
}

function amountField(link: PaymentLinkRow, value: string | undefined): Raw {
  return html`<div class="field">
      <label for="amount">Amount <span class="muted">(USDC)</span></label>
      <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" required placeholder="10.00"
        value="${value ?? ""}" aria-describedby="amount-hint">
      <p class="fine" id="amount-hint">${boundsText(link)}</p>
    </div>`;
}

/** What is being paid for: after the form on phones, under the amount on wide screens, as on the checkout. */
function itemsSection(items: NonNullable<ReturnType<typeof lineItemsView>>, amount: string): Raw {
  const table = itemsTable({ line_items: items, amount });
  return html`<section class="details" aria-label="Order details">${table}</section>`;
}

function boundsText(link: PaymentLinkRow): string {
  const min = link.min_amount === null ? null : formatAmount(link.min_amount);
  const max = link.max_amount === null ? null : formatAmount(link.max_amount);
  if (min && max) return `From ${min} to ${max} USDC.`;
  if (min) return `At least ${min} USDC.`;
  if (max) return `At most ${max} USDC.`;
  return "Enter the amount you want to pay.";
}

export const linkNotFoundPage = (): string =>
  messagePage(
    "Payment link not found",
    "This payment link does not exist or is no longer active. Ask the merchant for a current one.",
  );

/** A refusal that lifts with time: `reason` says why and how long, in the payer's words. */
export const linkBusyPage = (reason: string): string =>
  messagePage("Please try again shortly", `${asSentence(reason)} Then go back and press Pay again.`);

const initial = (name: string) => (name.trim()[0] ?? "S").toUpperCase();
