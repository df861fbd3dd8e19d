/**
 * The console's alert rule form (docs/console.md "Alert rules"): what the create and edit pages
 * post, read into the API's own body (AlertRuleBodySchema) so that the console accepts and refuses
 * exactly what `POST` and `PUT /api/v1/alerts` do. One form holds every kind's and destination's
 * fields; only those of the chosen kind and destination are read (the others stay as typed).
 * Numbers are empty for the default; the e-mail recipients are one a line or comma-separated.
 * A field that does not read is named with what it must be, beside the field.
 */
import { ALERT_RULE_KINDS } from '../common/alerts';
import { AlertRuleBodySchema, type AlertRuleBody, type AlertRuleView } from '../contracts/alert-bodies';

export const ALERT_FORM_FIELDS = ['name', 'kind', 'workflowId', 'cooldownSeconds', 'windowSeconds', 'threshold', 'ratio', 'minRuns', 'afterSeconds', 'percent',
  'destination', 'url', 'connectionId', 'to', 'triggerId', 'enabled'] as const;
export type AlertFormField = (typeof ALERT_FORM_FIELDS)[number];
export type AlertFormValues = Partial<Record<AlertFormField, string>>;
export type AlertFormOutcome = { ok: true; body: AlertRuleBody } | { ok: false; errors: Partial<Record<AlertFormField, string>> };

export const ALERT_DESTINATIONS = ['webhook', 'email', 'workflow'] as const;

/** Each kind's own fields (besides name, kind and the destination). */
export const KIND_FIELDS: Record<(typeof ALERT_RULE_KINDS)[number], readonly AlertFormField[]> = {
  run_failed: ['workflowId', 'cooldownSeconds'],
  failure_rate: ['workflowId', 'windowSeconds', 'threshold', 'ratio', 'minRuns', 'cooldownSeconds'],
  approval_waiting: ['workflowId', 'afterSeconds', 'cooldownSeconds'],
  budget: ['percent'],
};
const NUMBERS: readonly AlertFormField[] = ['cooldownSeconds', 'windowSeconds', 'threshold', 'ratio', 'minRuns', 'afterSeconds', 'percent'];

/** The form's values of the posted body (strings only; a checkbox's absence is its `false`). */
export function alertFormValues(body: unknown): AlertFormValues {
  const values: AlertFormValues = {};
  if (typeof body !== 'object' || body === null) return values;
  for (const field of ALERT_FORM_FIELDS) {
    const value: unknown = Reflect.get(body, field);
    if (typeof value === 'string') values[field] = field === 'to' ? value : value.trim();
  }
  return values;
}

/** The form's values of a rule (the edit page, pre-filled). */
export function alertFormOf(rule: AlertRuleView): AlertFormValues {
  const values: AlertFormValues = { name: rule.name, kind: rule.kind, destination: rule.destination.type, enabled: rule.enabled ? 'true' : '' };
  for (const [key, value] of Object.entries(rule.condition)) {
    const field = ALERT_FORM_FIELDS.find((f) => f === key);
    if (field && field !== 'kind' && value !== undefined) values[field] = String(value);
  }
  const { destination } = rule;
  if (destination.type === 'webhook') values.url = destination.url;
  if (destination.type === 'email') Object.assign(values, { connectionId: destination.connectionId, to: destination.to.join('\n') });
  if (destination.type === 'workflow') values.triggerId = destination.triggerId;
  return values;
}

/** A number field: empty is absent; a number as a number; anything else as typed (the schema says what it must be). */
function numberOf(text: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** The API body of the posted form, or each refused field with why. */
export function readAlertForm(values: AlertFormValues): AlertFormOutcome {
  const kind = ALERT_RULE_KINDS.find((k) => k === values.kind);
  const condition: Record<string, unknown> = { kind: values.kind ?? '' };
  for (const field of kind ? KIND_FIELDS[kind] : []) {
    const text = values[field];
    if (text) condition[field] = NUMBERS.includes(field) ? numberOf(text) : text;
  }
  const type = values.destination ?? '';
  const destination: Record<string, unknown> = { type };
  if (type === 'webhook') destination.url = values.url ?? '';
  if (type === 'email') {
    destination.connectionId = values.connectionId ?? '';
    destination.to = (values.to ?? '').split(/[\n,]/).map((t) => t.trim()).filter((t) => t !== '');
  }
  if (type === 'workflow') destination.triggerId = values.triggerId ?? '';
  const parsed = AlertRuleBodySchema.safeParse({ name: values.name ?? '', condition, destination, enabled: values.enabled === 'true' });
  if (parsed.success) return { ok: true, body: parsed.data };
  const errors: Partial<Record<AlertFormField, string>> = {};
  for (const issue of parsed.error.issues) {
    const field = fieldOfPath(issue.path);
    errors[field] ??= messageFor(field, issue.message);
  }
  return { ok: false, errors };
}

function messageFor(field: AlertFormField, message: string): string {
  if (field === 'kind') return `Choose what the rule watches: ${ALERT_RULE_KINDS.join(', ')}.`;
  if (field === 'destination') return `Choose where an alert goes: ${ALERT_DESTINATIONS.join(', ')}.`;
  if (field === 'name') return 'Give the rule a name (at most 200 characters).';
  return message;
}

/** The form field an issue of the API body belongs to (a failure_rate rule naming neither or both of threshold and ratio: threshold). */
function fieldOfPath(path: readonly PropertyKey[]): AlertFormField {
  const [head, second, third] = path;
  if (head === 'name' || head === 'enabled') return head;
  if (head === 'condition') {
    if (second === undefined || second === 'kind') return second === 'kind' ? 'kind' : 'threshold';
    return ALERT_FORM_FIELDS.find((f) => f === second) ?? 'kind';
  }
  if (head === 'destination') {
    if (second === undefined || second === 'type') return 'destination';
    if (second === 'to' || third !== undefined) return 'to';
    return ALERT_FORM_FIELDS.find((f) => f === second) ?? 'destination';
  }
  return 'name';
}

/** A refusal of the service's own checks (src/management/alerts.ts), beside the field it concerns. */
export function alertRefusalField(code: string, message: string): AlertFormField {
  if (code === 'UNKNOWN_WORKFLOW') return 'workflowId';
  if (code === 'UNKNOWN_TRIGGER') return 'triggerId';
  if (/mail connection/.test(message)) return 'connectionId';
  if (/kind cannot change/.test(message)) return 'kind';
  return 'name';
}
