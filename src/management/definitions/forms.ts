/**
 * The declarative forms of definitions as code (index.ts): each object as the folder states it and
 * as the registry holds it, made alike so that a plan compares them as canonical JSON, hashes them
 * for drift, and shows a line diff of their YAML.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import type { z } from 'zod';
import type { WorkflowDefinition } from '../../common/definition';
import { isRecord } from '../../common/narrow';
import { withoutCredentials } from '../../common/url-credentials';
import { DEFAULT_LIMITS } from '../../registry/agent-limits';
import type { AgentRecord, AgentServer, CreateAgentInput } from '../../registry/agent-records';
import { canonicalJson, type ToolServerRecord, type TriggerRecord, type TriggerScheduleRecord } from '../../registry';
import { VerifySchema, verifyOptions } from '../../triggers/webhooks/config';
import { type AgentDoc, type ApplyRequest, type DefinitionKind, type ToolServerDoc, type TriggerDoc } from './format';
import { type PlacedError } from './parse';


/** An object's declarative form: plain JSON, kind and name first. */
export type Form = Record<string, unknown>;

// --- declarative forms: the folder's and the registry's, made alike ---

export function stripUndefined(value: object): Form {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null));
}

export function workflowForm(definition: WorkflowDefinition): Form {
  return { kind: 'workflow', ...JSON.parse(JSON.stringify(definition)) };
}

export function scheduleForm(config: Record<string, unknown>, paused: boolean, note: string | null): Form {
  return stripUndefined({ ...config, paused, ...(note ? { note } : {}) });
}

export function triggerDocForm(doc: TriggerDoc, file: string, errors: PlacedError[]): Form {
  let verify: Form | undefined;
  if (doc.verify) {
    const { secretRefs, ...options } = doc.verify;
    // the preset's options checked as POST /api/v1/triggers checks them, with a stand-in for each secret
    const parsed = VerifySchema.safeParse({ ...options, secrets: secretRefs.map(() => 'whsec_c3RhbmRpbmdpbg==') });
    if (parsed.success) verify = { ...verifyOptions(parsed.data) };
    else for (const issue of parsed.error.issues) errors.push({ file, path: ['verify', ...issue.path.map(String)].join('.'), message: issue.message });
  }
  return stripUndefined({
    kind: 'trigger', name: doc.name, workflow: doc.workflow,
    designatedOutput: doc.designatedOutput, tool: doc.tool, callbackUrl: doc.callbackUrl, priority: doc.priority, concurrency: doc.concurrency,
    schedule: doc.schedule ? scheduleForm(doc.schedule.config, doc.schedule.paused, doc.schedule.note) : undefined,
    disabled: doc.disabled ? true : undefined,
    verify, debounce: doc.debounce, batch: doc.batch,
  });
}

export function triggerRecordForm(trigger: TriggerRecord, workflowName: string, schedule: TriggerScheduleRecord | undefined): Form {
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'trigger', name: trigger.name ?? trigger.id, workflow: workflowName,
    designatedOutput: trigger.designatedOutput, tool: trigger.tool, callbackUrl: trigger.callbackUrl, priority: trigger.priority, concurrency: trigger.concurrency,
    schedule: schedule ? scheduleForm(schedule.config, schedule.paused, schedule.note) : undefined,
    disabled: trigger.disabledAt ? true : undefined,
    verify: trigger.verify ?? undefined,
    debounce: trigger.shaping && 'debounce' in trigger.shaping ? trigger.shaping.debounce : undefined,
    batch: trigger.shaping && 'batch' in trigger.shaping ? trigger.shaping.batch : undefined,
  })));
}

/** The folder's server; `connection` a connection's name, or a PCID (shown by the connection's name when it has one). */
export function serverForm(doc: ToolServerDoc, liveDescription: string | undefined, connectionNames: ReadonlyMap<string, string>): Form {
  return stripUndefined({
    kind: 'toolServer', name: doc.name, description: doc.description ?? liveDescription,
    connection: doc.connection === undefined ? undefined : connectionNames.get(doc.connection) ?? doc.connection, url: doc.url, document: doc.document,
    durable: doc.durable, durableTools: doc.durableTools,
  });
}

/** A server's connection by the connection's name when it has one (a folder names it so), else its PCID. */
export function serverRecordForm(server: ToolServerRecord, connectionNames: ReadonlyMap<string, string>): Form {
  let document: unknown;
  if (server.kind === 'openapi') {
    try {
      document = JSON.parse(server.source);
    } catch {
      document = { source: server.source };
    }
  }
  return stripUndefined({
    kind: 'toolServer', name: server.name, description: server.description, connection: server.connectionId === null ? undefined : connectionNames.get(server.connectionId) ?? server.connectionId,
    url: server.kind === 'remote' ? server.source : undefined, document, durable: server.durable ?? undefined, durableTools: server.durableTools ?? undefined,
  });
}

