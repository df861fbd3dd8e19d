/**
 * The console's bulk actions (docs/console.md "Acting on all matching runs"): the runs page's
 * "Act on all matching runs" form, the count and its confirmation, a batch's progress page and
 * the recent batches. Pure templates: routes/console-batches.ts gathers the data.
 */
import { BATCH_ACTIONS, BATCH_CONFIRM_ABOVE, type BatchFilter } from '../../common/run-batch';
import { BATCH_ACTION_LABELS, type BatchFormField, type BatchFormValues, type BatchRequest } from '../../console/batch-form';
import type { BatchReport } from '../../runs/run-batch';
import { html, type Html } from './html';

function hidden(name: string, value: string | undefined): Html {
  return value ? html`<input type="hidden" name="${name}" value="${value}">` : html``;
}

function fieldError(errors: Partial<Record<BatchFormField, string>>, name: BatchFormField): Html {
  const error = errors[name];
  return error ? html`<p class="error" id="batch-${name}-error">${error}</p>` : html``;
}

/**
 * The form that counts the runs the runs page's filter selects (its workflow, trigger, status and
 * time are carried as they are; the error text, the end of the time range and the action are
 * asked here). Offered to roles holding runs.operate.
 */
export function batchForm(data: { csrf: string; values: BatchFormValues; errors?: Partial<Record<BatchFormField, string>>; open?: boolean }): Html {
  const { values, csrf } = data;
  const errors = data.errors ?? {};
  const aria = (name: BatchFormField): Html => (errors[name] ? html` aria-invalid="true" aria-describedby="batch-${name}-error"` : html``);
  return html`<details class="panel" id="act-on-matching" data-needs="runs.operate"${data.open ? html` open` : ''}><summary>Act on all matching runs</summary>
<form method="post" data-needs="runs.operate" action="/console/batches/count" class="filters" aria-label="Act on all matching runs">
<input type="hidden" name="csrf" value="${csrf}">${hidden('workflowId', values.workflowId)}${hidden('triggerId', values.triggerId)}${hidden('status', values.status)}${hidden('since', values.since)}${hidden('startedAfter', values.startedAfter)}
<div><label for="batch-action">Action</label><select id="batch-action" name="action"${aria('action')}>${BATCH_ACTIONS.map((a) => html`<option value="${a}"${values.action === a ? html` selected` : ''}>${BATCH_ACTION_LABELS[a]}</option>`)}</select>${fieldError(errors, 'action')}</div>
<div><label for="batch-error">Error contains</label><input id="batch-error" name="errorContains" maxlength="200" value="${values.errorContains ?? ''}"${aria('errorContains')}>${fieldError(errors, 'errorContains')}</div>
<div><label for="batch-input">Input fields (one <code>path = value</code> a line)</label><textarea id="batch-input" name="input" rows="2" maxlength="2000" placeholder="customer.id = c-42"${aria('input')}>${values.input ?? ''}</textarea>${fieldError(errors, 'input')}</div>
<div><label for="batch-before">Started before (UTC)</label><input id="batch-before" name="startedBefore" type="datetime-local" value="${values.startedBefore ?? ''}"${aria('startedBefore')}>${fieldError(errors, 'startedBefore')}</div>
<div><label for="batch-reason">Reason (a pause)</label><input id="batch-reason" name="reason" maxlength="500" value="${values.reason ?? ''}"${aria('reason')}>${fieldError(errors, 'reason')}</div>
<div><button type="submit">Count matching runs</button></div>
</form>
${errors.status ? html`<p class="error" id="batch-status-error">${errors.status}</p>` : ''}${errors.since ? html`<p class="error" id="batch-since-error">${errors.since}</p>` : ''}${errors.startedAfter ? html`<p class="error" id="batch-startedAfter-error">${errors.startedAfter}</p>` : ''}
<p class="hint">Selects by the filter above (workflow, trigger, status, start time) and these fields, newest first, at most 100 runs; nothing is done until you confirm the count. An input field's value is JSON when it reads as JSON (<code>42</code>, <code>true</code>, <code>"42"</code>), else the text; runs are read one by one for it, so narrow the time range. A batch's progress has its own page.</p></details>`;
}

