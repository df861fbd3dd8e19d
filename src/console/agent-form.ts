/**
 * The console's agent form (docs/console.md "Agents"): what the create and edit pages post, read
 * into the API's own bodies (CreateAgentSchema, UpdateAgentSchema) so that the console accepts and
 * refuses exactly what `POST /api/v1/agents` and `PATCH /api/v1/agents/{id}` do. Its text fields:
 *  - servers, one a line: `<server>` attaches all its tools, `<server>: tool_a, tool_b` only those;
 *  - workflows, one a line: `<triggerId>` or `<triggerId> as <tool_name>`;
 *  - numbers (temperature, token and call limits, priority) empty for the default (a limit left
 *    empty on an edit keeps its value).
 * A field that does not read is named in the answer with what it must be, beside the field.
 */
import type { z } from 'zod';
import { CreateAgentSchema, UpdateAgentSchema, type AgentRecord, type CreateAgentInput, type UpdateAgentInput } from '../registry/agent-records';

/** The form's fields, as the page posts and shows them (all text). */
export const AGENT_FORM_FIELDS = ['name', 'description', 'instructions', 'model', 'temperature', 'maxTokens', 'servers', 'workflows', 'outputSchema',
  'maxTurns', 'maxToolCalls', 'timeoutSeconds', 'priority'] as const;
export type AgentFormField = (typeof AGENT_FORM_FIELDS)[number];
export type AgentFormValues = Partial<Record<AgentFormField, string>>;

export const AGENT_FIELD_LABELS: Record<AgentFormField, string> = {
  name: 'Name', description: 'Description', instructions: 'Instructions', model: 'Model', temperature: 'Temperature', maxTokens: 'Max tokens per answer',
  servers: 'Tool servers', workflows: 'Workflows as tools', outputSchema: 'Output schema (JSON)', maxTurns: 'Model calls per invocation',
  maxToolCalls: 'Tool calls per invocation', timeoutSeconds: 'Time limit (seconds)', priority: 'Priority (1 first .. 5 last)',
};

export type AgentFormOutcome<T> = { ok: true; input: T } | { ok: false; errors: Partial<Record<AgentFormField, string>> };

/** The form's values of the posted body (strings only; anything else is empty). */
export function agentFormValues(body: unknown): AgentFormValues {
  const values: AgentFormValues = {};
  if (typeof body !== 'object' || body === null) return values;
  for (const field of AGENT_FORM_FIELDS) {
    const value: unknown = Reflect.get(body, field);
    if (typeof value === 'string') values[field] = value;
  }
  return values;
}

/** The form's values of an agent (the edit page, pre-filled). */
export function agentFormOf(agent: AgentRecord): AgentFormValues {
  const text = (n: number | null | undefined): string => (n === undefined || n === null ? '' : String(n));
  return {
    name: agent.name, description: agent.description, instructions: agent.instructions, model: agent.model.model ?? '',
    temperature: text(agent.model.temperature), maxTokens: text(agent.model.maxTokens),
    servers: agent.servers.map((s) => ('tools' in s && s.tools ? `${s.name}: ${Object.keys(s.tools).join(', ')}` : s.name)).join('\n'),
    workflows: agent.workflows.map((w) => (w.toolName ? `${w.triggerId} as ${w.toolName}` : w.triggerId)).join('\n'),
    outputSchema: agent.outputSchema ? JSON.stringify(agent.outputSchema, null, 2) : '',
    maxTurns: text(agent.limits.maxTurns), maxToolCalls: text(agent.limits.maxToolCalls), timeoutSeconds: text(agent.limits.timeoutSeconds), priority: text(agent.priority),
  };
}

const lines = (text: string | undefined): string[] => (text ?? '').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');

