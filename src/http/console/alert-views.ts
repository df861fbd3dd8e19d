/**
 * The console's alert rules (docs/console.md "Alert rules"), admins only: the list with each
 * rule's Enable or Disable and Delete, the create and edit form (every kind's and
 * destination's fields, each refusal beside its field; src/console/alert-form.ts reads it into
 * the API's body) and a rule's recent deliveries (its `alert.*` audit records). Pure templates.
 */
import { ALERT_RULE_KINDS } from '../../common/alerts';
import { ALERT_DESTINATIONS, type AlertFormField, type AlertFormValues } from '../../console/alert-form';
import type { AlertRuleView } from '../../contracts/alert-bodies';
import { html, type Html } from './html';

export interface Choice {
  id: string;
  name: string;
}

export interface AlertFormPage {
  csrf: string;
  values: AlertFormValues;
  errors: Partial<Record<AlertFormField, string>>;
  /** absent: a new rule */
  rule?: { id: string; name: string };
  workflows: Choice[];
  mailConnections: Choice[];
  triggers: Choice[];
  /** what the action that led here did */
  notice?: string;
}

const LABELS: Record<AlertFormField, string> = {
  name: 'Name', kind: 'Watches', workflowId: 'Workflow', cooldownSeconds: 'Cooldown (seconds)', windowSeconds: 'Window (seconds)', threshold: 'Failures (at least)',
  ratio: 'or share failed (0-1]', minRuns: 'Runs ended first (with a share)', afterSeconds: 'Waiting longer than (seconds)', percent: 'Budget used (percent)',
  destination: 'Delivers to', url: 'Webhook URL', connectionId: 'Mail connection', to: 'Recipients', triggerId: 'Error-handler trigger', enabled: 'Enabled',
};
const HINTS: Partial<Record<AlertFormField, string>> = {
  cooldownSeconds: 'Empty: the window (failure rate), else 300: at most one delivery per this many seconds.',
  threshold: 'A failure-rate rule names exactly one of the two: a count of failures, or a share of the runs that ended in the window.',
  minRuns: 'Empty: 10.',
  url: 'POSTed the alert as JSON, signed like completion callbacks with the organization\'s webhook secret.',
  to: 'One address a line, or comma-separated (at most 20).',
  triggerId: 'Its run gets the failed run\'s context (runId, workflowId, error) as inputs.',
};
const KIND_LABELS: Record<(typeof ALERT_RULE_KINDS)[number], string> = {
  run_failed: 'run_failed: every failure', failure_rate: 'failure_rate: failures within a window', approval_waiting: 'approval_waiting: a run waiting at an approval too long',
  budget: 'budget: the monthly budget nearly spent',
};

function field(name: AlertFormField, p: AlertFormPage, control: Html): Html {
  const error = p.errors[name];
  return html`<div class="field${error ? ' invalid' : ''}"><label for="alert-${name}">${LABELS[name]}</label>${control}
${HINTS[name] ? html`<p class="hint" id="alert-${name}-hint">${HINTS[name]}</p>` : ''}${error ? html`<p class="error" id="alert-${name}-error">${error}</p>` : ''}</div>`;
}

