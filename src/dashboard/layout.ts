import { pageHeaders } from "../html/headers.ts";
import { html, type Raw } from "../html/template.ts";
import { DASHBOARD_ASSETS, dashboardAssetUrl } from "./assets.ts";
import { csrfField, type DashboardSession, type NavKey } from "./kit.ts";

/** The checkout's strict headers, except that forms post back here and no site may frame the dashboard. */
export const DASHBOARD_HEADERS = pageHeaders("'self'", "never");

const NAV: Array<{ key: NavKey; href: string; label: string }> = [
  { key: "home", href: "/dashboard", label: "Home" },
  { key: "payments", href: "/dashboard/payments", label: "Payments" },
  { key: "new-payment", href: "/dashboard/payments/new", label: "New payment" },
  { key: "links", href: "/dashboard/links", label: "Payment links" },
  { key: "webhooks", href: "/dashboard/webhooks", label: "Webhooks" },
  { key: "keys", href: "/dashboard/keys", label: "API keys" },
  { key: "settings", href: "/dashboard/settings", label: "Settings" },
];

export interface PageOptions {
  title: string;
  session: DashboardSession;
  nav: NavKey;
  body: Raw;
  status?: number;
}

/** A signed-in page: navigation, the signed-in user with a sign-out button, then `body`. */
export function dashboardPage(opts: PageOptions): Response {
  const nav = NAV.map(
    (item) => html`<a href="${item.href}"${item.key === opts.nav ? html` aria-current="page"` : ""}>${item.label}</a>`,
  );
  const body = html`<header class="bar">
  <a class="brand" href="/dashboard">Stablegate</a>
  <nav class="nav" aria-label="Dashboard">${nav}</nav>
  <form class="signout" method="post" action="/dashboard/logout">
    ${csrfField(opts.session)}<span class="muted">${opts.session.email}</span>
    <button class="btn link" type="submit">Sign out</button>
  </form>
</header>
<main class="dash">
${opts.body}
</main>`;
  return pageResponse(opts.title, body, opts.status);
}

/** What a 404 says: the same for a missing id and another account's, so an id's existence never shows. */
export interface NotFound {
  nav: NavKey;
  title: string;
  message: string;
  back: { href: string; label: string };
}

/** The dashboard's 404 page. */
export function notFoundPage(session: DashboardSession, what: NotFound): Response {
  return dashboardPage({
    title: what.title,
    session,
    nav: what.nav,
    status: 404,
    body: html`<section class="card">
  <h1>${what.title}</h1>
  <p class="muted">${what.message}</p>
  <p><a href="${what.back.href}">${what.back.label}</a></p>
</section>`,
  });
}

/** A page for someone not signed in (sign-in, not found): the same look, no navigation. */
export function publicDashboardPage(title: string, body: Raw, status = 200): Response {
  return pageResponse(title, html`<main class="dash narrow">${body}</main>`, status);
}

function pageResponse(title: string, body: Raw, status = 200): Response {
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${title} · Stablegate</title>
<link rel="stylesheet" href="${dashboardAssetUrl(DASHBOARD_ASSETS.css)}">
<script src="${dashboardAssetUrl(DASHBOARD_ASSETS.js)}" defer></script>
</head>
<body>
${body}
</body>
</html>`;
  return new Response(page.toString(), { status, headers: DASHBOARD_HEADERS });
}
