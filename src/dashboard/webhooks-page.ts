import { html, type Raw } from "../html/template.ts";
import { humanTime, timeTag } from "../html/time.ts";
import { type Notice, noticeBox } from "./admin-page.ts";
import { csrfField, type DashboardSession } from "./kit.ts";

/** A webhook endpoint as the endpoints service shows it. */
export interface EndpointItem {
  id: string;
  url: string;
  status: string;
  created_at: string;
}

/** A delivery as the deliveries service shows it, attempts newest first. */
export interface DeliveryItem {
  id: string;
  event_id: string;
  event_type: string;
  payment_id: string | null;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Array<{
    attempted_at: string;
    response_status: number | null;
    error: string | null;
    duration_ms: number;
  }>;
}

export interface WebhooksPageData {
  session: DashboardSession;
  endpoints: EndpointItem[];
  maxEndpoints: number;
  /** The random token the add form carries, so a double submit creates one endpoint. */
  formToken: string;
  /** Just created: its secret, shown this once. */
  created?: EndpointItem & { secret: string };
  notice?: Notice;
  /** What was typed into the add form, kept when it was refused. */
  url?: string;
}

/** /dashboard/webhooks: the account's endpoints and the form to add one. */
export function webhooksBody(data: WebhooksPageData): Raw {
  const rows = data.endpoints.map(
    (e) => html`<tr>
      <td class="url-cell"><a class="mono" href="/dashboard/webhooks/${e.id}">${e.url}</a></td>
      <td>${statusBadge(e.status)}</td>
      <td>${timeTag(e.created_at)}</td>
    </tr>`,
  );
  const list =
    data.endpoints.length === 0
      ? html`<p class="muted none-yet">No endpoints yet. Add one below and Stablegate will POST an event to it
          whenever a payment changes status.</p>`
      : html`<div class="table-wrap"><table>
      <thead><tr><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
      <tbody>${rows}</tbody>
    </table></div>`;
  const full = data.endpoints.length >= data.maxEndpoints;
  return html`<div class="admin-head"><h1>Webhooks</h1></div>
${data.created ? secretNotice(data.created) : ""}
${data.notice ? noticeBox(data.notice) : ""}
<section class="card" aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">Endpoints</h2>
  ${list}
</section>
<section class="card" aria-labelledby="add-title">
  <h2 id="add-title">Add an endpoint</h2>
  <form class="stack" method="post" action="/dashboard/webhooks">
    ${csrfField(data.session)}
    <input type="hidden" name="token" value="${data.formToken}">
    <div class="field">
      <label for="url">Endpoint URL</label>
      <input id="url" name="url" type="url" inputmode="url" required maxlength="2048"
        placeholder="https://shop.example.com/stablegate/webhooks" value="${data.url ?? ""}">
      <p class="muted hint">https, on a public address. Events are signed with the endpoint's secret
        (Standard Webhooks).
        At most ${data.maxEndpoints} endpoints per account.</p>
    </div>
    <div><button class="btn" type="submit"${full ? html` disabled` : ""}>Add endpoint</button></div>
  </form>
</section>`;
}

function secretNotice(created: EndpointItem & { secret: string }): Raw {
  return html`<section class="notice ok secret-once" role="status" aria-labelledby="secret-title">
  <h2 id="secret-title">Endpoint added</h2>
  <p>Its signing secret is shown only this once. Copy it into your receiver's configuration now;
    if you lose it, delete the endpoint and add it again.</p>
  <div class="secret-row">
    <code class="mono secret" id="endpoint-secret">${created.secret}</code>
    <button class="btn secondary" type="button" data-copy="${created.secret}">Copy</button>
  </div>
  <p><a href="/dashboard/webhooks/${created.id}">View ${created.url}</a></p>
</section>`;
}

export interface EndpointPageData {
  session: DashboardSession;
  endpoint: EndpointItem;
  deliveries: DeliveryItem[];
  /** Link to the next (older) page, when there is one. */
  olderHref: string | null;
  /** Whether this is a later page (so the page links back to the newest). */
  paged: boolean;
  notice?: Notice;
}