/** A number field: empty is absent; else a number, or the text itself (which the schema refuses with its message). */
function numberOf(text: string | undefined): number | string | undefined {
  const t = (text ?? '').trim();
  if (t === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

function serversOf(text: string | undefined): unknown[] {
  return lines(text).map((line) => {
    const at = line.indexOf(':');
    if (at < 0) return { name: line, allTools: true };
    const tools = line.slice(at + 1).split(',').map((t) => t.trim()).filter((t) => t !== '');
    return { name: line.slice(0, at).trim(), tools: Object.fromEntries(tools.map((t) => [t, {}])) };
  });
}

function workflowsOf(text: string | undefined): unknown[] {
  return lines(text).map((line) => {
    const [triggerId = '', toolName] = line.split(/\s+as\s+/);
    return { triggerId: triggerId.trim(), ...(toolName === undefined ? {} : { toolName: toolName.trim() }) };
  });
}

/** The API body the form stands for (absent fields left out: on an edit they keep their values, save the lists). */
function bodyOf(v: AgentFormValues, editing: boolean): Record<string, unknown> {
  const model = { model: (v.model ?? '').trim() || undefined, temperature: numberOf(v.temperature), maxTokens: numberOf(v.maxTokens) };
  const limits = { maxTurns: numberOf(v.maxTurns), maxToolCalls: numberOf(v.maxToolCalls), timeoutSeconds: numberOf(v.timeoutSeconds) };
  const defined = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
  const priority = numberOf(v.priority);
  return {
    name: (v.name ?? '').trim(), description: v.description ?? '', instructions: v.instructions ?? '',
    model: defined(model), limits: defined(limits),
    servers: serversOf(v.servers), workflows: workflowsOf(v.workflows),
    outputSchema: (v.outputSchema ?? '').trim() === '' ? null : v.outputSchema,
    ...(priority === undefined ? (editing ? { priority: null } : {}) : { priority }),
  };
}

/** The form field a schema issue's path points at. */
function fieldOfPath(path: readonly PropertyKey[]): AgentFormField {
  const [head, next] = path;
  if (head === 'model' && next === 'model') return 'model';
  if (head === 'model' && (next === 'temperature' || next === 'maxTokens')) return next;
  if (head === 'limits' && (next === 'maxTurns' || next === 'maxToolCalls' || next === 'timeoutSeconds')) return next;
  return AGENT_FORM_FIELDS.find((f) => f === head) ?? 'name';
}

function errorsOf(error: z.ZodError): Partial<Record<AgentFormField, string>> {
  const errors: Partial<Record<AgentFormField, string>> = {};
  for (const issue of error.issues) {
    const field = fieldOfPath(issue.path);
    const where = issue.path.length > 1 && (field === 'servers' || field === 'workflows') ? `line ${Number(issue.path[1]) + 1}: ` : '';
    errors[field] ??= `${where}${issue.message}`;
  }
  return errors;
}

/** The fields an agent cannot be without, said so rather than as a length. */
function missing(values: AgentFormValues): Partial<Record<AgentFormField, string>> {
  const errors: Partial<Record<AgentFormField, string>> = {};
  if ((values.name ?? '').trim() === '') errors.name = 'Give the agent a name.';
  if ((values.instructions ?? '').trim() === '') errors.instructions = 'Write the agent\'s instructions (its system prompt).';
  return errors;
}

function outcome<T>(values: AgentFormValues, parsed: z.ZodSafeParseResult<T>): AgentFormOutcome<T> {
  const errors = { ...(parsed.success ? {} : errorsOf(parsed.error)), ...missing(values) };
  return parsed.success && Object.keys(errors).length === 0 ? { ok: true, input: parsed.data } : { ok: false, errors };
}

export function readAgentCreate(values: AgentFormValues): AgentFormOutcome<CreateAgentInput> {
  return outcome(values, CreateAgentSchema.safeParse(bodyOf(values, false)));
}

/**
 * An edit: only the limits the form shows are sent, and a limit left empty is left out; the API
 * merges a partial `limits` into the stored ones, so the others (tool result characters, tokens and
 * cost per invocation) keep their values.
 */
export function readAgentUpdate(values: AgentFormValues): AgentFormOutcome<UpdateAgentInput> {
  return outcome(values, UpdateAgentSchema.safeParse(bodyOf(values, true)));
}
