/** The console's workflows page and a workflow's page (docs/console.md "Workflows"). */
import type { TriggerFormRecord, TriggerRecord, TriggerScheduleRecord, WorkflowRecord } from '../../registry';
import type { WorkflowAsCode } from '../../management';
import type { ScheduleState } from '../../schedules/schedule-service';
import { fieldsHtml, type FormField } from './form-fields';
import { html, type Html } from './html';

/** The prefix of a schedule's input fields in the new-trigger form (they sit beside the trigger's own fields; not a dot, which the form parser reads as nesting). */
export const SCHEDULE_INPUT_PREFIX = 'input:';

export function workflowsBody(workflows: Omit<WorkflowRecord, 'draft' | 'versions'>[], notice?: string): Html {
  return html`<h1>Workflows</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<p><a class="button" data-needs="workflows.write" href="/console/workflows/new">New workflow</a></p>
${workflows.length === 0 ? html`<p class="notice">No workflows yet: create one here, with the CLI or with <code>POST /api/v1/workflows</code>.</p>` : html`<table>
<caption class="visually-hidden">Workflows</caption>
<thead><tr><th scope="col">Workflow</th><th scope="col">Published version</th><th scope="col">Draft changed</th></tr></thead>
<tbody>${workflows.map((w) => html`<tr><td><a href="/console/workflows/${encodeURIComponent(w.id)}">${w.name}</a> <span class="meta"><code>${w.id}</code></span></td>
<td>${w.publishedVersion ?? html`<span class="meta">not published</span>`}</td><td>${w.updatedAt}</td></tr>`)}</tbody></table>`}`;
}

/** A trigger as the workflow's page lists it: its schedule, and Temporal's state of that schedule when it answered. */
export interface TriggerRow {
  trigger: TriggerRecord;
  schedule?: TriggerScheduleRecord;
  state?: ScheduleState;
  /** its hosted forms (their URLs are shown once, when made) */
  forms?: TriggerFormRecord[];
}

function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

function scheduleText(row: TriggerRow): Html {
  const { schedule, state } = row;
  if (!schedule) return html``;
  const when = [...(schedule.config.cron ?? []).map((c) => `cron ${c}`), ...(schedule.config.interval ? [`every ${schedule.config.interval.every}`] : [])].join(', ');
  const paused = state ? state.paused : schedule.paused;
  const inputs = schedule.config.inputs;
  return html`<br>Schedule: ${when}${schedule.config.cron ? html` (${schedule.config.timeZone})` : ''}, <strong data-schedule-state="${row.trigger.id}">${paused ? 'paused' : 'active'}</strong>${state ? '' : html` <span class="meta">(live state unavailable)</span>`}${state?.nextFireTimes[0] && !paused ? html` <span class="meta">next ${state.nextFireTimes[0]}</span>` : ''}${state?.note ? html` <span class="meta">${state.note}</span>` : ''}
${inputs && Object.keys(inputs).length ? html`<br>Its runs get inputs: <span class="schedule-inputs">${Object.keys(inputs).join(', ')}</span> <span class="meta">(values not shown: they may be secret)</span>` : ''}`;
}

function triggerItem(row: TriggerRow, csrf: string, publicUrl: string): Html {
  const t = row.trigger;
  const base = `/console/triggers/${encodeURIComponent(t.id)}`;
  const paused = row.state ? row.state.paused : row.schedule?.paused;
  return html`<li id="trigger-${t.id}"><a href="${base}"><code>${t.id}</code></a>${t.name ? html` ${t.name}` : ''}: <code>POST ${publicUrl}/ext/triggers/${t.id}</code>${t.disabledAt ? html` <strong>disabled</strong>` : ''}${t.tool ? html`<br>Tool <code>${t.tool.name}</code>` : ''}${t.verify ? html`<br>Verified: <strong>${t.verify.preset}</strong> signature` : ''}${t.shaping ? html`<br>${'debounce' in t.shaping ? 'Debounced' : 'Batched'}` : ''}${scheduleText(row)}
<div class="actions">${row.schedule ? html`<form method="post" data-needs="triggers.write" action="${base}/schedule/${paused ? 'resume' : 'pause'}">${csrfField(csrf)}<button type="submit" class="secondary">${paused ? 'Resume schedule' : 'Pause schedule'}</button></form>
<a class="button secondary-link" data-needs="triggers.write" href="${base}/schedule">Edit the inputs</a>` : ''}
<form method="post" data-needs="triggers.write" action="${base}/forms" class="inline">${csrfField(csrf)}<label><input type="checkbox" name="wait" value="true"> shows the result</label> <button type="submit" class="secondary">New hosted-form link</button></form>
<form method="post" data-needs="triggers.write" action="${base}/delete" data-confirm="Delete trigger ${t.id}? Its URL stops working.">${csrfField(csrf)}<button type="submit" class="danger">Delete trigger</button></form></div>
${formsList(row, csrf)}</li>`;
}

function formsList(row: TriggerRow, csrf: string): Html {
  const live = (row.forms ?? []).filter((f) => f.revokedAt === null);
  if (live.length === 0) return html``;
  const base = `/console/triggers/${encodeURIComponent(row.trigger.id)}/forms`;
  return html`<ul class="forms">${live.map((f) => html`<li>Hosted form <code>${f.id}</code>${f.wait ? ' (shows the result)' : ''}, made ${f.createdAt}
<form method="post" data-needs="triggers.write" action="${base}/${encodeURIComponent(f.id)}/revoke" class="inline" data-confirm="Revoke this form? Its URL stops working.">${csrfField(csrf)}<button type="submit" class="danger">Revoke</button></form></li>`)}</ul>`;
}

