/** The console's audit page (docs/console.md "Audit"): the organization's audit trail, newest first, a page at a time. */
import type { AuditRecord } from '../../audit/audit-trail';
import { href, html, type Html } from './html';

export interface AuditPageFilter {
  action?: string;
  actor?: string;
  outcome?: string;
  cursor?: string;
}

const OUTCOMES = ['success', 'refused', 'failed'] as const;

function targetText(record: AuditRecord): string {
  if (record.targetType === null) return '';
  return record.targetId === null ? record.targetType : `${record.targetType}:${record.targetId}`;
}

function nextHref(filter: AuditPageFilter, cursor: string): string {
  const query = new URLSearchParams();
  for (const key of ['action', 'actor', 'outcome'] as const) {
    const value = filter[key];
    if (value) query.set(key, value);
  }
  query.set('cursor', cursor);
  return `/console/audit?${query.toString()}`;
}

export function auditBody(options: { filter: AuditPageFilter; records: AuditRecord[]; nextCursor: string | null; error?: string }): Html {
  const { filter, records, nextCursor } = options;
  return html`<h1>Audit trail</h1>
<p class="meta">Who changed what in this organization, every approval decision and every tool call through the gateway, newest first (docs: audit trail).</p>
<form method="get" action="/console/audit" class="filters" role="search" aria-label="Filter the audit trail">
<label for="action">Action or prefix</label><input id="action" name="action" value="${filter.action ?? ''}" placeholder="workflow.* or api_key.created">
<label for="actor">Actor</label><input id="actor" name="actor" value="${filter.actor ?? ''}" placeholder="admin, api-key:…">
<label for="outcome">Outcome</label><select id="outcome" name="outcome"><option value="">any</option>${OUTCOMES.map((o) => html`<option value="${o}"${filter.outcome === o ? html` selected` : ''}>${o}</option>`)}</select>
<button type="submit">Filter</button></form>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
${records.length === 0 ? html`<p class="notice">No records match.</p>` : html`<table>
<caption class="visually-hidden">Audit records, newest first</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col">From</th></tr></thead>
<tbody>${records.map((r) => html`<tr><td>${r.at}</td><td>${r.actor}${r.actorName ? html` <span class="meta">(${r.actorName})</span>` : ''}</td>
<td><code>${r.action}</code></td><td>${targetText(r)}</td><td>${r.outcome} <span class="meta">${r.status}</span></td><td>${r.sourceIp ?? ''}</td></tr>`)}</tbody></table>`}
${nextCursor ? html`<p><a href="${href(nextHref(filter, nextCursor))}">Older records →</a></p>` : ''}`;
}
