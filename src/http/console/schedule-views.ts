/**
 * The edit page of a schedule's inputs (docs/console.md "Workflows"): the fields of the published
 * version's input schema, as on the new-trigger form, pre-filled with the inputs the schedule runs
 * with (a secret field empty: left blank, it keeps its value), each refusal beside its field.
 */
import type { TriggerRecord, TriggerScheduleRecord } from '../../registry';
import type { ScheduleState } from '../../schedules/schedule-service';
import { fieldsHtml, type FormField } from './form-fields';
import { html, type Html } from './html';
import { SCHEDULE_INPUT_PREFIX } from './workflow-views';

export interface ScheduleInputsPage {
  csrf: string;
  trigger: TriggerRecord;
  workflowName: string;
  schedule: TriggerScheduleRecord;
  /** Temporal's state of the schedule, when it answered */
  state?: ScheduleState;
  /** the published version whose input schema the fields come from */
  version: number | null;
  fields: FormField[];
  /** the fields' texts, by input name (pre-filled, or as submitted) */
  values: Record<string, string>;
  /** a refusal beside its field, by input name */
  errors: Record<string, string>;
  /** a refusal no field holds (the inputs as a whole, an input the form has no field for, Temporal) */
  error?: string;
}

/** The schedule's timing in words: `every 1h`, `cron 0 9 * * 1-5 (Europe/Berlin)`. */
export function scheduleTiming(schedule: TriggerScheduleRecord): string {
  const { config } = schedule;
  return [...(config.cron ?? []).map((c) => `cron ${c} (${config.timeZone})`), ...(config.interval ? [`every ${config.interval.every}`] : [])].join(', ');
}

export function scheduleInputsBody(p: ScheduleInputsPage): Html {
  const t = p.trigger;
  const stored = p.schedule.config.inputs ?? {};
  const named = new Set(p.fields.map((f) => f.name));
  const kept = Object.keys(stored).filter((name) => !named.has(name));
  const fields = p.fields.map((f) => ({
    ...f, name: `${SCHEDULE_INPUT_PREFIX}${f.name}`,
    ...(f.kind === 'password' && Object.hasOwn(stored, f.name) ? { hint: `${f.hint ? `${f.hint} ` : ''}A value is stored (not shown); left blank, it is kept.` } : {}),
  }));
  const prefixed = (record: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(record).map(([k, v]) => [`${SCHEDULE_INPUT_PREFIX}${k}`, v]));
  const problems = Object.keys(p.errors).length;
  const paused = p.state ? p.state.paused : p.schedule.paused;
  return html`<p><a href="/console/workflows/${encodeURIComponent(t.workflowId)}">← ${p.workflowName}</a></p>
<h1>Inputs of the schedule of ${t.name ?? t.id}</h1>
<p>Trigger <code>${t.id}</code>, schedule: ${scheduleTiming(p.schedule)}, <strong id="schedule-state">${paused ? 'paused' : 'active'}</strong>${p.state?.note ? html` <span class="meta">${p.state.note}</span>` : ''}</p>
${problems > 0 ? html`<p class="error" role="alert" id="form-problems">${problems === 1 ? 'One input needs' : `${problems} inputs need`} a change: see below. Nothing was saved.</p>` : ''}
${p.error ? html`<p class="error" role="alert" id="form-refusal">${p.error}</p>` : ''}
<form method="post" action="/console/triggers/${encodeURIComponent(t.id)}/schedule" data-needs="triggers.write" novalidate>
<input type="hidden" name="csrf" value="${p.csrf}">
<fieldset id="schedule-inputs"><legend>Inputs of its scheduled runs</legend>
${p.fields.length ? html`<p class="hint">Fields of the published version ${p.version ?? ''}'s input schema; each scheduled run gets these inputs. An emptied field is left out.</p>
${fieldsHtml(fields, false, prefixed(p.values), prefixed(p.errors))}` : html`<p class="hint">The published version's input schema names no inputs.</p>`}
${kept.length ? html`<p class="hint" id="kept-inputs">Kept as they are (the schema has no field for them): ${kept.join(', ')}</p>` : ''}</fieldset>
${paused ? html`<p class="hint">The schedule stays paused: resume it on the workflow's page once its inputs are right.</p>` : ''}
<div class="actions"><button type="submit">Save the inputs</button></div></form>`;
}
