/**
 * What the console does with an organization's runs, through the services the API uses (RunService,
 * RunRestarts): no rule is implemented twice. Every call names the session's organization; a run of
 * another organization is reported exactly like a missing one (undefined).
 */
import type { CancelOutcome, DecideOutcome, RunBrief, RunListEntry, RunService, RunView } from '../runs/run-service';
import type { RunListFilter } from '../runs/run-list';
import type { RestartRefusal, Restarted, RunRestarts } from '../runs/run-restarts';
import type { Decision, RunInput } from '../common/run-types';
import type { BlobStore } from '../blobs/blob-store';
import { INPUTS_REF_FIELD, isInputsReference } from '../common/inputs-reference';
import { decodeFileKey } from '../crypto/signed-urls';
import { isRecord, ownJson } from '../common/narrow';

export interface ConsoleRunsDeps {
  runs: RunService;
  restarts: RunRestarts;
  blobs: BlobStore;
}

/** One input field as the run page shows it: secret ones (the input schema says so) masked. */
export interface ShownInput {
  name: string;
  /** the value as text (JSON for anything not a string), cut at INPUT_TEXT_MAX characters; absent when masked */
  text?: string;
  secret: boolean;
}

/** A file the run was started with (its `attachments`): `key` is the stored file's, when still named by its link. */
export interface StartedFile {
  filename: string;
  contentType: string;
  size: number;
  key?: string;
}

/** What the run page adds to the run's status: what it was started with and the runs it started. */
export interface RunStory {
  /** undefined: the start input could not be read (sealed under a key this gateway lacks, stored inputs gone) */
  inputs?: ShownInput[];
  inputsNote?: string;
  files: StartedFile[];
  children: RunListEntry[];
  /** each top-level step's definition as written (its input, expressions not resolved), by step index; empty when unread */
  stepInputs: Record<string, string>;
}

const INPUT_TEXT_MAX = 4000;
const CHILDREN_SHOWN = 50;

/**
 * Whether the input schema marks a property secret: JSON Schema's `writeOnly: true`, or
 * `format: "password"` (docs/console.md "A run's page"). Its value is never shown.
 */
export function secretProperties(inputSchema: Record<string, unknown> | undefined): Set<string> {
  const properties = inputSchema && isRecord(inputSchema.properties) ? inputSchema.properties : {};
  return new Set(Object.entries(properties).filter(([, p]) => isRecord(p) && (p.writeOnly === true || p.format === 'password')).map(([name]) => name));
}

/** The stored file a gateway file link names (`…/files/<encoded key>?…`), if it is one. */
function fileKeyOf(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const path = new URL(url).pathname;
    const at = path.indexOf('/files/');
    return at < 0 ? undefined : decodeFileKey(path.slice(at + '/files/'.length));
  } catch {
    return undefined;
  }
}

export function shownInputs(inputs: Record<string, unknown>, inputSchema: Record<string, unknown> | undefined): ShownInput[] {
  const secret = secretProperties(inputSchema);
  return Object.entries(inputs).filter(([name]) => name !== 'attachments').map(([name, value]) => {
    if (secret.has(name)) return { name, secret: true };
    const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
    return { name, secret: false, text: text.length > INPUT_TEXT_MAX ? `${text.slice(0, INPUT_TEXT_MAX)}…` : text };
  });
}

export function startedFiles(inputs: Record<string, unknown>, orgId: string): StartedFile[] {
  const given: unknown = inputs.attachments;
  if (!Array.isArray(given)) return [];
  return given.filter(isRecord).map((a) => {
    const key = fileKeyOf(a.url);
    return {
      filename: typeof a.filename === 'string' ? a.filename : 'file',
      contentType: typeof a.contentType === 'string' ? a.contentType : 'application/octet-stream',
      size: typeof a.size === 'number' ? a.size : 0,
      // only the organization's own files are offered (the key starts with its ID)
      ...(key && key.startsWith(`attachments/${orgId}/`) ? { key } : {}),
    };
  });
}

/** How many open runs the PAUSED and PENDING filters ask for their status. */
const OPEN_RUNS_ASKED = 50;

export class ConsoleRuns {
  constructor(private readonly deps: ConsoleRunsDeps) {}

  list(orgId: string, filter: RunListFilter): Promise<RunListEntry[]> {
    return this.deps.runs.list(orgId, filter);
  }

