/**
 * The console's connections pages (docs/console.md "Connections"): the organization's connections
 * with their status (never a credential), the forms that create one, a connection's page with its
 * Test, Connect (OAuth consent) and Delete actions, and the page the OAuth callback answers when the
 * console started the consent (it takes the browser back to the console).
 */
import type { Context } from 'koa';
import { html, type Html } from './html';
import { page, send } from './layout';

export interface ConnectionRow {
  id: string;
  application: string;
  name: string | null;
  createdAt: string;
  status: string;
  error?: string;
}

export interface TestOutcome {
  ok: boolean;
  status?: number;
  url: string;
  body?: unknown;
  error?: string;
}

export type ConsentOutcome = 'connected' | 'refused' | 'failed';

/** What a redirect back to a connection page may say (fixed words: nothing from the request is echoed). */
export const CONNECTION_NOTICES: Record<string, string> = {
  created: 'The connection was created.', connected: 'Connected: the provider granted access.', deleted: 'The connection was deleted.',
};
export const CONNECTION_ERRORS: Record<string, string> = {
  refused: 'The provider refused the consent (see the status below).', failed: 'The consent could not be finished (see the status below).',
};

const AUTH_KINDS: [string, string][] = [
  ['api_key', 'API key'], ['basic', 'Basic (user and password)'], ['oauth2_client_credentials', 'OAuth 2.0 client credentials'],
  ['oauth2_authorization_code', 'OAuth 2.0 authorization code (user consent)'],
];

function statusBadge(status: string): Html {
  const cls = status === 'connected' ? 'COMPLETE' : status === 'pending' ? 'PENDING' : 'FAILED';
  return html`<span class="status status-${cls}" data-connection-status>${status}</span>`;
}

function messages(options: { notice?: string; error?: string }): Html {
  return html`${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}`;
}

const field = (id: string, label: string, control: Html, hint?: string): Html => html`<div class="field"><label for="${id}">${label}</label>${hint ? html`<p class="hint">${hint}</p>` : ''}${control}</div>`;

