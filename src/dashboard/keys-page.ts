import type { ApiKeyInfo } from "../accounts/service.ts";
import { html, type Raw } from "../html/template.ts";
import { timeTag } from "../html/time.ts";
import { type Notice, noticeBox } from "./admin-page.ts";
import { csrfField, type DashboardSession } from "./kit.ts";

export interface KeysPageData {
  session: DashboardSession;
  keys: ApiKeyInfo[];
  /** The random token the create form carries, so a double submit creates one key. */
  formToken: string;
  /** Just created: the key itself, shown this once. */
  created?: { id: string; api_key: string };
  notice?: Notice;
}

/** /dashboard/keys: the account's API keys, newest first, with create and revoke. */
export function keysBody(data: KeysPageData): Raw {
  const keys = [...data.keys].reverse();
  const rows = keys.map((k) => {
    const status = k.revoked_at
      ? html`<span class="badge revoked">Revoked</span>`
      : html`<span class="badge enabled">Active</span>`;
    const lastUsed = k.last_used_at ? timeTag(k.last_used_at) : html`<span class="muted">Never</span>`;
    const action = k.revoked_at
      ? html`<span class="muted">Revoked</span> ${timeTag(k.revoked_at)}`
      : revokeForm(k, data.session);
    return html`<tr id="${k.id}">
      <td><span class="key-hint mono">${k.hint}</span> ${status}</td>
      <td><span class="cell-label">Created</span>${timeTag(k.created_at)}</td>
      <td><span class="cell-label">Last used</span>${lastUsed}</td>
      <td>${action}</td>
    </tr>`;
  });
  return html`<div class="admin-head"><h1>API keys</h1></div>
${data.created ? keyNotice(data.created) : ""}
${data.notice ? noticeBox(data.notice) : ""}
<section class="card keys-card" aria-labelledby="keys-title">
  <h2 id="keys-title">Keys</h2>
  <p class="muted hint">A key can create and read this account's payments: keep it on your server only.
    "Last used" is accurate to the minute.</p>
  ${
    keys.length === 0
      ? html`<p class="muted none-yet">No keys. Create one to use the API.</p>`
      : html`<div class="table-wrap"><table class="keys">
    <thead><tr>
      <th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th>
      <th scope="col"><span class="sr-only">Revoke</span></th>
    </tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`
  }
</section>
<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <p class="muted hint">To rotate a key: create a new one, deploy it, then revoke the old one here.</p>
  <form class="create-key" method="post" action="/dashboard/keys">
    ${csrfField(data.session)}
    <input type="hidden" name="token" value="${data.formToken}">
    <button class="btn" type="submit">Create key</button>
  </form>
</section>`;
}

function revokeForm(key: ApiKeyInfo, session: DashboardSession): Raw {
  return html`<form class="revoke-form" method="post" action="/dashboard/keys/${key.id}/revoke">
    ${csrfField(session)}
    <label class="confirm"><input type="checkbox" name="confirm" value="yes" required> Sure</label>
    <button class="btn danger small" type="submit">Revoke</button>
  </form>`;
}

function keyNotice(created: { id: string; api_key: string }): Raw {
  return html`<section class="notice ok secret-once" role="status" aria-labelledby="key-title">
  <h2 id="key-title">Key created</h2>
  <p>This is the only time the key is shown: only a hash of it is stored. Copy it to your server's
    configuration now.</p>
  <div class="secret-row">
    <code class="mono secret" id="new-api-key">${created.api_key}</code>
    <button class="btn secondary" type="button" data-copy="${created.api_key}">Copy</button>
  </div>
</section>`;
}
