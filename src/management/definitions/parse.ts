/**
 * Reading a folder of definitions (format.ts): each file's YAML or JSON documents, the overlay
 * patched over them, each object checked by its kind's schema. Every problem is placed by file
 * (with `#n` for the n-th document of a YAML stream) and path, so that a plan lists them all.
 */
import { parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import type { WorkflowDefinition } from '../../common/definition';
import { isRecord } from '../../common/narrow';
import { checkDefinition } from '../workflows';
import {
  AgentDocSchema, ConnectionDocSchema, DEFINITION_KINDS, MemberDocSchema, OverlayDocSchema, ToolServerDocSchema, TriggerDocSchema,
  type AgentDoc, type ApplyRequest, type ConnectionDoc, type DefinitionKind, type MemberDoc, type ToolServerDoc, type TriggerDoc,
} from './format';

export interface PlacedError { file: string; path: string; message: string }

/** The folder's objects by kind and name, each with the file it came from. */
export interface Folder {
  workflow: Map<string, { file: string; value: WorkflowDefinition }>;
  trigger: Map<string, { file: string; value: TriggerDoc }>;
  toolServer: Map<string, { file: string; value: ToolServerDoc }>;
  agent: Map<string, { file: string; value: AgentDoc }>;
  connection: Map<string, { file: string; value: ConnectionDoc }>;
  /** by e-mail, lower case */
  member: Map<string, { file: string; value: MemberDoc }>;
}

export const emptyFolder = (): Folder => ({ workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map(), connection: new Map(), member: new Map() });

const KINDS = new Set<string>(DEFINITION_KINDS);

function isKind(value: unknown): value is DefinitionKind {
  return typeof value === 'string' && KINDS.has(value);
}

const pathText = (path: readonly PropertyKey[]): string => path.map(String).join('.');

function issuesOf(error: z.ZodError, file: string, errors: PlacedError[]): void {
  for (const issue of error.issues) errors.push({ file, path: pathText(issue.path), message: issue.message });
}

/** A YAML or JSON file's documents, or its syntax errors (with line and column). */
function documentsOf(file: string, text: string, errors: PlacedError[]): { file: string; value: unknown }[] {
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [];
  const found: { file: string; value: unknown }[] = [];
  list.forEach((doc, i) => {
    const at = list.length > 1 ? `${file}#${i + 1}` : file;
    if (doc.errors.length > 0) {
      for (const e of doc.errors) errors.push({ file: at, path: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '', message: e.message.split('\n')[0] ?? e.message });
      return;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return; // an empty document
    found.push({ file: at, value });
  });
  return found;
}

/** Objects merge, arrays and scalars replace, `null` removes the field. */
export function patched(base: unknown, patch: unknown): unknown {
  if (!isRecord(base) || !isRecord(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = patched(out[key], value);
  }
  return out;
}

/** Reads the request's files (and overlay) into a folder; `errors` lists every problem. */
export function readFolder(request: Pick<ApplyRequest, 'files' | 'overlay'>, workflowSchema: z.ZodType<WorkflowDefinition>): { folder: Folder; errors: PlacedError[] } {
  const errors: PlacedError[] = [];
  const raw = new Map<string, { file: string; kind: DefinitionKind; name: string; value: Record<string, unknown> }>();
  for (const f of request.files) {
    for (const doc of documentsOf(f.path, f.text, errors)) {
      if (!isRecord(doc.value)) {
        errors.push({ file: doc.file, path: '', message: 'must be an object with a kind' });
        continue;
      }
      const { kind } = doc.value;
      if (!isKind(kind)) {
        errors.push({ file: doc.file, path: 'kind', message: `must be one of ${DEFINITION_KINDS.join(', ')}${kind === 'overlay' ? ' (an overlay is given apart: --overlay)' : ''}` });
        continue;
      }
      // a member's identity is their e-mail
      const field = kind === 'member' ? 'email' : 'name';
      const identity = doc.value[field];
      if (typeof identity !== 'string' || identity.length === 0) {
        errors.push({ file: doc.file, path: field, message: `must be a non-empty string: the ${field} is the object's identity` });
        continue;
      }
      const name = kind === 'member' ? identity.toLowerCase() : identity;
      const key = `${kind}/${name}`;
      const earlier = raw.get(key);
      if (earlier) {
        errors.push({ file: doc.file, path: field, message: `${key} is defined twice (also in ${earlier.file})` });
        continue;
      }
      raw.set(key, { file: doc.file, kind, name, value: doc.value });
    }
  }
  if (request.overlay) {
    const docs = documentsOf(request.overlay.path, request.overlay.text, errors);
    for (const doc of docs) {
      const overlay = OverlayDocSchema.safeParse(doc.value);
      if (!overlay.success) {
        issuesOf(overlay.error, doc.file, errors);
        continue;
      }
      for (const [key, patch] of Object.entries(overlay.data.patches)) {
        const target = raw.get(key);
        if (!target) {
          errors.push({ file: doc.file, path: `patches.${key}`, message: `the folder has no ${key}` });
          continue;
        }
        if ('name' in patch || 'kind' in patch || 'email' in patch) {
          errors.push({ file: doc.file, path: `patches.${key}`, message: 'an overlay cannot change an object\'s kind or name' });
          continue;
        }
        const merged = patched(target.value, patch);
        if (isRecord(merged)) target.value = merged;
      }
    }
  }
  const folder = emptyFolder();
  for (const [, { file, kind, name, value }] of raw) {
    if (kind === 'workflow') {
      const { kind: _kind, ...definition } = value;
      const checked = checkDefinition(workflowSchema, definition);
      if (checked.ok) folder.workflow.set(name, { file, value: checked.definition });
      else for (const i of checked.issues) errors.push({ file, path: pathText(i.path), message: i.message });
    } else if (kind === 'trigger') {
      const parsed = TriggerDocSchema.safeParse(value);
      if (!parsed.success) issuesOf(parsed.error, file, errors);
      else folder.trigger.set(name, { file, value: parsed.data });
    } else if (kind === 'toolServer') {
      const parsed = ToolServerDocSchema.safeParse(value);
      if (!parsed.success) issuesOf(parsed.error, file, errors);
      else folder.toolServer.set(name, { file, value: parsed.data });
    } else if (kind === 'connection') {
      const parsed = ConnectionDocSchema.safeParse(value);
      if (!parsed.success) issuesOf(parsed.error, file, errors);
      else folder.connection.set(name, { file, value: parsed.data });
    } else if (kind === 'member') {
      const parsed = MemberDocSchema.safeParse(value);
      if (!parsed.success) issuesOf(parsed.error, file, errors);
      else folder.member.set(name, { file, value: { ...parsed.data, email: name } });
    } else {
      const parsed = AgentDocSchema.safeParse(value);
      if (!parsed.success) issuesOf(parsed.error, file, errors);
      else folder.agent.set(name, { file, value: parsed.data });
    }
  }
  // references inside the folder (or the organization: checked by the plan)
  for (const [, t] of folder.trigger) {
    if (t.value.debounce && t.value.batch) errors.push({ file: t.file, path: 'batch', message: 'a trigger debounces or batches, not both' });
  }
  return { folder, errors };
}
