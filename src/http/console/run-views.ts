/**
 * The console's runs page and run page (docs/console.md). Pure templates: the route gathers the
 * data (routes/console.ts) and these render it.
 */
import type { RunListEntry, RunView } from '../../runs/run-service';
import type { StepOutcome, WaitingOn } from '../../common/run-types';
import type { RunStory, StartedFile } from '../../console/runs';
import { roleHas, type Role } from '../../people/roles';
import { href, html, type Html } from './html';
import { batchForm } from './batch-views';

export const RUN_STATUSES = ['RUNNING', 'PAUSED', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'] as const;
/** The runs filter's choices: every status, and cancelled (FAILED runs an operator cancelled: reasonCode CANCELLED). */
export const RUN_FILTER_STATUSES = [...RUN_STATUSES, 'CANCELLED'] as const;
export const SINCE_CHOICES: ReadonlyArray<{ value: string; label: string; ms: number }> = [
  { value: '1h', label: 'the last hour', ms: 3600_000 },
  { value: '24h', label: 'the last 24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: 'the last 7 days', ms: 7 * 24 * 3600_000 },
  { value: '30d', label: 'the last 30 days', ms: 30 * 24 * 3600_000 },
];

export interface RunsFilterForm {
  workflowId?: string;
  status?: string;
  triggerId?: string;
  since?: string;
}

export interface Named {
  id: string;
  name: string;
}

function option(value: string, label: string, selected: string | undefined): Html {
  return html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`;
}

/** A run's page in the embedded Temporal Web UI (none without one). */
export function temporalUiRunUrl(deps: { temporalUiUrl?: string; config: { temporal: { namespace: string } } }, runId: string): string | undefined {
  return deps.temporalUiUrl ? `${deps.temporalUiUrl}/namespaces/${encodeURIComponent(deps.config.temporal.namespace)}/workflows/${encodeURIComponent(runId)}` : undefined;
}

export function statusBadge(status: string, runId?: string): Html {
  return html`<span class="status status-${status}"${runId ? html` data-run-status="${runId}"` : ''}>${status}</span>`;
}

/** A run's badge: a cancelled run reads CANCELLED (the contract's status is FAILED, its reasonCode says why). */
function runBadge(run: { status: string; reasonCode?: string }, runId?: string): Html {
  if (run.reasonCode !== 'CANCELLED') return statusBadge(run.status, runId);
  return html`<span class="status status-CANCELLED" title="FAILED: cancelled by an operator"${runId ? html` data-run-status="${runId}"` : ''}>CANCELLED</span>`;
}

function when(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="meta">—</span>`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function runsBody(options: {
  filter: RunsFilterForm; workflows: Named[]; triggers: Named[]; runs: RunListEntry[]; liveIds: string[]; error?: string;
  /** the session's CSRF token: the "Act on all matching runs" form (left out for roles without runs.operate) */
  csrf?: string;
}): Html {
  const { filter, workflows, triggers, runs } = options;
  const names = new Map(workflows.map((w) => [w.id, w.name]));
  const live = options.liveIds.length > 0 ? html` data-runs-live="/console/runs/live?ids=${options.liveIds.join(',')}"` : '';
  return html`<h1>Runs</h1>
<form class="filters" method="get" action="/console/runs" aria-label="Filter runs">
<div><label for="f-workflow">Workflow</label><select id="f-workflow" name="workflowId">${option('', 'All workflows', filter.workflowId ?? '')}${workflows.map((w) => option(w.id, w.name, filter.workflowId))}</select></div>
<div><label for="f-status">Status</label><select id="f-status" name="status">${option('', 'Any status', filter.status ?? '')}${RUN_FILTER_STATUSES.map((s) => option(s, s === 'CANCELLED' ? 'CANCELLED (failed: cancelled)' : s, filter.status))}</select></div>
<div><label for="f-trigger">Trigger</label><select id="f-trigger" name="triggerId">${option('', 'Any trigger', filter.triggerId ?? '')}${triggers.map((t) => option(t.id, t.name, filter.triggerId))}</select></div>
<div><label for="f-since">Started in</label><select id="f-since" name="since">${option('', 'any time', filter.since ?? '')}${SINCE_CHOICES.map((c) => option(c.value, c.label, filter.since))}</select></div>
<div><button type="submit">Filter</button></div>
</form>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
${options.csrf === undefined ? '' : batchForm({ csrf: options.csrf, values: filter })}
<p class="meta"><a href="/console/batches">Recent batches</a></p>
${runs.length === 0 ? html`<p class="notice">No runs match.</p>` : html`<table${live}>
<caption class="visually-hidden">Runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Workflow</th><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Ended</th></tr></thead>
<tbody>${runs.map((r) => html`<tr>
<td><a href="/console/runs/${encodeURIComponent(r.runId)}"><code>${r.runId}</code></a></td>
<td>${names.get(r.automationId) ?? r.automationId}</td><td>${r.automationVersion}</td>
<td>${runBadge(r, r.runId)}</td><td>${when(r.started)}</td><td>${when(r.closed)}</td></tr>`)}</tbody></table>`}
<p class="meta">Open runs are listed as RUNNING until the live update tells PAUSED and PENDING apart (filtering on PAUSED or PENDING asks each of the 50 newest open runs). A cancelled run is FAILED in the API, with reason code CANCELLED. Statuses update live.</p>`;
}

export interface StepFiles {
  /** `name`: what it downloads as (the designated output's own file name, else step-N-output.txt) */
  output: { url: string; size: number; name: string };
  stdout: { url: string; size: number; text?: string; whole?: boolean };
}

export interface RunPageData {
  view: RunView;
  csrf: string;
  /** signed download links and the beginning of stdout, per outcome (same order as view.outcomes) */
  files: StepFiles[];
  temporalUiUrl?: string;
  /** the session may sign in to the codec (the instance administrator's): the link goes through the console's codec sign-in */
  codecSignIn?: boolean;
  lastEventId: number;
  notice?: string;
  error?: string;
  /** what the run was started with and the runs it started (its files with signed links, where still stored) */
  story: Omit<RunStory, 'files'> & { files: (StartedFile & { url?: string })[] };
  /** the session's role: only the actions it may take are offered */
  role: Role;
  /** a member's session: they decide as themselves */
  memberEmail?: string;
  triggerName?: string;
  designated?: { stepIndex: number; fileName: string };
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

function waitingBody(waiting: WaitingOn, data: RunPageData): Html {
  const { view, csrf } = data;
  const action = `/console/runs/${encodeURIComponent(view.runId)}`;
  if (waiting.kind === 'timer') {
    return html`<section class="panel" aria-labelledby="waiting"><h2 id="waiting">Waiting</h2><p>Step ${waiting.stepPath ?? waiting.stepIndex} waits until ${when(waiting.resumeAt)}.</p></section>`;
  }
  if (waiting.kind === 'operator') {
    return html`<section class="panel" aria-labelledby="waiting"><h2 id="waiting">Paused by an operator</h2><p>${waiting.by} paused this run at ${when(waiting.at)}${waiting.reason ? html`: ${waiting.reason}` : ''}. It starts no step until it is unpaused.</p></section>`;
  }
  if (waiting.kind === 'slot') {
    const place = waiting.position === undefined ? '' : ` (place ${waiting.position} in the queue)`;
    return html`<section class="panel" aria-labelledby="waiting"><h2 id="waiting">Waiting for a slot</h2><p>At most ${waiting.limit} runs of this ${waiting.scope} may be in progress; this one starts when a slot frees${place}.</p></section>`;
  }
  const approvals = waiting.decisions.filter((d) => d.decision === 'approve').length;
  const undecided = waiting.approvers.filter((a) => !waiting.decisions.some((d) => d.approver.toLowerCase() === a.toLowerCase()));
  const stepName = view.memo.steps[waiting.stepIndex - 1]?.name ?? `step ${waiting.stepIndex}`;
  return html`<section class="panel" aria-labelledby="waiting"><h2 id="waiting">Waiting for approval: ${stepName}</h2>
${waiting.message ? html`<blockquote class="notice">${waiting.message}</blockquote>` : ''}
<dl class="facts"><dt>Approvals</dt><dd>${approvals} of ${waiting.required} needed</dd><dt>Decide by</dt><dd>${when(waiting.deadline)}</dd>
<dt>Approvers</dt><dd>${waiting.approvers.length ? waiting.approvers.join(', ') : 'any administrator'}</dd></dl>
${waiting.decisions.length ? html`<h3>Decisions</h3><ul>${waiting.decisions.map((d) => html`<li>${d.approver}: <strong>${d.decision}</strong> at ${when(d.at)} via ${d.via}${d.comment ? html` — “${d.comment}”` : ''}</li>`)}</ul>` : ''}
${decisionForm(waiting, data, undecided, action, csrf)}</section>`;
}

/**
 * The decision form, for a session that may decide: an administrator's (admin token) picks which
 * approver it decides for; a member decides as themselves (no list of the others), and only on an
 * approval that names them (or names none).
 */
function decisionForm(waiting: Extract<WaitingOn, { kind: 'approval' }>, data: RunPageData, undecided: string[], action: string, csrf: string): Html {
  if (!roleHas(data.role, 'approvals.decide')) return html`<p class="meta" id="no-decision">Your role (${data.role}) cannot decide approvals.</p>`;
  const me = data.memberEmail?.toLowerCase();
  if (me && waiting.approvers.length > 0 && !waiting.approvers.some((a) => a.toLowerCase() === me)) {
    return html`<p class="meta" id="no-decision">This approval is not addressed to you (${data.memberEmail}).</p>`;
  }
  const who = data.memberEmail
    ? html`<p class="hint" id="deciding-as">You decide as <strong>${data.memberEmail}</strong>; the decision is recorded as yours.</p>`
    : undecided.length > 0 ? html`<label for="approver">Decide as</label><select id="approver" name="approver">${undecided.map((a) => html`<option value="${a}">${a}</option>`)}</select>
<p class="hint">The console decides for one of the step's approvers; the decision records your organization's console as its actor.</p>` : '';
  return html`<form method="post" action="${href(`${action}/decision`)}">${csrfField(csrf)}
<input type="hidden" name="stepIndex" value="${waiting.stepIndex}">
${who}
<label for="comment">Comment (optional)</label><textarea id="comment" name="comment" maxlength="2000"></textarea>
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="reject" type="submit" name="decision" value="reject">Reject</button></div>
</form>`;
}

/** What became of the decisions sent through the API, links, the console and MCP (those recorded while the run did not answer included). */
function decisionOutcomesBody(view: RunView): Html {
  return html`<section class="panel" aria-labelledby="decision-outcomes"><h2 id="decision-outcomes">Decisions sent</h2><ul>${(view.decisionOutcomes ?? []).map((o) => html`<li><code>${o.decisionId}</code>: ${o.decision} for ${o.approver} via ${o.via}${o.stepIndex === undefined ? '' : html` on step ${o.stepIndex}`}, <strong>${o.outcome}</strong> at ${when(o.at)}${o.outcome === 'refused' ? html` (${o.refusal ?? 'refused'}: ${o.message ?? ''})` : ''}</li>`)}</ul></section>`;
}

function stepItem(index: string, data: RunPageData): Html {
  const { view } = data;
  const step = view.steps[index];
  if (!step) return html``;
  const outcomes = view.outcomes.map((o, i) => ({ o, i })).filter(({ o }) => String(o.stepIndex) === index && o.stepPath === undefined);
  const last: { o: StepOutcome; i: number } | undefined = outcomes[outcomes.length - 1];
  const files = last ? data.files[last.i] : undefined;
  return html`<li class="s-${step.status}"><h3>${index}. ${step.name} <span class="meta">(${step.type})</span> ${statusBadge(step.status)}</h3>
${step.progress ? html`<p class="meta">${step.progress}</p>` : ''}
${data.story.stepInputs[index] ? html`<details><summary>Input (as defined)</summary><pre>${data.story.stepInputs[index]}</pre></details>` : ''}
${step.reusedFrom ? html`<p class="meta">Result reused from run <a href="/console/runs/${encodeURIComponent(step.reusedFrom)}">${step.reusedFrom}</a></p>` : ''}
${last ? html`<p class="meta">Took ${duration(last.o.duration)} · exit code ${last.o.exitCode} · ${last.o.resultType}</p>
${last.o.error ? html`<p class="error">${last.o.error}</p>` : ''}
<details${last.o.status !== 'COMPLETE' ? html` open` : ''}><summary>Result${last.o.truncated ? ' (beginning)' : ''}</summary><pre>${last.o.result}</pre></details>
${files ? html`${files.stdout.text ? html`<details><summary>stdout${files.stdout.whole ? '' : ' (beginning)'}</summary><pre>${files.stdout.text}</pre></details>` : ''}
<p>Files: <a href="${href(files.output.url)}" download="${files.output.name}"${data.designated?.stepIndex === Number(index) ? html` class="designated" id="designated-output"` : ''}>${data.designated?.stepIndex === Number(index) ? html`${files.output.name} <span class="meta">(the designated output)</span>` : 'output.txt'}</a> (${files.output.size} bytes) ·
<a href="${href(files.stdout.url)}" download="step-${index}-stdout.txt">stdout.txt</a> (${files.stdout.size} bytes)</p>` : ''}` : ''}
</li>`;
}

/** Who started a run, and through what, from its memo (`startedBy` names an API key, a form, a tool, a webhook, ...). */
export function startedThrough(memo: RunView['memo']): string {
  const by = memo.startedBy;
  if (memo.type === 'SCHEDULE') return 'the trigger\'s schedule';
  if (memo.parentRunId) return 'a trigger step of another run';
  if (by.startsWith('form:')) return 'a hosted form';
  if (by.startsWith('tool:')) return `the MCP workflow tool ${by.slice('tool:'.length)}`;
  if (by.startsWith('webhook:')) return `a verified webhook (${by.slice('webhook:'.length)})`;
  if (by.startsWith('shaped:')) return 'a debounced or batched webhook delivery';
  return 'the trigger API (an API key)';
}

function inputsPanel(story: RunPageData['story']): Html {
  const inputs = story.inputs;
  return html`<section class="panel" aria-labelledby="run-inputs"><h2 id="run-inputs">Inputs</h2>
${inputs === undefined ? html`<p class="notice">${story.inputsNote ?? 'The inputs cannot be read now.'}</p>`
    : inputs.length === 0 ? html`<p class="meta">The run was started without inputs.</p>`
      : html`<dl class="facts" id="inputs">${inputs.map((i) => html`<dt>${i.name}</dt><dd>${i.secret ? html`<span class="masked" title="the input schema marks it secret">•••••• (secret)</span>` : html`<code>${i.text ?? ''}</code>`}</dd>`)}</dl>`}
${story.files.length ? html`<h3>Files it was started with</h3><ul id="started-files">${story.files.map((f) => html`<li>${f.url ? html`<a href="${href(f.url)}" download="${f.filename}">${f.filename}</a>` : html`${f.filename} <span class="meta">(no longer stored)</span>`} <span class="meta">${f.contentType}, ${f.size} bytes</span></li>`)}</ul>` : ''}
</section>`;
}

function chainPanel(view: RunView, story: RunPageData['story']): Html {
  const parent = view.memo.parentRunId;
  if (!parent && story.children.length === 0 && !view.memo.origin) return html``;
  return html`<section class="panel" aria-labelledby="run-chain"><h2 id="run-chain">Chain</h2><dl class="facts">
${parent ? html`<dt>Parent</dt><dd><a href="/console/runs/${encodeURIComponent(parent)}"><code>${parent}</code></a> (its trigger step started this run)</dd>` : ''}
${view.memo.origin ? html`<dt>Started from</dt><dd>${view.memo.origin.kind} of <a href="/console/runs/${encodeURIComponent(view.memo.origin.runId)}"><code>${view.memo.origin.runId}</code></a></dd>` : ''}
${story.children.length ? html`<dt>Runs it started</dt><dd><ul id="child-runs">${story.children.map((c) => html`<li><a href="/console/runs/${encodeURIComponent(c.runId)}"><code>${c.runId}</code></a> ${c.automationId} ${runBadge(c)}</li>`)}</ul></dd>` : ''}
</dl></section>`;
}

export function runBody(data: RunPageData): Html {
  const { view, csrf } = data;
  const action = `/console/runs/${encodeURIComponent(view.runId)}`;
  const ended = view.status === 'COMPLETE' || view.status === 'FAILED' || view.status === 'TIMEOUT';
  const order = Object.keys(view.steps).sort((a, b) => Number(a) - Number(b));
  const temporal = !data.temporalUiUrl ? ''
    : data.codecSignIn ? html` · <form class="inline run-link" method="post" action="${href(`${action}/temporal-ui`)}">${csrfField(csrf)}<button type="submit" class="link" id="open-temporal-ui" title="signs this browser in to the codec for an hour, so the Web UI shows the run's data decoded">Open in the Temporal Web UI</button></form>`
      : html` · <a href="${href(data.temporalUiUrl)}" id="open-temporal-ui" title="its data shows sealed: decoding needs the instance administrator's console session">Open in the Temporal Web UI</a>`;
  const operate = roleHas(data.role, 'runs.operate');
  // a cancelled or terminated run is not offered a resume from "the failed step": none failed
  const resumable = (view.status === 'FAILED' || view.status === 'TIMEOUT') && view.reasonCode === undefined;
  const trigger = html`<code>${view.memo.triggerId}</code>${data.triggerName ? html` (${data.triggerName})` : ''}`;
  return html`<p><a href="/console/runs">← Runs</a></p>
<div${ended ? '' : html` data-run-stream="${action}/events" data-last-event="${data.lastEventId}"`}>
<h1>${view.memo.automationName} <span class="meta">version ${view.memo.automationVersion}${view.memo.sourceCommit ? ` · commit ${view.memo.sourceCommit.slice(0, 12)}` : ''}</span></h1>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<dl class="facts"><dt>Status</dt><dd id="run-status">${runBadge(view)}${view.reasonCode === 'CANCELLED' ? html` <span class="meta">(the API reports FAILED with reason code CANCELLED)</span>` : ''}</dd><dt>Run</dt><dd><code>${view.runId}</code>${temporal}</dd>
<dt>Started</dt><dd>${when(view.memo.started)} by <code>${view.memo.startedBy}</code> through ${startedThrough(view.memo)}, trigger ${trigger}</dd>
${view.error ? html`<dt>${view.reasonCode === 'CANCELLED' ? 'Ended' : 'Error'}</dt><dd>${view.error}</dd>` : ''}</dl>
${view.stateUnread ? html`<p class="notice" role="status">This run does not answer right now (its workers are away or busy): what it waits on cannot be shown. Decisions and cancellations sent meanwhile are recorded and take effect when it resumes.</p>` : ''}
${view.waitingOn ? waitingBody(view.waitingOn, data) : ''}
${view.decisionOutcomes?.length ? decisionOutcomesBody(view) : ''}
${operate ? html`<div class="actions">
${!ended ? html`<form method="post" action="${href(`${action}/cancel`)}" data-confirm="Cancel this run?">${csrfField(csrf)}<button class="danger" type="submit">Cancel run</button></form>` : ''}
${ended ? html`<form method="post" action="${href(`${action}/rerun`)}">${csrfField(csrf)}<label for="rerun-version">Re-run with</label>
<select id="rerun-version" name="version"><option value="latest">the latest version</option><option value="same">the same version</option></select> <button type="submit" class="secondary">Re-run</button></form>` : ''}
${resumable ? html`<form method="post" action="${href(`${action}/resume`)}">${csrfField(csrf)}<button type="submit" class="secondary">Resume from the failed step</button></form>` : ''}
</div>` : ''}
${inputsPanel(data.story)}
${chainPanel(view, data.story)}
<h2>Steps</h2>
<ol class="timeline">${order.map((index) => stepItem(index, data))}</ol>
</div>`;
}