  /**
   * The runs page's list by the state it filters on (up to 100): CANCELLED is the FAILED runs
   * Temporal closed Canceled; PAUSED and PENDING are open runs (visibility lists them RUNNING), each
   * asked for its status, up to OPEN_RUNS_ASKED of them.
   */
  async listByState(orgId: string, state: RunListFilter['status'] | 'CANCELLED' | undefined, filter: Omit<RunListFilter, 'status' | 'limit' | 'cancelled'>): Promise<RunListEntry[]> {
    const askEach = state === 'PAUSED' || state === 'PENDING';
    const status = state === 'CANCELLED' ? undefined : askEach ? 'RUNNING' : state;
    const listed = await this.list(orgId, {
      ...filter, limit: askEach ? OPEN_RUNS_ASKED : 100, ...(status ? { status } : {}), ...(state === 'CANCELLED' ? { cancelled: true } : {}),
    });
    if (!askEach) return listed;
    const views = await Promise.all(listed.map((r) => this.view(orgId, r.runId)));
    return listed.flatMap((r, i) => { const v = views[i]; return v && v.status === state ? [{ ...r, status: v.status }] : []; });
  }

  /** The organization's run, or undefined (missing, or another organization's). */
  async view(orgId: string, runId: string): Promise<RunView | undefined> {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(runId)) return undefined;
    const view = await this.deps.runs.view(runId);
    return view && view.memo.orgId === orgId ? view : undefined;
  }

  /** The organization's run from describe alone (no worker needed: for actions), or undefined (missing, or another organization's). */
  async brief(orgId: string, runId: string): Promise<RunBrief | undefined> {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(runId)) return undefined;
    const brief = await this.deps.runs.brief(runId);
    return brief && brief.memo.orgId === orgId ? brief : undefined;
  }

  /**
   * A decision on the approval the run waits on, as the organization's administrator (one actor,
   * one approval) or as a member (`memberId`): applied, recorded to be applied, or refused (RunService.decide).
   */
  async decide(orgId: string, run: RunBrief, request: { decision: Decision; approver?: string; comment?: string; memberId?: string; stepIndex?: number }): Promise<DecideOutcome> {
    return this.deps.runs.decide(run, {
      decision: request.decision, actor: request.memberId ? `member:${request.memberId}` : `console:${orgId}`, via: 'api',
      ...(request.stepIndex === undefined ? {} : { stepIndex: request.stepIndex }),
      ...(request.approver ? { approver: request.approver } : {}), ...(request.comment ? { comment: request.comment } : {}),
    });
  }

  /** The run's inputs (secret fields masked), the files it was started with and the runs it started. */
  async story(view: RunView): Promise<RunStory> {
    const children = /^[A-Za-z0-9_.-]+$/.test(view.runId)
      ? await this.deps.runs.list(view.memo.orgId, { parentRunId: view.runId, limit: CHILDREN_SHOWN }).catch(() => []) : [];
    let original: RunInput;
    try {
      original = await this.deps.runs.startedInput(view.runId);
    } catch {
      return { inputsNote: 'The inputs cannot be read by this gateway (sealed under a data key it lacks, or the run\'s history is unreadable).', files: [], children, stepInputs: {} };
    }
    const stepInputs = Object.fromEntries(original.definition.steps.map((step, i) => {
      const { name: _name, type: _type, ...rest } = step;
      const text = JSON.stringify(rest, null, 2);
      return [String(i + 1), text.length > INPUT_TEXT_MAX ? `${text.slice(0, INPUT_TEXT_MAX)}…` : text];
    }));
    let inputs: RunInput['inputs'] | undefined = original.inputs;
    if (isInputsReference(inputs)) {
      const stored = await this.deps.blobs.read(inputs[INPUTS_REF_FIELD].key).catch(() => undefined);
      inputs = stored ? ownJson<RunInput['inputs']>(stored.toString('utf8')) : undefined;
      if (!inputs) return { inputsNote: 'The run\'s inputs were stored apart (they were large) and are no longer kept.', files: [], children, stepInputs };
    }
    if (inputs === '' || !isRecord(inputs)) return { inputs: [], files: [], children, stepInputs };
    return { inputs: shownInputs(inputs, original.definition.inputSchema), files: startedFiles(inputs, view.memo.orgId), children, stepInputs };
  }

  /** 'closed' when the run had already ended */
  cancel(run: RunBrief): Promise<CancelOutcome> {
    return this.deps.runs.cancel(run);
  }

  rerun(view: RunView, version: 'latest' | 'same'): Promise<Restarted | RestartRefusal> {
    return this.deps.restarts.rerun(view, version);
  }

  resume(view: RunView): Promise<Restarted | RestartRefusal> {
    return this.deps.restarts.resume(view);
  }
}
