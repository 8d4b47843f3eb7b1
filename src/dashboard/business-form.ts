import type { BusinessDetails } from "../documents/business.ts";
import { MAX_ADDRESS_LINES } from "../documents/business.ts";
import { MAX_LOGO_BYTES, MAX_LOGO_SIDE } from "../documents/logo.ts";
import { html, type Raw } from "../html/template.ts";
import { csrfField, type DashboardSession } from "./kit.ts";

/** What the settings page says once a business form is saved (`?saved=`: only these fixed words). */
export const BUSINESS_SAVED = {
  business: "Business details saved: new invoice and receipt pages and PDFs print them from now on.",
  logo: "Logo saved: invoices and receipts show it from now on.",
  "logo-removed": "Logo removed.",
} as const;

const REMOVE_BUTTON = html`<button class="btn secondary" type="submit" name="remove" value="yes">Remove logo</button>`;

/**
 * The business details form (legal name, address, tax id, support email) and the logo's own
 * multipart form, each posting back with the session's CSRF token.
 */
export function businessSection(session: DashboardSession, d: BusinessDetails, accountName: string): Raw {
  return html`<section class="card" aria-labelledby="business-title">
  <h2 id="business-title">Business details</h2>
  <p class="muted hint">Printed on every invoice and receipt your customers see. All optional: leave a field
    empty to print nothing for it.</p>
  <form class="business-form" method="post" action="/dashboard/settings/business">
    ${csrfField(session)}
    <div class="field">
      <label for="legal_name">Legal name</label>
      <input id="legal_name" name="legal_name" maxlength="200" value="${d.legalName ?? ""}"
        placeholder="${accountName}">
      <p class="hint muted">Shown instead of the account's name, ${accountName}, where set.</p>
    </div>
    <div class="field">
      <label for="address">Address</label>
      <textarea id="address" name="address" rows="4">${d.addressLines.join("\n")}</textarea>
      <p class="hint muted">One line per line, up to ${MAX_ADDRESS_LINES}.</p>
    </div>
    <div class="field">
      <label for="tax_id">Tax ID</label>
      <input id="tax_id" name="tax_id" maxlength="64" value="${d.taxId ?? ""}" placeholder="DE123456789">
    </div>
    <div class="field">
      <label for="support_email">Support email</label>
      <input id="support_email" name="support_email" type="email" maxlength="254" value="${d.supportEmail ?? ""}"
        placeholder="help@shop.example">
    </div>
    <div class="form-actions"><button class="btn" type="submit">Save business details</button></div>
  </form>
  <h3 id="logo-title">Logo</h3>
  ${
    d.logoPath
      ? html`<p><img class="business-logo" id="business-logo" src="${d.logoPath}" alt="Your current logo"></p>`
      : html`<p class="muted hint" id="no-logo">No logo: documents show the name alone.</p>`
  }
  <form class="logo-form" method="post" action="/dashboard/settings/logo" enctype="multipart/form-data">
    ${csrfField(session)}
    <div class="field">
      <label for="logo">${d.logoPath ? "Replace the logo" : "Upload a logo"}</label>
      <input id="logo" name="logo" type="file" accept="image/png,image/jpeg">
      <p class="hint muted">PNG or JPEG, at most ${MAX_LOGO_BYTES / 1024} KB and ${MAX_LOGO_SIDE} pixels on
        each side.</p>
    </div>
    <div class="form-actions">
      <button class="btn" type="submit">Upload logo</button>
      ${d.logoPath ? REMOVE_BUTTON : ""}
    </div>
  </form>
</section>`;
}