export function agentDocForm(doc: AgentDoc): Form {
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'agent', name: doc.name, description: doc.description, instructions: doc.instructions, outputSchema: doc.outputSchema ?? undefined,
    servers: doc.servers, workflows: doc.workflows.map((w) => stripUndefined(w)), model: doc.model ?? {}, limits: { ...DEFAULT_LIMITS, ...doc.limits },
    priority: doc.priority ?? undefined,
  })));
}

export function agentRecordForm(agent: AgentRecord, serverNames: Map<string, string>, triggerNames: Map<string, string>): Form {
  const servers: AgentServer[] = agent.servers.map((s) => {
    const name = serverNames.get(s.name.replace(/^\/+/, ''));
    return name ? { ...s, name } : s;
  });
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'agent', name: agent.name, description: agent.description, instructions: agent.instructions, outputSchema: agent.outputSchema ?? undefined,
    servers, workflows: agent.workflows.map((w) => stripUndefined({ trigger: triggerNames.get(w.triggerId) ?? w.triggerId, toolName: w.toolName, description: w.description })),
    model: agent.model, limits: agent.limits, priority: agent.priority ?? undefined,
  })));
}

/** What export writes: the form, with the secret references a verified trigger needs named after it. */
export function exportForm(kind: DefinitionKind, form: Form): Form {
  if (kind !== 'trigger' || !isRecord(form.verify)) return form;
  const ref = `${String(form.name).toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'TRIGGER'}_SECRET`;
  return { ...form, verify: { ...form.verify, secretRefs: [/^[A-Z_]/.test(ref) ? ref : `T_${ref}`] } };
}

export function verifyInput(verify: NonNullable<TriggerDoc['verify']>, secrets: Record<string, string>): z.infer<typeof VerifySchema> {
  const { secretRefs, ...options } = verify;
  return VerifySchema.parse({ ...options, secrets: secretRefs.map((ref) => secrets[ref] ?? '') });
}

export function agentInput(doc: AgentDoc, ids: Record<DefinitionKind, Map<string, string>>): CreateAgentInput {
  return {
    name: doc.name, description: doc.description, instructions: doc.instructions,
    ...(doc.outputSchema === undefined ? {} : { outputSchema: doc.outputSchema }),
    servers: doc.servers.map((s) => {
      const id = ids.toolServer.get(s.name);
      return id ? { ...s, name: id } : s;
    }),
    workflows: doc.workflows.map((w) => ({ triggerId: ids.trigger.get(w.trigger) ?? w.trigger, ...(w.toolName ? { toolName: w.toolName } : {}), ...(w.description ? { description: w.description } : {}) })),
    ...(doc.model ? { model: doc.model } : {}), ...(doc.limits ? { limits: doc.limits } : {}), ...(doc.priority === undefined ? {} : { priority: doc.priority }),
  };
}

export function onlyDiffer(a: Form, b: Form, fields: readonly string[]): boolean {
  const without = (f: Form) => Object.fromEntries(Object.entries(f).filter(([k]) => !fields.includes(k)));
  return canonicalJson(without(a)) === canonicalJson(without(b));
}

export function hashOf(form: Form): string {
  return createHash('sha256').update(canonicalJson(form)).digest('hex');
}

/** `url@ref` as recorded (the plan, the audit trail, each object applied): never with credentials, whoever sent them. */
export function sourceText(request: ApplyRequest): string | undefined {
  const { url, ref } = request.source;
  return url ? `${withoutCredentials(url)}${ref ? `@${ref}` : ''}` : undefined;
}

/** YAML with keys sorted (kind and name first), so that a diff shows only what differs. */
export function yamlOf(form: Form | undefined): string {
  if (!form) return '';
  const { kind, name, ...rest } = form;
  const sorted = JSON.parse(canonicalJson(rest));
  return stringify({ kind, name, ...(isRecord(sorted) ? sorted : {}) }, { lineWidth: 0 });
}

/** A line diff of the two forms' YAML (`-` live, `+` folder, two lines of context). */
export function diffOf(before: Form | undefined, after: Form | undefined): string {
  const a = yamlOf(before).split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  const b = yamlOf(after).split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  if (!before) return b.map((l) => `+ ${l}`).join('\n');
  if (!after) return a.map((l) => `- ${l}`).join('\n');
  // longest common subsequence of lines (objects are small)
  const n = a.length;
  const m = b.length;
  const lcs = new Array<number>((n + 1) * (m + 1)).fill(0);
  const at = (i: number, j: number): number => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  const lines: { mark: ' ' | '-' | '+'; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      lines.push({ mark: ' ', text: a[i] ?? '' });
      i++;
      j++;
    } else if (i < n && (j >= m || at(i + 1, j) >= at(i, j + 1))) lines.push({ mark: '-', text: a[i++] ?? '' });
    else lines.push({ mark: '+', text: b[j++] ?? '' });
  }
  const near = lines.map((l, k) => l.mark !== ' ' || lines.slice(Math.max(0, k - 2), k + 3).some((x) => x.mark !== ' '));
  const out: string[] = [];
  lines.forEach((l, k) => {
    if (near[k]) out.push(`${l.mark} ${l.text}`);
    else if (near[k - 1]) out.push('  …');
  });
  return out.join('\n');
}
