/**
 * The console's agent form (docs/console.md "Agents"): create (`/console/agents/new`) and edit
 * (`/console/agents/{id}/edit`), one field per setting with its hint, and each refusal beside its
 * field (src/console/agent-form.ts reads the form into the API's bodies).
 */
import { AGENT_FIELD_LABELS, type AgentFormField, type AgentFormValues } from '../../console/agent-form';
import { html, type Html } from './html';

export interface AgentFormPage {
  csrf: string;
  values: AgentFormValues;
  errors: Partial<Record<AgentFormField, string>>;
  /** absent: a new agent */
  agent?: { id: string; name: string };
  /** a refusal of the service's own checks (a server or trigger the organization does not have) */
  error?: string;
  defaultModel?: string;
}

const HINTS: Partial<Record<AgentFormField, string>> = {
  instructions: 'The system prompt: what the agent is for and how it answers.',
  model: 'Empty: the gateway\'s model.',
  servers: 'One a line: a tool server\'s path or ID (all its tools), or "server: tool_a, tool_b" (only those).',
  workflows: 'One a line: a trigger ID ("trg_…"), or "trg_… as tool_name".',
  outputSchema: 'Empty: a free-text answer. Else a JSON Schema object the answer must fit.',
  priority: 'Empty: the default (3).',
};
const LONG: readonly AgentFormField[] = ['instructions', 'servers', 'workflows', 'outputSchema'];

function field(name: AgentFormField, page: AgentFormPage): Html {
  const id = `agent-${name}`;
  const error = page.errors[name];
  const value = page.values[name] ?? '';
  const described = [HINTS[name] ? `${id}-hint` : '', error ? `${id}-error` : ''].filter((x) => x !== '').join(' ');
  const aria = html`${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
  const hint = name === 'model' && page.defaultModel ? `Empty: the gateway's model (${page.defaultModel}).` : HINTS[name];
  return html`<div class="field${error ? ' invalid' : ''}"><label for="${id}">${AGENT_FIELD_LABELS[name]}</label>
${LONG.includes(name) ? html`<textarea id="${id}" name="${name}"${aria}${name === 'outputSchema' ? html` class="code"` : ''}>${value}</textarea>` : html`<input id="${id}" name="${name}" value="${value}"${aria}>`}
${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}</div>`;
}

export function agentFormBody(page: AgentFormPage): Html {
  const editing = page.agent;
  const action = editing ? `/console/agents/${encodeURIComponent(editing.id)}/edit` : '/console/agents/new';
  const problems = Object.keys(page.errors).length;
  return html`<p><a href="${editing ? `/console/agents/${encodeURIComponent(editing.id)}` : '/console/agents'}">← ${editing ? editing.name : 'Agents'}</a></p>
<h1>${editing ? html`Edit ${editing.name}` : 'Create an agent'}</h1>
${problems > 0 ? html`<p class="error" role="alert" id="form-problems">${problems === 1 ? 'One field needs' : `${problems} fields need`} a change: see below.</p>` : ''}
${page.error ? html`<p class="error" role="alert" id="form-refusal">${page.error}</p>` : ''}
<form method="post" action="${action}" data-needs="agents.write" class="agent-form" novalidate>
<input type="hidden" name="csrf" value="${page.csrf}">
${field('name', page)}${field('description', page)}${field('instructions', page)}
<fieldset><legend>Model</legend>${field('model', page)}${field('temperature', page)}${field('maxTokens', page)}</fieldset>
<fieldset><legend>Tools</legend>${field('servers', page)}${field('workflows', page)}</fieldset>
<fieldset><legend>Answer and limits</legend>${field('outputSchema', page)}${field('maxTurns', page)}${field('maxToolCalls', page)}${field('timeoutSeconds', page)}${field('priority', page)}</fieldset>
<div class="actions"><button type="submit">${editing ? 'Save the agent' : 'Create the agent'}</button></div></form>`;
}
