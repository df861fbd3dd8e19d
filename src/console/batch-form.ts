/**
 * The console's "act on all matching" form (docs/console.md "Acting on all matching runs"): the
 * runs page's filter and the batch fields, read into the API's own body (RunBatchBodySchema) so
 * that the console selects and refuses exactly as `POST /api/v1/runs/batch` does. The runs page's
 * relative time (`since`: 1h, 24h, 7d, 30d) becomes an instant (`startedAfter`) when the count is
 * asked for, and the confirmation form carries that instant: the batch acts on the window that was
 * counted, not on one that moved since.
 */
import type { z } from 'zod';
import { BATCH_ACTIONS, type BatchAction } from '../common/run-batch';
import { RunBatchBodySchema } from '../contracts/operator-bodies';

export const BATCH_FORM_FIELDS = ['action', 'workflowId', 'triggerId', 'status', 'since', 'startedAfter', 'startedBefore', 'errorContains', 'input', 'reason', 'confirm'] as const;
export type BatchFormField = (typeof BATCH_FORM_FIELDS)[number];
export type BatchFormValues = Partial<Record<BatchFormField, string>>;
export type BatchRequest = z.infer<typeof RunBatchBodySchema>;

/** The runs page's relative windows, in milliseconds. */
export const SINCE_MS: Readonly<Record<string, number>> = { '1h': 3600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** What each action does, for the confirmation. */
export const BATCH_ACTION_LABELS: Record<BatchAction, string> = {
  cancel: 'Cancel', rerun: 'Re-run (the latest version)', resume: 'Resume from the failed step', pause: 'Pause at the next step', unpause: 'Unpause',
};

export type BatchFormOutcome = { ok: true; request: BatchRequest; values: BatchFormValues } | { ok: false; errors: Partial<Record<BatchFormField, string>>; values: BatchFormValues };

/** The form's values of the posted body (strings only; anything else is empty). */
export function batchFormValues(body: unknown): BatchFormValues {
  const values: BatchFormValues = {};
  if (typeof body !== 'object' || body === null) return values;
  for (const field of BATCH_FORM_FIELDS) {
    const value: unknown = Reflect.get(body, field);
    if (typeof value === 'string') values[field] = value.trim();
  }
  return values;
}

/** A `datetime-local` value (no zone: read as UTC) or an ISO instant, as an ISO instant; anything else as typed (the schema refuses it). */
function instant(text: string): string {
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? `${text}Z` : text;
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

/**
 * The form's input fields (`input`: one `path = value` a line, the API's `filter.input`): the value
 * is JSON when it reads as JSON (`42`, `true`, `"42"`, `{"a": 1}`), else the text as typed. Answers
 * the fields, or why a line cannot be read.
 */
export function inputFilterOf(text: string): { fields: Record<string, unknown> } | { error: string } {
  // a Map: a path named constructor or toString is a field like any other, not one seen before
  const fields = new Map<string, unknown>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const at = line.indexOf('=');
    const path = at < 0 ? '' : line.slice(0, at).trim();
    if (path === '') return { error: `Line ${i + 1}: write an input field's dotted path, = and its value (customer.id = c-42).` };
    if (fields.has(path)) return { error: `Line ${i + 1}: ${path} is named twice.` };
    const value = line.slice(at + 1).trim();
    try {
      fields.set(path, JSON.parse(value));
    } catch {
      fields.set(path, value);
    }
  }
  return { fields: Object.fromEntries(fields) };
}

/**
 * The API body of the posted form (`dryRun`: the count only), or each refused field with why.
 * `confirm` is sent as the API's `confirm` (the confirmation page posts it).
 */
export function readBatchForm(body: unknown, options: { dryRun: boolean; now?: number }): BatchFormOutcome {
  const values = batchFormValues(body);
  const errors: Partial<Record<BatchFormField, string>> = {};
  if (values.status === 'CANCELLED') errors.status = 'A batch selects by the API\'s statuses: cancelled runs are FAILED (choose FAILED).';
  let startedAfter = values.startedAfter ? instant(values.startedAfter) : undefined;
  if (values.since) {
    const ms = SINCE_MS[values.since];
    if (ms === undefined) errors.since = 'Choose one of the listed times.';
    else if (!startedAfter) startedAfter = new Date((options.now ?? Date.now()) - ms).toISOString();
  }
  const input = values.input ? inputFilterOf(values.input) : undefined;
  if (input && 'error' in input) errors.input = input.error;
  const filter = {
    ...(input && 'fields' in input && Object.keys(input.fields).length > 0 ? { input: input.fields } : {}),
    ...(values.workflowId ? { workflowId: values.workflowId } : {}),
    ...(values.triggerId ? { triggerId: values.triggerId } : {}),
    ...(values.status && values.status !== 'CANCELLED' ? { status: values.status } : {}),
    ...(startedAfter ? { startedAfter } : {}),
    ...(values.startedBefore ? { startedBefore: instant(values.startedBefore) } : {}),
    ...(values.errorContains ? { errorContains: values.errorContains } : {}),
  };
  const parsed = RunBatchBodySchema.safeParse({
    action: values.action ?? '', filter, ...(options.dryRun ? { dryRun: true } : {}),
    ...(values.reason ? { reason: values.reason } : {}), ...(values.confirm === 'true' ? { confirm: true } : {}),
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = fieldOfPath(issue.path);
      // a record's key refused (an input field's path): the key's own reason, naming the key
      const message = issue.code === 'invalid_key' ? `${String(issue.path[issue.path.length - 1])}: ${issue.issues[0]?.message ?? issue.message}` : issue.message;
      errors[field] ??= field === 'action' ? `Choose an action: ${BATCH_ACTIONS.join(', ')}.` : message;
    }
  }
  if (!parsed.success || Object.keys(errors).length > 0) return { ok: false, errors, values };
  // the confirmation carries the instant counted, not the relative window
  const { since: _since, ...kept } = values;
  return { ok: true, request: parsed.data, values: { ...kept, ...(startedAfter ? { startedAfter } : {}) } };
}

/** The form field an issue of the API body belongs to. */
function fieldOfPath(path: readonly PropertyKey[]): BatchFormField {
  if (path[0] === 'filter' && path[1] === 'input') return 'input';
  const last = path[path.length - 1];
  const name = typeof last === 'string' ? last : '';
  const found = BATCH_FORM_FIELDS.find((f) => f === name);
  if (found) return found;
  return path[0] === 'filter' ? 'status' : 'action';
}