/** The filter in words, for the confirmation and the batch page. */
export function filterFacts(filter: BatchFilter): Html {
  const rows: [string, string][] = [];
  if (filter.workflowId) rows.push(['Workflow', filter.workflowId]);
  if (filter.triggerId) rows.push(['Trigger', filter.triggerId]);
  if (filter.status) rows.push(['Status', filter.status]);
  if (filter.startedAfter) rows.push(['Started at or after', filter.startedAfter]);
  if (filter.startedBefore) rows.push(['Started before', filter.startedBefore]);
  if (filter.errorContains) rows.push(['Error contains', filter.errorContains]);
  for (const [path, value] of Object.entries(filter.input ?? {})) rows.push([`Input ${path}`, JSON.stringify(value)]);
  if (rows.length === 0) return html`<p class="meta">Every run of the organization (no filter).</p>`;
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd><code>${v}</code></dd>`)}</dl>`;
}

export interface BatchCount {
  request: BatchRequest;
  /** the values the confirmation posts again (the instant counted, not the relative window) */
  values: BatchFormValues;
  count: number;
  limit: number;
  scanned: number;
  capped: boolean;
}

/** The count of a dry run, and the confirmation that starts the batch. */
export function batchCountBody(data: BatchCount & { csrf: string }): Html {
  const { request, values, count, limit } = data;
  const label = BATCH_ACTION_LABELS[request.action];
  const carried = (['action', 'workflowId', 'triggerId', 'status', 'startedAfter', 'startedBefore', 'errorContains', 'input', 'reason'] as const).map((f) => hidden(f, values[f]));
  return html`<p><a href="/console/runs">← Runs</a></p>
<h1>${label}: ${count === 1 ? 'one run matches' : `${count} runs match`}</h1>
<p id="batch-count" data-count="${count}">${count === 0 ? 'No run matches this filter: there is nothing to act on.' : html`The batch would act on <strong>${count}</strong> run${count === 1 ? '' : 's'}, newest first${count >= limit ? ` (its limit: ${limit}; older runs are left out)` : ''}.`}</p>
${data.scanned > 0 && (request.filter.errorContains !== undefined || request.filter.input !== undefined || request.filter.status === 'PAUSED' || request.filter.status === 'PENDING') ? html`<p class="meta">${data.scanned} candidate runs were read one by one.</p>` : ''}
${data.capped ? html`<p class="notice">The scan stopped at its cap before the limit: older runs may match too. Narrow the time range to reach them.</p>` : ''}
<h2>Filter</h2>${filterFacts(request.filter)}
${count === 0 ? '' : html`<form method="post" data-needs="runs.operate" action="/console/batches" id="confirm-batch" data-confirm="${label}: ${count} run(s)?">
<input type="hidden" name="csrf" value="${data.csrf}">${carried}<input type="hidden" name="confirm" value="true">
<p>${count > BATCH_CONFIRM_ABOVE ? `More than ${BATCH_CONFIRM_ABOVE} runs: confirming sends the API's confirm: true. ` : ''}The runs are selected again when the batch starts: runs that started or changed meanwhile may be in or out.</p>
<div class="actions"><button type="submit" class="danger">Confirm: ${label.toLowerCase()} ${count} run${count === 1 ? '' : 's'}</button> <a href="/console/runs">Cancel</a></div></form>`}`;
}

function outcomeRow(o: BatchReport['outcomes'][number]): Html {
  const run = (id: string): Html => html`<a href="/console/runs/${encodeURIComponent(id)}"><code>${id}</code></a>`;
  return html`<tr class="outcome-${o.outcome}"><td>${run(o.runId)}</td><td>${o.outcome}</td><td>${o.newRunId ? run(o.newRunId) : ''}</td><td>${o.code ? html`<code>${o.code}</code> ` : ''}${o.message ?? ''}</td></tr>`;
}

