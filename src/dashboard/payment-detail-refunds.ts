import type { ExplorerLinks } from "../chain/explorer.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { isoMillis } from "../lib/clock.ts";
import { formatExact } from "../lib/money.ts";
import type { RefundRow, RefundStatus } from "../refunds/store.ts";
import type { PaymentInstructions } from "../refunds/view.ts";
import { type Notice, noticeBox } from "./admin-page.ts";
import { csrfField, type DashboardSession } from "./kit.ts";
import { txLink } from "./payment-detail-page.ts";

/** One refund as the payment page shows it. */
export interface RefundItem {
  row: RefundRow;
  claimUrl: string;
  /** The exact transfer that pays it, once its address is known (null once canceled). */
  instructions: PaymentInstructions | null;
  /** The QR code of `instructions.uri` (EIP-681), as a data: URI; null without instructions. */
  qrDataUri: string | null;
}

/** What the refund form holds: as typed, kept when the request was refused. */
export interface RefundFormValues {
  amount: string;
  reason: string;
  refund_address: string;
}

/** The payment page's refunds card: the payment's refunds and the form to make one. */
export interface RefundsCardData {
  session: DashboardSession;
  paymentId: string;
  /** Gross funds received; null while nothing arrived. */
  received: bigint | null;
  /** What may still be refunded: received less every refund not canceled. */
  refundable: bigint;
  refunds: RefundItem[];
  explorer: ExplorerLinks | null;
  /** The form's nonce: a second submit of the same form makes no second refund. */
  nonce: string;
  notice?: Notice;
  values?: RefundFormValues;
}

export function refundsCard(data: RefundsCardData): Raw {
  return html`<section class="card pd-card" id="pd-refunds" aria-labelledby="pd-refunds-title">
  <h2 id="pd-refunds-title">Refunds</h2>
  <p class="muted">You pay a refund from your own wallet: Stablegate never holds the funds. Your customer names the
    address to pay through the refund's claim link, unless you already know it.</p>
  ${data.notice ? noticeBox(data.notice) : ""}
  ${
    data.refunds.length === 0
      ? ""
      : html`<ul class="rf-list" id="rf-list">${data.refunds.map((item) => refundItem(data, item))}</ul>`
  }
  ${refundForm(data)}
</section>`;
}

/** How a status reads, and the badge colour it takes. */
const STATUS: Record<RefundStatus, { label: string; badge: string }> = {
  awaiting_address: { label: "awaiting address", badge: "pending" },
  awaiting_payment: { label: "awaiting payment", badge: "settling" },
  succeeded: { label: "succeeded", badge: "confirmed" },
  canceled: { label: "canceled", badge: "" },
};

function refundItem(data: RefundsCardData, item: RefundItem): Raw {
  const { row } = item;
  const status = STATUS[row.status];
  // Open: no transfer counted yet. Cancelable: not even one seen, which may already be on its way.
  const open = row.status === "awaiting_address" || row.status === "awaiting_payment";
  const cancelable = open && row.tx_hash === null;
  const facts = refundFacts(data, item, open);
  return html`<li class="rf-item" id="refund-${row.id}" data-refund="${row.id}">
  <div class="rf-head">
    <strong class="rf-amount">${formatExact(row.amount)} USDC</strong>
    <span class="badge ${status.badge}" data-refund-status>${status.label}</span>
    <span class="muted">${timeTag(isoMillis(row.created_at))}</span>
  </div>
  <p class="mono muted rf-id">${row.id}</p>
  ${facts.length === 0 ? "" : html`<dl class="pd-facts rf-facts">${facts}</dl>`}
  ${row.status === "awaiting_address" ? CLAIM_HINT : ""}
  ${row.status === "awaiting_payment" && row.tx_hash ? SEEN_NOTICE : ""}
  ${cancelable && item.instructions ? payCard(row, item.instructions, item.qrDataUri) : ""}
  ${cancelable ? cancelForm(data.session, row.id) : ""}
</li>`;
}

const CLAIM_HINT = html`<p class="muted hint">Send your customer the claim link: once they name the address to
  refund, this refund shows the transfer to make.</p>`;
const SEEN_NOTICE = html`<p class="notice" role="status">A transfer paying this refund is on chain; it succeeds once
  the chain has confirmed it.</p>`;