function aria(name: AlertFormField, p: AlertFormPage): Html {
  const error = p.errors[name];
  const described = [HINTS[name] ? `alert-${name}-hint` : '', error ? `alert-${name}-error` : ''].filter((x) => x !== '').join(' ');
  return html`${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
}

function input(name: AlertFormField, p: AlertFormPage, type = 'text'): Html {
  return field(name, p, html`<input id="alert-${name}" name="${name}" type="${type}" value="${p.values[name] ?? ''}"${aria(name, p)}>`);
}

function select(name: AlertFormField, p: AlertFormPage, options: readonly Choice[], empty?: string): Html {
  const current = p.values[name] ?? '';
  // a value typed or stored that is not among the choices stays selectable (the service says why it is refused)
  const all = current !== '' && !options.some((o) => o.id === current) ? [...options, { id: current, name: current }] : options;
  return field(name, p, html`<select id="alert-${name}" name="${name}"${aria(name, p)}>${empty === undefined ? '' : html`<option value="">${empty}</option>`}
${all.map((o) => html`<option value="${o.id}"${o.id === current ? html` selected` : ''}>${o.name}</option>`)}</select>`);
}

export function alertFormBody(p: AlertFormPage): Html {
  const editing = p.rule;
  const action = editing ? `/console/alerts/${encodeURIComponent(editing.id)}` : '/console/alerts/new';
  const problems = Object.keys(p.errors).length;
  const inKind = (kind: (typeof ALERT_RULE_KINDS)[number]): string => `Only for ${kind}`;
  return html`<p><a href="/console/alerts">← Alert rules</a></p>
<h1>${editing ? html`Edit ${editing.name}` : 'New alert rule'}</h1>
${p.notice ? html`<p class="notice" role="status" id="alert-notice">${p.notice}</p>` : ''}
${problems > 0 ? html`<p class="error" role="alert" id="form-problems">${problems === 1 ? 'One field needs' : `${problems} fields need`} a change: see below. Nothing was saved.</p>` : ''}
<form method="post" action="${action}" data-needs="org.manage" class="agent-form" id="alert-form" novalidate>
<input type="hidden" name="csrf" value="${p.csrf}">
${input('name', p)}
${select('kind', p, ALERT_RULE_KINDS.map((k) => ({ id: k, name: KIND_LABELS[k] })))}
<p class="hint">Only the fields of the kind chosen are read; a rule's kind cannot change once it is created.</p>
<fieldset><legend>Which runs</legend>${select('workflowId', p, p.workflows, 'every workflow')}${input('cooldownSeconds', p, 'number')}</fieldset>
<fieldset><legend>${inKind('failure_rate')}</legend>${input('windowSeconds', p, 'number')}${input('threshold', p, 'number')}${input('ratio', p)}${input('minRuns', p, 'number')}</fieldset>
<fieldset><legend>${inKind('approval_waiting')}</legend>${input('afterSeconds', p, 'number')}</fieldset>
<fieldset><legend>${inKind('budget')}</legend>${input('percent', p)}</fieldset>
<fieldset><legend>Delivery</legend>${select('destination', p, ALERT_DESTINATIONS.map((d) => ({ id: d, name: d === 'workflow' ? 'workflow: start an error-handler run' : d === 'email' ? 'email: through a mail connection' : 'webhook: a signed POST' })))}
${input('url', p, 'url')}${select('connectionId', p, p.mailConnections, '—')}${field('to', p, html`<textarea id="alert-to" name="to"${aria('to', p)}>${p.values.to ?? ''}</textarea>`)}
${select('triggerId', p, p.triggers, '—')}</fieldset>
<div class="field"><label><input type="checkbox" name="enabled" value="true"${p.values.enabled === 'true' ? html` checked` : ''}> Enabled</label></div>
<div class="actions"><button type="submit">${editing ? 'Save the rule' : 'Create the rule'}</button></div></form>`;
}

/** What a rule watches, in a line. */
export function conditionText(rule: AlertRuleView): string {
  const c = rule.condition;
  const of = 'workflowId' in c && c.workflowId ? ` of ${c.workflowId}` : '';
  switch (c.kind) {
    case 'run_failed': return `a failed run${of}`;
    case 'failure_rate': return c.threshold !== undefined ? `${c.threshold} failures${of} within ${c.windowSeconds}s` : `${c.ratio} of runs${of} failed within ${c.windowSeconds}s`;
    case 'approval_waiting': return `a run${of} waiting at an approval over ${c.afterSeconds}s`;
    case 'budget': return `${c.percent}% of the monthly budget used`;
  }
}

/** Where a rule delivers, in a line. */
export function destinationText(rule: AlertRuleView): string {
  const d = rule.destination;
  if (d.type === 'webhook') return `webhook ${d.url}`;
  if (d.type === 'email') return `e-mail to ${d.to.join(', ')} through ${d.connectionId}`;
  return `error-handler run through trigger ${d.triggerId}`;
}

export function alertsBody(data: { rules: AlertRuleView[]; csrf: string; notice?: string; error?: string }): Html {
  const { rules, csrf } = data;
  return html`<h1>Alert rules</h1>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<p><a class="button" id="new-alert" data-needs="org.manage" href="/console/alerts/new">New alert rule</a></p>
<p class="hint">A rule watches run outcomes (a failure, a failure rate, a run waiting at an approval, the monthly budget) and delivers to a signed webhook, an e-mail or an error-handler workflow, deduplicated and rate-limited.</p>
${rules.length === 0 ? html`<p class="meta">No alert rules.</p>` : html`<table id="alert-rules"><caption class="visually-hidden">Alert rules</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Watches</th><th scope="col">Delivers to</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
<tbody>${rules.map((r) => {
    const base = `/console/alerts/${encodeURIComponent(r.id)}`;
    return html`<tr id="alert-${r.id}"><td><a href="${base}">${r.name}</a> <span class="meta"><code>${r.id}</code></span></td><td>${conditionText(r)}</td><td>${destinationText(r)}</td><td>${r.enabled ? 'enabled' : 'disabled'}</td>
<td><div class="actions"><form method="post" data-needs="org.manage" action="${base}/${r.enabled ? 'disable' : 'enable'}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="secondary">${r.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" data-needs="org.manage" action="${base}/delete" data-confirm="Delete the alert rule ${r.name}?"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger">Delete</button></form></div></td></tr>`;
  })}</tbody></table>`}`;
}

/** One delivery of a rule, from its audit record. */
export interface AlertDeliveryRow {
  at: string;
  action: string;
  details: Record<string, unknown>;
}

export function deliveriesSection(rows: readonly AlertDeliveryRow[]): Html {
  const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  return html`<section class="panel" aria-labelledby="deliveries"><h2 id="deliveries">Recent deliveries</h2>
${rows.length === 0 ? html`<p class="meta">No delivery yet.</p>` : html`<table id="alert-deliveries"><thead><tr><th scope="col">When</th><th scope="col">Outcome</th><th scope="col">To</th><th scope="col">Runs</th><th scope="col">About</th></tr></thead>
<tbody>${rows.map((r) => {
    const { runId, handlerRunId, error } = r.details;
    return html`<tr><td>${r.at}</td><td>${r.action === 'alert.delivered' ? 'delivered' : html`<span class="error">failed</span>`}</td><td>${text(r.details.destination)}</td><td>${text(r.details.count)}</td>
<td>${typeof runId === 'string' ? html`run <a href="/console/runs/${encodeURIComponent(runId)}"><code>${runId}</code></a>` : text(r.details.period)}${typeof handlerRunId === 'string' ? html`; handler run <a href="/console/runs/${encodeURIComponent(handlerRunId)}"><code>${handlerRunId}</code></a>` : ''}${typeof error === 'string' ? html`<br><span class="error">${error}</span>` : ''}</td></tr>`;
  })}</tbody></table>`}</section>`;
}
