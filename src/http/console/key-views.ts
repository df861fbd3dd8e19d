/** The console's API keys page (docs/console.md "API keys"). */
import { html, type Html } from './html';
import { ROLES } from '../../people/roles';

export interface KeyRow {
  id: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** the role the key is limited to; null: its full reach */
  role?: string | null;
}

export function keysBody(data: { keys: KeyRow[]; csrf: string; created?: { id: string; name: string | null; key: string }; notice?: string; error?: string }): Html {
  const { keys, csrf, created } = data;
  return html`<h1>API keys</h1>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
${created ? html`<div class="notice" role="status"><p>The new key${created.name ? html` <strong>${created.name}</strong>` : ''} (<code>${created.id}</code>). Copy it now: it is shown this once and never again (flowgate keeps only its hash).</p>
<p><code id="new-key">${created.key}</code></p></div>` : ''}
<form method="post" data-needs="api_keys.manage" action="/console/api-keys" class="filters"><input type="hidden" name="csrf" value="${csrf}">
<div><label for="key-name">Name</label><input id="key-name" name="name" type="text" maxlength="200"></div>
<div><label for="key-role">Role</label><select id="key-role" name="role"><option value="">none: the key's full reach</option>${ROLES.map((r) => html`<option value="${r}">${r}</option>`)}</select></div>
<div><button type="submit">Create an API key</button></div></form>
<p class="hint">An API key starts runs (<code>POST /ext/triggers/…</code>) and reads them; it cannot change workflows. A role holds the key, and every runtime token minted from it, to what that role may do (a viewer key polls runs but cannot start one).</p>
${keys.length === 0 ? html`<p class="meta">No API keys.</p>` : html`<table><caption class="visually-hidden">API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>${keys.map((k) => html`<tr id="key-${k.id}"><td>${k.name ?? html`<span class="meta">unnamed</span>`}</td><td><code>fgk_…</code> <span class="meta"><code>${k.id}</code></span></td><td>${k.role ?? html`<span class="meta">none</span>`}</td><td>${k.createdAt}</td>
<td>${k.revokedAt ? html`revoked ${k.revokedAt}` : html`<form method="post" data-needs="api_keys.manage" action="/console/api-keys/${encodeURIComponent(k.id)}/revoke" data-confirm="Revoke this key? Whoever uses it is refused at once."><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger">Revoke</button></form>`}</td></tr>`)}</tbody></table>`}`;
}