function refundFacts(data: RefundsCardData, item: RefundItem, open: boolean): Raw[] {
  const { row, claimUrl } = item;
  const facts: Array<[string, unknown]> = [
    [
      "Claim link",
      open
        ? html`<span class="rf-claim"><a class="mono rf-value" href="${claimUrl}" data-claim-url>${claimUrl}</a>
        <button class="btn small secondary" type="button" data-copy="${claimUrl}" hidden>Copy link</button></span>`
        : null,
    ],
    ["Refund address", row.refund_address && html`<span class="mono rf-value">${row.refund_address}</span>`],
    ["Transaction", row.tx_hash && txLink(data.explorer, row.tx_hash)],
    ["Reason", row.reason],
    ["Succeeded", row.succeeded_at === null ? null : timeTag(isoMillis(row.succeeded_at))],
    ["Canceled", row.canceled_at === null ? null : timeTag(isoMillis(row.canceled_at))],
  ];
  return facts
    .filter(([, value]) => value !== null && value !== "")
    .map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`);
}

function cancelForm(session: DashboardSession, refundId: string): Raw {
  return html`<form class="inline" method="post" action="/dashboard/refunds/${refundId}/cancel" data-refund-cancel>
    ${csrfField(session)}<button class="btn small secondary" type="submit">Cancel refund</button>
  </form>`;
}

/**
 * The transfer that pays a refund: the merchant sends it from any wallet they control. Without
 * JavaScript the QR code (EIP-681) and the exact figures are there; with it and a wallet in the
 * browser, "Pay with wallet" sends the same transfer (dashboard.client.js reads the data- fields).
 */
const QR_ALT = "QR code of the refund transfer (EIP-681), for a wallet app";

function payCard(row: RefundRow, pay: PaymentInstructions, qrDataUri: string | null): Raw {
  const copyable = (value: string, label: string) =>
    html`<span class="mono rf-value">${value}</span>
      <button class="btn small secondary" type="button" data-copy="${value}" hidden>${label}</button>`;
  return html`<div class="rf-pay" data-refund-pay="${row.id}" data-chain-id="${pay.chain_id}" data-chain="${pay.chain}"
    data-token="${pay.token}" data-to="${pay.to}" data-amount="${pay.amount}" data-calldata="${pay.data}">
  ${qrDataUri ? html`<img class="pd-qr rf-qr" width="156" height="156" src="${qrDataUri}" alt="${QR_ALT}">` : ""}
  <div class="rf-pay-text">
    <h3>Pay this refund</h3>
    <p class="muted">Send exactly this USDC transfer from a wallet you control: scan the code with a wallet app, or
      pay from the wallet in this browser.</p>
    <dl class="rf-transfer">
      <div><dt>Amount</dt><dd><strong>${pay.amount} USDC</strong></dd></div>
      <div><dt>To</dt><dd>${copyable(pay.to, "Copy address")}</dd></div>
      <div><dt>Chain</dt><dd>${pay.chain} (chain ID ${pay.chain_id})</dd></div>
      <div><dt>USDC token</dt><dd><span class="mono rf-value">${pay.token}</span></dd></div>
      <div><dt>Calldata</dt><dd>${copyable(pay.data, "Copy calldata")}</dd></div>
    </dl>
    <div class="rf-wallet">
      <button class="btn" type="button" data-refund-wallet hidden>Pay with wallet</button>
      <p class="rf-msg" data-refund-msg role="status" aria-live="polite"></p>
    </div>
  </div>
</div>`;
}

function refundForm(data: RefundsCardData): Raw {
  if (data.received === null || data.received === 0n)
    return html`<p class="muted" id="rf-none">Nothing has been received yet: a refund can be made once funds
      arrive.</p>`;
  if (data.refundable <= 0n)
    return html`<p class="muted" id="rf-none">Everything received (${formatExact(data.received)} USDC) is refunded or
      being refunded. Cancel an unpaid refund to refund differently.</p>`;
  const v = data.values ?? { amount: formatExact(data.refundable), reason: "", refund_address: "" };
  const action = `/dashboard/payments/${data.paymentId}/refunds`;
  return html`<form class="stack rf-form" id="rf-form" method="post" action="${action}">
    ${csrfField(data.session)}<input type="hidden" name="nonce" value="${data.nonce}">
    <h3>Refund this payment</h3>
    <div class="field">
      <label for="rf-amount">Amount (USDC)</label>
      <input id="rf-amount" name="amount" class="mono" value="${v.amount}" inputmode="decimal" autocomplete="off"
        required pattern="[0-9]+\\.[0-9]{2,6}" aria-describedby="rf-amount-hint">
      <p class="muted hint" id="rf-amount-hint">Up to ${formatExact(data.refundable)} USDC of the
        ${formatExact(data.received)} USDC received may still be refunded.</p>
    </div>
    <div class="field">
      <label for="rf-reason">Reason <span class="muted">(optional)</span></label>
      <input id="rf-reason" name="reason" value="${v.reason}" maxlength="500" autocomplete="off">
    </div>
    <div class="field">
      <label for="rf-address">Refund address <span class="muted">(optional)</span></label>
      <input id="rf-address" name="refund_address" class="mono" value="${v.refund_address}" autocomplete="off"
        spellcheck="false" placeholder="0x…" pattern="0x[0-9a-fA-F]{40}" maxlength="42"
        aria-describedby="rf-address-hint">
      <p class="muted hint" id="rf-address-hint">Only if you already know your customer's wallet. Left empty, your
        customer names it through the claim link.</p>
    </div>
    <div><button class="btn" type="submit">Create refund</button></div>
  </form>`;
}

/** What the page says of a refund just created or canceled: only from its stored record. */
export function refundNotice(row: RefundRow): Notice {
  const amount = `${formatExact(row.amount)} USDC`;
  switch (row.status) {
    case "awaiting_address":
      return { tone: "ok", text: `Refund of ${amount} created. Send your customer its claim link, below.` };
    case "awaiting_payment":
      return { tone: "ok", text: `Refund of ${amount} created. Pay it from your wallet, below.` };
    case "succeeded":
      return { tone: "ok", text: `Refund of ${amount} succeeded.` };
    case "canceled":
      return { tone: "ok", text: `Refund of ${amount} canceled: it may be refunded again.` };
  }
}
