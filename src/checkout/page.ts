import { assetUrl } from "../html/assets.ts";
import { pageHeaders } from "../html/headers.ts";
import { html, type Raw, raw } from "../html/template.ts";
import { ASSETS, PAGE_SCRIPTS } from "./assets.ts";
import { type AddChainParams, addChainParams, chainLabel } from "./chain-info.ts";
import { paySection, STATUS_LABELS } from "./page-pay.ts";
import { detailsSection, summaryHead } from "./page-summary.ts";
import { TRANSFER_STATES } from "./page-transfers.ts";
import type { PublicPaymentView } from "./public-view.ts";

export const PAGE_HEADERS = pageHeaders("'none'");

export interface PageOptions {
  /** The SVGs of pageQrTexts(view), in its order. */
  qrSvgs: string[];
  /** Shown inside the widget's iframe: compact, no redirect, reports to `parentOrigin`. */
  embed: boolean;
  parentOrigin: string | null;
}

/** A network the wallet flow can pay on. */
export interface BootNetwork {
  chain: string;
  chain_id: number;
  token_address: string;
  label: string;
  add_chain: AddChainParams | null;
}

/** What the page scripts start from, so they need no first request and share the wording. */
export interface BootData {
  view: PublicPaymentView;
  labels: typeof STATUS_LABELS;
  transfer_states: typeof TRANSFER_STATES;
  chain_label: string;
  /** The settlement chain first, as in view.networks. */
  networks: BootNetwork[];
  embed: boolean;
  parent_origin: string | null;
}

/**
 * What the page's QR codes encode: the deposit address when the payment takes one network (any
 * wallet or exchange reads it), else each network's EIP-681 request, since only that says which
 * network it is for.
 */
export function pageQrTexts(view: PublicPaymentView): string[] {
  return view.networks.length === 1 ? [view.deposit_address] : view.networks.map((n) => n.payment_uri);
}

/** The checkout page, complete without JavaScript: everything needed to pay is in the HTML. */
export function checkoutPage(view: PublicPaymentView, opts: PageOptions): string {
  const label = chainLabel(view.chain, view.chain_id);
  const networks = view.networks.map((n, i) => ({
    chain: n.chain,
    chainId: n.chain_id,
    label: chainLabel(n.chain, n.chain_id),
    usdc: n.token_address,
    qrDataUri: `data:image/svg+xml;base64,${Buffer.from(opts.qrSvgs[i] ?? "").toString("base64")}`,
  }));
  const boot: BootData = {
    view,
    labels: STATUS_LABELS,
    transfer_states: TRANSFER_STATES,
    chain_label: label,
    networks: networks.map((n) => ({
      chain: n.chain,
      chain_id: n.chainId,
      token_address: n.usdc,
      label: n.label,
      add_chain: addChainParams(n.chain, n.chainId),
    })),
    embed: opts.embed,
    parent_origin: opts.parentOrigin,
  };
  const body = html`<main class="checkout" id="checkout" data-payment-id="${view.id}">
  ${summaryHead(view)}
  ${paySection(view, { chainLabel: label, networks })}
  ${detailsSection(view)}
</main>
<script type="application/json" id="checkout-data">${jsonForScript(boot)}</script>`;
  return layout(`Pay ${view.amount} USDC to ${view.merchant_name || "the merchant"}`, body, {
    embed: opts.embed,
    scripts: true,
  });
}

export function notFoundPage(): string {
  return messagePage(
    "Payment not found",
    "This payment link is not valid. Check that you copied the whole link, or ask the merchant for a new one.",
  );
}

/** A page that only says something: not found, try again later. */
export function messagePage(title: string, text: string): string {
  const body = html`<main class="message-page">
  <h1>${title}</h1>
  <p>${text}</p>
</main>`;
  return layout(title, body, { embed: false, scripts: false });
}

/** The checkout's page frame: its stylesheet, optionally its scripts, and the footer (`foot`, else the checkout's). */
export function layout(title: string, body: Raw, opts: { embed: boolean; scripts: boolean; foot?: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl(ASSETS.css)}">
${opts.scripts ? PAGE_SCRIPTS.map((s) => html`<script src="${assetUrl(s)}" defer></script>\n`) : ""}</head>
<body${opts.embed ? html` class="embed"` : ""}>
${body}
<footer class="foot">${opts.foot ?? "Checkout by Stablegate. Payments go straight to the merchant's address."}</footer>
</body>
</html>`.toString();
}

/** JSON inside a non-executed script element: markup characters escaped so no text can close it. */
function jsonForScript(value: unknown): Raw {
  const escapes: Record<string, string> = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
  };
  return raw(JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => escapes[c]!));
}