/** Whether a batch page refreshes itself (the batch is still selecting or acting). */
export function batchInProgress(report: Pick<BatchReport, 'status'>): boolean {
  return report.status === 'LISTING' || report.status === 'RUNNING';
}

/** A batch's progress: its status, counts and each run's outcome. */
export function batchBody(report: BatchReport, refreshSeconds: number): Html {
  const done = report.succeeded + report.refused + report.failed;
  const running = batchInProgress(report);
  return html`<p><a href="/console/batches">← Batches</a></p>
<h1>Batch: ${BATCH_ACTION_LABELS[report.action]}</h1>
<p><span class="status status-${report.status === 'COMPLETE' ? 'COMPLETE' : report.status === 'FAILED' ? 'FAILED' : 'RUNNING'}" id="batch-status">${report.status}</span>
${running ? html` <span class="meta">This page refreshes every ${refreshSeconds} seconds while the batch runs.</span>` : ''}</p>
${report.stateUnread ? html`<p class="notice">No worker answered just now: the batch goes on, and its progress shows once one does.</p>` : ''}
${report.error ? html`<p class="error" role="alert">${report.error}</p>` : ''}
<dl class="facts" id="batch-facts"><dt>Batch</dt><dd><code>${report.batchId}</code></dd><dt>Requested</dt><dd>${report.requested} by ${report.by}</dd><dt>Limit</dt><dd>${report.limit}</dd>
<dt>Total</dt><dd id="batch-total">${report.status === 'LISTING' ? 'selecting…' : report.total}</dd><dt>Done</dt><dd>${done}${report.total > 0 ? ` of ${report.total}` : ''}</dd>
<dt>Succeeded</dt><dd id="batch-succeeded">${report.succeeded}</dd><dt>Refused</dt><dd id="batch-refused">${report.refused}</dd><dt>Failed</dt><dd id="batch-failed">${report.failed}</dd></dl>
${report.total > 0 ? html`<progress max="${report.total}" value="${done}" aria-label="Runs done">${done} of ${report.total}</progress>` : ''}
<h2>Filter</h2>${filterFacts(report.filter)}
<h2>Runs</h2>
${report.outcomes.length === 0 ? html`<p class="meta">No run has an outcome yet.</p>` : html`<table id="batch-outcomes"><caption class="visually-hidden">Each run's outcome, in the order they finished</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Outcome</th><th scope="col">New run</th><th scope="col">Why</th></tr></thead>
<tbody>${report.outcomes.map(outcomeRow)}</tbody></table>`}`;
}

/** A batch as the recent list shows it (from the audit trail's `run_batch.started` records). */
export interface RecentBatch {
  batchId: string;
  action: string;
  at: string;
  actor: string;
  matched?: number;
}

export function batchesBody(recent: readonly RecentBatch[], extra: { error?: string } = {}): Html {
  return html`<p><a href="/console/runs">← Runs</a></p><h1>Batches</h1>
${extra.error ? html`<p class="error" role="alert">${extra.error}</p>` : ''}
<p class="hint">A batch acts on the runs a filter selects: start one from the runs page (<strong>Act on all matching runs</strong>).</p>
${recent.length === 0 ? html`<p class="meta">No batch was started recently.</p>` : html`<table id="recent-batches"><caption class="visually-hidden">Recent batches, newest first</caption>
<thead><tr><th scope="col">Batch</th><th scope="col">Action</th><th scope="col">Runs matched</th><th scope="col">Started</th><th scope="col">By</th></tr></thead>
<tbody>${recent.map((b) => html`<tr><td><a href="/console/batches/${encodeURIComponent(b.batchId)}"><code>${b.batchId}</code></a></td><td>${b.action}</td><td>${b.matched ?? ''}</td><td>${b.at}</td><td>${b.actor}</td></tr>`)}</tbody></table>`}`;
}