export function connectionsBody(options: { connections: ConnectionRow[]; applications: string[]; csrf: string; notice?: string; error?: string }): Html {
  const { connections, csrf } = options;
  const others = options.applications.filter((a) => a !== 'custom');
  return html`<h1>Connections</h1>
${messages(options)}
${connections.length === 0 ? html`<p class="meta">No connections yet.</p>` : html`<table>
<caption class="visually-hidden">Connections</caption>
<thead><tr><th scope="col">Connection</th><th scope="col">Application</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${connections.map((c) => html`<tr><td><a href="/console/connections/${encodeURIComponent(c.id)}">${c.name ?? c.id}</a> <span class="meta"><code>${c.id}</code></span></td>
<td>${c.application}</td><td>${statusBadge(c.status)}</td><td>${c.createdAt}</td></tr>`)}</tbody></table>`}
<h2>New custom connection</h2>
<form method="post" data-needs="connections.write" action="/console/connections" class="panel" autocomplete="off"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="application" value="custom">
${field('c-name', 'Name', html`<input id="c-name" type="text" name="name" maxlength="200">`)}
${field('c-base', 'Base URL', html`<input id="c-base" type="url" name="baseUrl" required>`, 'The API\'s address; tool calls go to paths under it.')}
${field('c-test', 'Test path', html`<input id="c-test" type="text" name="testPath" value="/">`, 'A path under the base URL that answers GET; the Test button calls it.')}
${field('c-kind', 'Authentication', html`<select id="c-kind" name="authKind">${AUTH_KINDS.map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select>`)}
<fieldset><legend>API key</legend>
${field('c-key-in', 'Sent in', html`<select id="c-key-in" name="keyIn"><option value="header">a header</option><option value="query">a query parameter</option></select>`)}
${field('c-key-name', 'Header or parameter name', html`<input id="c-key-name" type="text" name="keyName">`)}
${field('c-key', 'Key', html`<input id="c-key" type="password" name="keyValue" autocomplete="off">`)}</fieldset>
<fieldset><legend>Basic</legend>
${field('c-user', 'User', html`<input id="c-user" type="text" name="username">`)}
${field('c-pass', 'Password', html`<input id="c-pass" type="password" name="password" autocomplete="off">`)}</fieldset>
<fieldset><legend>OAuth 2.0</legend>
${field('c-authorize', 'Authorize URL (authorization code only)', html`<input id="c-authorize" type="url" name="authorizeUrl">`)}
${field('c-token', 'Token URL', html`<input id="c-token" type="url" name="tokenUrl">`)}
${field('c-client', 'Client ID', html`<input id="c-client" type="text" name="clientId">`)}
${field('c-secret', 'Client secret', html`<input id="c-secret" type="password" name="clientSecret" autocomplete="off">`)}
${field('c-scopes', 'Scopes', html`<input id="c-scopes" type="text" name="scopes">`, 'Separated by spaces.')}</fieldset>
<div class="actions"><button type="submit">Create connection</button></div></form>
${others.length === 0 ? '' : html`<h2>New application connection</h2>
<form method="post" data-needs="connections.write" action="/console/connections" class="panel" autocomplete="off"><input type="hidden" name="csrf" value="${csrf}">
${field('a-app', 'Application', html`<select id="a-app" name="application">${others.map((a) => html`<option value="${a}">${a}</option>`)}</select>`)}
${field('a-name', 'Name', html`<input id="a-name" type="text" name="name" maxlength="200">`)}
${field('a-cred', 'Credentials (JSON)', html`<textarea id="a-cred" name="credentials" required spellcheck="false"></textarea>`, 'The application\'s credentials object, as the API takes it (docs/tool-gateway.md). Stored encrypted; never shown again.')}
<div class="actions"><button type="submit">Create connection</button></div></form>`}`;
}

export function connectionBody(options: { connection: ConnectionRow; authKind?: string; csrf: string; test?: TestOutcome; inUse?: string[]; notice?: string; error?: string }): Html {
  const { connection: c, csrf, test } = options;
  const action = `/console/connections/${encodeURIComponent(c.id)}`;
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}">`;
  const kind = AUTH_KINDS.find(([value]) => value === options.authKind)?.[1];
  return html`<p><a href="/console/connections">← Connections</a></p>
<h1>${c.name ?? c.id}</h1>
${messages(options)}
<dl class="facts"><dt>PCID</dt><dd><code>${c.id}</code></dd><dt>Application</dt><dd>${c.application}</dd>
${kind ? html`<dt>Authentication</dt><dd>${kind}</dd>` : ''}
<dt>Status</dt><dd>${statusBadge(c.status)}${c.error ? html` <span class="meta" data-connection-error>${c.error}</span>` : ''}</dd>
<dt>Created</dt><dd>${c.createdAt}</dd></dl>
<div class="actions">
${options.authKind === 'oauth2_authorization_code' ? html`<form method="post" data-needs="connections.write" action="${action}/connect">${hidden}<button type="submit">${c.status === 'connected' ? 'Connect again' : 'Connect'}</button></form>` : ''}
${options.authKind ? html`<form method="post" data-needs="connections.write" action="${action}/test">${hidden}<button type="submit" class="secondary">Test</button></form>` : ''}
<form method="post" data-needs="connections.write" action="${action}/delete" data-confirm="Delete this connection? Its credentials are gone for good.">${hidden}<button type="submit" class="danger">Delete</button></form>
</div>
${test ? html`<section class="panel" aria-labelledby="test-h"><h2 id="test-h">Test</h2>
<p data-test-outcome>${test.ok ? html`<strong>Passed</strong>` : html`<strong>Failed</strong>`}: GET <code>${test.url}</code>${test.status === undefined ? '' : html` answered ${test.status}`}${test.error ? html` (${test.error})` : ''}</p>
${test.body === undefined ? '' : html`<pre>${typeof test.body === 'string' ? test.body : JSON.stringify(test.body, null, 2)}</pre>`}</section>` : ''}`;
}

/** The OAuth callback's answer to a consent the console started: on to the connection page at once (a meta refresh, so that the session cookie goes with it). */
export function consentReturnPage(ctx: Context, status: number, returnTo: string, outcome: ConsentOutcome): void {
  const target = `${returnTo}?${outcome === 'connected' ? 'done' : 'error'}=${outcome}`;
  const said = outcome === 'connected' ? CONNECTION_NOTICES.connected : CONNECTION_ERRORS[outcome];
  send(ctx, status, page({ title: 'Connection', refresh: target }, html`<h1>${outcome === 'connected' ? 'Connected' : 'Not connected'}</h1>
<p>${said}</p><p><a href="${target}">Back to the connection in the console</a></p>`));
}