/** The page that shows a new hosted form's URL, once (flowgate keeps only its hash). */
export function formCreatedBody(options: { url: string; triggerId: string; workflowId: string; wait: boolean }): Html {
  return html`<p><a href="/console/workflows/${encodeURIComponent(options.workflowId)}">← The workflow</a></p>
<h1>A hosted form for trigger <code>${options.triggerId}</code></h1>
<div class="notice" role="status"><p>Copy its URL now: it is shown this once (flowgate keeps only its hash). Whoever has it can start runs${options.wait ? ' and see their results' : ''}.</p>
<p><a id="form-url" href="${options.url}">${options.url}</a></p></div>`;
}

function newTriggerForm(action: string, csrf: string, inputFields: FormField[]): Html {
  return html`<details class="panel" data-needs="triggers.write"><summary>New trigger</summary>
<form method="post" data-needs="triggers.write" action="${action}/triggers">${csrfField(csrf)}
<label for="trigger-name">Name (optional)</label><input id="trigger-name" name="name" type="text" maxlength="200">
<fieldset><legend>Kind</legend>
<label><input type="radio" name="kind" value="http" checked> HTTP: started by <code>POST /ext/triggers/…</code></label>
<label><input type="radio" name="kind" value="schedule"> Scheduled: also started on a schedule</label>
<label><input type="radio" name="kind" value="tool"> Tool: also offered as a tool of the organization's <code>workflows</code> server</label></fieldset>
<label for="trigger-cron">Cron expression (scheduled)</label><input id="trigger-cron" name="cron" type="text" placeholder="0 9 * * 1-5">
<label for="trigger-every">or every (scheduled)</label><input id="trigger-every" name="every" type="text" placeholder="15m">
${inputFields.length ? html`<fieldset id="schedule-inputs"><legend>Inputs of its scheduled runs (scheduled)</legend>
<p class="hint">Fields of the published version's input schema; each scheduled run gets these inputs.</p>
${fieldsHtml(inputFields.map((f) => ({ ...f, name: `${SCHEDULE_INPUT_PREFIX}${f.name}`, required: false })), false)}</fieldset>` : html`<p class="hint">The published version's input schema names no inputs: scheduled runs get none.</p>`}
<label for="trigger-tool">Tool name (tool)</label><input id="trigger-tool" name="toolName" type="text" maxlength="64">
<label for="trigger-tool-description">Tool description (tool)</label><input id="trigger-tool-description" name="toolDescription" type="text" maxlength="2000">
<div class="actions"><button type="submit">Create trigger</button></div></form></details>`;
}

/** Where the workflow came from when definitions as code applied it, and whether it was changed here since (docs/definitions-as-code.md#drift). */
function asCodeFact(asCode: WorkflowAsCode): Html {
  const commit = asCode.commit ? html` at commit <code>${asCode.commit.slice(0, 12)}</code>` : '';
  return html`<dt>Defined as code</dt><dd>applied from ${asCode.source ? html`<code>${asCode.source}</code>` : 'a folder'}${commit} on ${asCode.appliedAt}${asCode.drifted
    ? html`<p class="error" role="status">Changed outside the folder since that apply: the next <code>flowgate plan</code> shows it as drift (export it into the folder to keep the change).</p>` : ''}</dd>`;
}

export function workflowBody(options: { workflow: WorkflowRecord; triggers: TriggerRow[]; csrf: string; publicUrl: string; notice?: string; error?: string; inputFields?: FormField[]; asCode?: WorkflowAsCode }): Html {
  const { workflow, triggers, csrf } = options;
  const action = `/console/workflows/${encodeURIComponent(workflow.id)}`;
  const latest = workflow.versions[workflow.versions.length - 1];
  return html`<p><a href="/console/workflows">← Workflows</a></p>
<h1>${workflow.name}</h1>
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<dl class="facts"><dt>ID</dt><dd><code>${workflow.id}</code></dd>
<dt>Published</dt><dd>${workflow.publishedVersion === null ? 'not yet' : html`version ${workflow.publishedVersion}`}</dd>
<dt>Versions</dt><dd>${workflow.versions.length ? workflow.versions.join(', ') : 'none'}</dd>
<dt>Draft changed</dt><dd>${workflow.updatedAt}</dd>${options.asCode ? asCodeFact(options.asCode) : ''}</dl>
<div class="actions"><form method="post" data-needs="workflows.write" action="${action}/publish">${csrfField(csrf)}<button type="submit">Publish the draft as version ${(latest ?? 0) + 1}</button></form>
<a class="button secondary-link" data-needs="workflows.write" href="${action}/draft">Edit the draft</a>
${latest === undefined ? '' : html`<a class="button secondary-link" href="${action}/diff">Compare versions</a>`}
<a class="button secondary-link" href="/console/runs?workflowId=${encodeURIComponent(workflow.id)}">Its runs</a>
<form method="post" data-needs="workflows.write" action="${action}/delete" data-confirm="Delete this workflow with its versions, triggers and schedules? Runs already started go on.">${csrfField(csrf)}<button type="submit" class="danger">Delete the workflow</button></form></div>
<h2>Triggers</h2>
${triggers.length === 0 ? html`<p class="meta">No triggers.</p>` : html`<ul class="triggers">${triggers.map((row) => triggerItem(row, csrf, options.publicUrl))}</ul>`}
${latest === undefined ? html`<p class="meta">Publish the workflow to give it triggers.</p>` : newTriggerForm(action, csrf, options.inputFields ?? [])}
<h2>Draft</h2>
<pre>${JSON.stringify(workflow.draft, null, 2)}</pre>`;
}
