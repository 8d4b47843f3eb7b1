import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { isoMillis } from "../lib/clock.ts";
import { asSentence } from "../lib/errors.ts";
import { formatAmount } from "../lib/money.ts";
import type { PaymentLinkRow } from "../payment-links/store.ts";
import { linkAmountText, linkUrl } from "../payment-links/view.ts";
import type { PaymentRow } from "../payments/store.ts";
import { csrfField, type DashboardSession } from "./kit.ts";
import { dashboardPage, notFoundPage } from "./layout.ts";

/** The payment links pages: list, new, one link with its QR. Pure renderers of plain data. */

export interface LinksListView {
  session: DashboardSession;
  baseUrl: string;
  links: PaymentLinkRow[];
  /** The last link shown, when there are older ones. */
  olderAfter: string | null;
  /** Whether this page follows another (a `starting_after` was given). */
  paged: boolean;
}

export function linksListPage(view: LinksListView): Response {
  const rows = view.links.map(
    (link) => html`<tr>
      <td class="link-cell">
        <a class="link-name" href="/dashboard/links/${link.id}">${link.description || "Untitled link"}</a>
        <span class="link-url"><span class="mono">${linkUrl(view.baseUrl, link.id)}</span>
        <button class="btn secondary small" type="button" data-copy="${linkUrl(view.baseUrl, link.id)}"
          aria-label="Copy link ${link.description ?? ""}">Copy</button></span>
      </td>
      <td>${linkAmountText(link)}</td>
      <td>${activeBadge(link)}</td>
      <td>${timeTag(isoMillis(link.created_at))}</td>
      <td class="actions">${activeForm(view.session, link, `/dashboard/links`)}</td>
    </tr>`,
  );
  const table = html`<div class="table-wrap"><table class="links-table">
    <thead><tr>
      <th scope="col">Link</th><th scope="col">Amount</th><th scope="col">State</th><th scope="col">Created</th>
      <th scope="col" aria-label="Action"></th>
    </tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
  const empty = html`<div class="links-empty">
    <p><strong>No payment links ${view.paged ? "older than these" : "yet"}.</strong></p>
    ${view.paged ? "" : EMPTY_HINT}
  </div>`;
  const pager = html`<nav class="pager" aria-label="Pages">
    ${view.paged ? html`<a href="/dashboard/links">Newest</a>` : ""}
    ${view.olderAfter ? html`<a href="/dashboard/links?starting_after=${view.olderAfter}">Older links</a>` : ""}
  </nav>`;
  return dashboardPage({
    title: "Payment links",
    session: view.session,
    nav: "links",
    body: html`<section class="card links">
  <div class="links-head">
    <h1>Payment links</h1>
    <a class="btn" href="/dashboard/links/new">New payment link</a>
  </div>
  ${view.links.length > 0 ? table : empty}
  ${view.paged || view.olderAfter ? pager : ""}
</section>`,
  });
}

/** What the new-link form was filled in with, when it comes back with a refusal. */
export interface NewLinkForm {
  description?: string;
  mode?: "fixed" | "choose";
  amount?: string;
  min_amount?: string;
  max_amount?: string;
  success_url?: string;
}

export function newLinkPage(session: DashboardSession, form: NewLinkForm = {}, error?: string): Response {
  const choose = form.mode === "choose";
  const value = (name: keyof NewLinkForm) => form[name] ?? "";
  return dashboardPage({
    title: "New payment link",
    session,
    nav: "links",
    status: error ? 400 : 200,
    body: html`<section class="card link-new">
  <h1>New payment link</h1>
  ${error ? html`<p class="notice bad" role="alert">${asSentence(error)}</p>` : ""}
  <form method="post" action="/dashboard/links/new">
    ${csrfField(session)}
    <div class="field">
      <label for="description">Description</label>
      <input id="description" name="description" maxlength="500" value="${value("description")}"
        placeholder="Pour-over class, 2 hours">
      <p class="hint muted">Shown to the payer on the link's page and their checkout.</p>
    </div>
    <fieldset class="modes">
      <legend>Amount</legend>
      <label class="mode">
        <input type="radio" name="mode" value="fixed" id="mode-fixed"${choose ? "" : html` checked`}> A fixed amount
      </label>
      <div class="field fixed-fields">
        <label for="amount">Amount (USDC)</label>
        <input id="amount" name="amount" inputmode="decimal" autocomplete="off" value="${value("amount")}"
          placeholder="25.00">
      </div>
      <label class="mode">
        <input type="radio" name="mode" value="choose" id="mode-choose"${choose ? html` checked` : ""}>
        The payer chooses the amount
      </label>
      <div class="choose-fields">
        <div class="field">
          <label for="min_amount">Minimum (USDC, optional)</label>
          <input id="min_amount" name="min_amount" inputmode="decimal" autocomplete="off"
            value="${value("min_amount")}" placeholder="1.00">
        </div>
        <div class="field">
          <label for="max_amount">Maximum (USDC, optional)</label>
          <input id="max_amount" name="max_amount" inputmode="decimal" autocomplete="off"
            value="${value("max_amount")}" placeholder="500.00">
        </div>
      </div>
    </fieldset>
    <div class="field">
      <label for="success_url">Return URL (optional)</label>
      <input id="success_url" name="success_url" type="url" maxlength="2048" value="${value("success_url")}"
        placeholder="https://shop.example/thanks">
      <p class="hint muted">Where the payer goes once paid. Must be https.</p>
    </div>
    <div class="form-actions">
      <button class="btn" type="submit">Create payment link</button>
      <a href="/dashboard/links">Cancel</a>
    </div>
  </form>
</section>`,
  });
}

export interface LinkDetailView {
  session: DashboardSession;
  baseUrl: string;
  link: PaymentLinkRow;
  /** The QR code of the link's URL, as an SVG document. */
  qrSvg: string;
  /** Just created: say so, and that this is what to share. */
  created: boolean;
  /** The newest payments made through the link. */
  payments: PaymentRow[];
}

/** How many of a link's payments its page shows. */
export const LINK_PAYMENTS_SHOWN = 10;

export function linkDetailPage(view: LinkDetailView): Response {
  const { link } = view;
  const url = linkUrl(view.baseUrl, link.id);
  const qr = `data:image/svg+xml;base64,${Buffer.from(view.qrSvg).toString("base64")}`;
  const facts: Array<[string, unknown]> = [
    ["Amount", linkAmountText(link)],
    ["State", activeBadge(link)],
    ["Created", timeTag(isoMillis(link.created_at))],
    ["Return URL", link.success_url ?? html`<span class="muted">None</span>`],
    ["ID", html`<span class="mono">${link.id}</span>`],
  ];
  return dashboardPage({
    title: link.description || "Payment link",
    session: view.session,
    nav: "links",
    body: html`<p><a href="/dashboard/links">← Payment links</a></p>
${view.created ? CREATED_NOTICE : ""}
<section class="card link-detail">
  <div class="link-share">
    <div class="link-share-text">
      <h1>${link.description || "Untitled link"}</h1>
      <div class="field">
        <label for="link-url">Link URL</label>
        <div class="copy-row">
          <input id="link-url" class="mono" readonly value="${url}">
          <button class="btn secondary" type="button" data-copy="${url}">Copy link</button>
        </div>
      </div>
      <dl class="link-facts">${facts.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>
      <div class="form-actions">
        ${
          link.active
            ? html`<a class="btn secondary" href="${url}" target="_blank" rel="noopener">Open the page</a>`
            : ""
        }
        ${activeForm(view.session, link, `/dashboard/links/${link.id}`, "")}
      </div>
    </div>
    <img class="link-qr" src="${qr}" width="200" height="200" alt="QR code of the link URL">
  </div>
</section>
${linkPaymentsSection(view.payments)}`,
  });
}

function linkPaymentsSection(payments: PaymentRow[]): Raw {
  const rows = payments.map(
    (p) => html`<tr>
      <td class="num"><a href="/dashboard/payments/${p.id}">${formatAmount(p.amount)} USDC</a></td>
      <td><span class="badge ${p.status}">${p.status}</span></td>
      <td>${p.customer_email ?? html`<span class="muted">No email</span>`}</td>
      <td>${timeTag(isoMillis(p.created_at))}</td>
    </tr>`,
  );
  const table = html`<div class="table-wrap"><table class="link-payments">
    <thead><tr><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Payer</th>
      <th scope="col">Created</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
  const note =
    payments.length === LINK_PAYMENTS_SHOWN
      ? html`<p class="hint muted">The ${LINK_PAYMENTS_SHOWN} newest. Every payment is under Payments.</p>`
      : "";
  return html`<section class="card links">
  <h2>Payments through this link</h2>
  ${payments.length > 0 ? html`${table}${note}` : html`<p class="muted">None yet.</p>`}
</section>`;
}

export function linkNotFoundPage(session: DashboardSession): Response {
  return notFoundPage(session, {
    nav: "links",
    title: "Payment link not found",
    message: "There is no such payment link in this account.",
    back: { href: "/dashboard/links", label: "See all payment links" },
  });
}

const EMPTY_HINT = html`<p class="muted">A payment link is one URL you can post anywhere: on your site, in a chat,
  on a printed QR code. Everyone who opens it pays you, a fixed amount or one they choose.</p>`;

const CREATED_NOTICE = html`<p class="notice ok" role="status">Payment link created. Share its URL or QR code;
  everyone who opens it can pay.</p>`;

const activeBadge = (link: PaymentLinkRow): Raw =>
  link.active ? html`<span class="badge active">Active</span>` : html`<span class="badge">Inactive</span>`;

/** Deactivate (or activate again) with the session's CSRF token; `back` is where to return. */
function activeForm(session: DashboardSession, link: PaymentLinkRow, back: string, size: "small" | "" = "small"): Raw {
  const label = link.active ? "Deactivate" : "Activate";
  return html`<form class="inline" method="post" action="/dashboard/links/${link.id}">
    ${csrfField(session)}<input type="hidden" name="active" value="${link.active ? "false" : "true"}">
    <input type="hidden" name="back" value="${back}">
    <button class="btn secondary ${size}" type="submit" aria-label="${label} ${link.description ?? "link"}"
      title="${link.active ? "Its page stops taking payments" : "Its page takes payments again"}">${label}</button>
  </form>`;
}