/** /dashboard/webhooks/{id}: one endpoint, its actions and its delivery log. */
export function endpointBody(data: EndpointPageData): Raw {
  const { endpoint } = data;
  const base = `/dashboard/webhooks/${endpoint.id}`;
  const enabled = endpoint.status === "enabled";
  const nothing = data.paged
    ? "No older deliveries."
    : "Nothing sent to this endpoint yet. Send a test event, or wait for a payment to change status.";
  const items = data.deliveries.map((d) => deliveryItem(d, base, data.session, enabled));
  const log =
    data.deliveries.length === 0
      ? html`<p class="muted none-yet">${nothing}</p>`
      : html`<ol class="deliveries">${items}</ol>`;
  const pager =
    data.olderHref || data.paged
      ? html`<nav class="log-pager" aria-label="Deliveries pages">
      ${data.paged ? html`<a href="${base}">Newest</a>` : ""}
      ${data.olderHref ? html`<a href="${data.olderHref}">Older deliveries</a>` : ""}
    </nav>`
      : "";
  return html`<p class="crumbs"><a href="/dashboard/webhooks">Webhooks</a></p>
<div class="admin-head">
  <h1 class="mono endpoint-url">${endpoint.url}</h1>
  <p class="muted">${statusBadge(endpoint.status)} Added ${timeTag(endpoint.created_at)} ·
    <span class="mono">${endpoint.id}</span></p>
</div>
${data.notice ? noticeBox(data.notice) : ""}
${enabled ? "" : noticeBox(GONE)}
<section class="card actions-card" aria-label="Endpoint actions">
  <form method="post" action="${base}/test">
    ${csrfField(data.session)}
    <button class="btn secondary" type="submit"${enabled ? "" : html` disabled`}>Send test event</button>
  </form>
  <form class="delete-form" method="post" action="${base}/delete">
    ${csrfField(data.session)}
    <label class="confirm"><input type="checkbox" name="confirm" value="yes" required> Stop sending to this URL</label>
    <button class="btn danger" type="submit">Delete endpoint</button>
  </form>
</section>
<section class="card" aria-labelledby="log-title">
  <h2 id="log-title">Deliveries</h2>
  <p class="muted hint">Newest first. Each delivery is one event for this endpoint, with every attempt to send it.</p>
  ${log}
  ${pager}
</section>`;
}

const GONE: Notice = {
  tone: "bad",
  text:
    "This endpoint answered 410 Gone and was disabled: nothing more is sent to it. " +
    "Delete it and add it again to receive webhooks.",
};

function deliveryItem(d: DeliveryItem, base: string, session: DashboardSession, canRetry: boolean): Raw {
  const payment = d.payment_id
    ? html`<a class="mono" href="/dashboard/payments/${d.payment_id}">${shortId(d.payment_id)}</a>`
    : html`<span class="muted">none</span>`;
  const attempts =
    d.attempts.length === 0
      ? html`<p class="muted">Not attempted yet.</p>`
      : html`<div class="table-wrap"><table class="attempts">
      <thead><tr>
        <th scope="col">Attempted</th><th scope="col">Result</th><th scope="col" class="num">HTTP</th>
        <th scope="col" class="num">Took</th><th scope="col">Error</th>
      </tr></thead>
      <tbody>${d.attempts.map(
        (a) => html`<tr>
        <td>${secondsTag(a.attempted_at)}</td>
        <td>${attemptBadge(a.response_status)}</td>
        <td class="num">${a.response_status ?? "none"}</td>
        <td class="num">${a.duration_ms} ms</td>
        <td class="error-cell">${a.error ?? ""}</td>
      </tr>`,
      )}</tbody>
    </table></div>`;
  return html`<li class="delivery" id="${d.id}">
  <div class="delivery-head">
    <span class="event-type mono">${d.event_type}</span>
    ${statusBadge(d.status)}
    <span class="muted">${d.attempt_count} ${d.attempt_count === 1 ? "attempt" : "attempts"}</span>
    ${
      canRetry
        ? html`<form class="retry" method="post" action="${base}/deliveries/${d.id}/retry">
      ${csrfField(session)}<button class="btn secondary small" type="submit">Retry</button>
    </form>`
        : ""
    }
  </div>
  <dl class="delivery-facts">
    <div><dt>Payment</dt><dd>${payment}</dd></div>
    <div><dt>Event</dt><dd class="mono">${d.event_id}</dd></div>
    <div><dt>Queued</dt><dd>${timeTag(d.created_at)}</dd></div>
    ${d.next_attempt_at ? html`<div><dt>Next attempt</dt><dd>${timeTag(d.next_attempt_at)}</dd></div>` : ""}
  </dl>
  ${attempts}
</li>`;
}

/** An attempt's time to the second: retries a few seconds apart must read apart. */
const secondsTag = (iso: string): Raw =>
  html`<time datetime="${iso}">${humanTime(iso).slice(0, -" UTC".length)}${iso.slice(16, 19)} UTC</time>`;

/** 0x1234abcd…ef01: enough to recognise a payment id at a glance; the link holds all of it. */
const shortId = (id: string) => `${id.slice(0, 10)}…${id.slice(-4)}`;

const STATUS_LABEL: Record<string, string> = {
  enabled: "Enabled",
  disabled: "Disabled",
  pending: "Pending",
  succeeded: "Succeeded",
  failed: "Failed",
  canceled: "Canceled",
};

export const statusBadge = (status: string): Raw =>
  html`<span class="badge ${status}">${STATUS_LABEL[status] ?? status}</span>`;

const attemptBadge = (code: number | null): Raw =>
  code !== null && code >= 200 && code < 300
    ? html`<span class="badge succeeded">OK</span>`
    : html`<span class="badge failed">Failed</span>`;
