/**
 * The console's tool servers pages (docs/console.md "Tool servers"): the organization's servers
 * (built-in and its own), a server's tools, and a tool's page with a form generated from its input
 * schema (form-fields.ts, as hosted forms) to try a call, and the call's result or error.
 */
import type { ToolEntry, ToolServer } from '../../tools';
import { fieldsHtml, type FormField } from './form-fields';
import { html, type Html } from './html';

export interface TryOutcome {
  ok: boolean;
  /** the tool's value (ok or a tool that ran and failed) */
  value?: unknown;
  /** why the call failed or could not be made */
  message?: string;
  code?: string;
}

const serverUrl = (name: string): string => `/console/servers/${encodeURIComponent(name)}`;

export function serversBody(servers: ToolServer[]): Html {
  const row = (s: ToolServer): Html => html`<tr><td><a href="${serverUrl(s.name)}">${s.name}</a></td><td>${s.embedded ? 'built-in' : 'custom'}</td>
<td>${s.application ? html`<code>${s.application}</code>` : html`<span class="meta">none</span>`}</td><td>${s.description}</td></tr>`;
  return html`<h1>Tool servers</h1>
<p class="meta">The servers this organization's workflows, agents and MCP clients call (<code>/tools/&lt;server&gt;</code>). Register custom ones with <code>POST /api/v1/servers</code>.</p>
<table><caption class="visually-hidden">Tool servers</caption>
<thead><tr><th scope="col">Server</th><th scope="col">Kind</th><th scope="col">Connection</th><th scope="col">Description</th></tr></thead>
<tbody>${servers.map(row)}</tbody></table>`;
}

export function serverBody(server: ToolServer, tools: readonly ToolEntry[], extra: Html | '' = ''): Html {
  return html`<p><a href="/console/servers">← Tool servers</a></p>
<h1>${server.name}</h1>
<p>${server.description}</p>
${server.application ? html`<p class="meta">Every tool takes the <code>PCID</code> of a <code>${server.application}</code> connection.</p>` : ''}
<h2>Tools</h2>
${tools.length === 0 ? html`<p class="meta">No tools.</p>` : html`<table><caption class="visually-hidden">Tools</caption>
<thead><tr><th scope="col">Tool</th><th scope="col">Description</th></tr></thead>
<tbody>${tools.map((t) => html`<tr><td><a href="${serverUrl(server.name)}/tools/${encodeURIComponent(t.name)}">${t.name}</a></td><td>${t.description}</td></tr>`)}</tbody></table>`}
${extra}`;
}

export function toolBody(options: {
  server: ToolServer; tool: ToolEntry; fields: FormField[]; csrf: string; values?: Record<string, string>; outcome?: TryOutcome; error?: string;
}): Html {
  const { server, tool, fields, csrf, outcome } = options;
  const action = `${serverUrl(server.name)}/tools/${encodeURIComponent(tool.name)}`;
  return html`<p><a href="${serverUrl(server.name)}">← ${server.name}</a></p>
<h1>${tool.name}</h1>
<p>${tool.description}</p>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<h2>Try a call</h2>
<p class="meta">Calls the tool as this organization, as a workflow step or an MCP client would: it really runs (a tool that changes something changes it).</p>
<form method="post" data-needs="runs.operate" action="${action}" class="panel"><input type="hidden" name="csrf" value="${csrf}">
${fieldsHtml(fields, false, options.values ?? {})}
<div class="actions"><button type="submit">Call ${tool.name}</button></div></form>
${outcome ? html`<section class="panel" aria-labelledby="result-h" data-tool-outcome="${outcome.ok ? 'ok' : 'error'}"><h2 id="result-h">${outcome.ok ? 'Result' : 'Error'}</h2>
${outcome.message ? html`<p class="error" role="alert">${outcome.code ? html`<code>${outcome.code}</code>: ` : ''}${outcome.message}</p>` : ''}
${outcome.value === undefined ? '' : html`<pre data-tool-result>${JSON.stringify(outcome.value, null, 2)}</pre>`}</section>` : ''}
<details><summary>Input schema</summary><pre>${JSON.stringify(tool.inputSchema, null, 2)}</pre></details>`;
}
