/**
 * Starting a run again from an earlier one (the management API's rerun and resume):
 *
 *   rerun   the earlier run's inputs (attachments included, with fresh links, while their files
 *           are stored) on the workflow's latest published version or on the same one; the
 *           inputs are checked against that version's input schema as a trigger call would be.
 *   resume  a FAILED or TIMEOUT run again on its own version, from its first step that did not
 *           complete: the steps before it are not run, their outcomes (results and files) are
 *           taken from the earlier run (workflows/run/resume.ts).
 *
 * Either is a new run with a new run ID, the earlier run's trigger, starter and callback URL, and
 * `origin: {kind, runId}` naming the earlier run. A refusal is a value with a code.
 */
import { ATTACHMENT_LINK_TTL_SECONDS } from '../attachments/limits';
import type { BlobStore } from '../blobs/blob-store';
import { INPUTS_REF_FIELD, isInputsReference } from '../common/inputs-reference';
import type { RunInput, StepOutcome } from '../common/run-types';
import type { Registry, TriggerRecord } from '../registry';
import { decodeFileKey, type SignedUrlSigner } from '../crypto/signed-urls';
import { inputsForRun } from './run-input';
import type { RunService } from './run-service';
import type { RunView } from './run-view';
import type { TriggerService } from './trigger-service';
import { isRecord, ownJson } from '../common/narrow';

/** STEPS_UNREAD: a resume that cannot tell which steps completed now (the run's worker does not answer): nothing was started */
export type RestartRefusalCode = 'NOT_RESUMABLE' | 'WORKFLOW_GONE' | 'VERSION_GONE' | 'INPUTS_GONE' | 'INVALID_INPUTS' | 'STEPS_UNREAD';

export interface RestartRefusal {
  ok: false;
  code: RestartRefusalCode;
  message: string;
}

export interface Restarted {
  ok: true;
  runId: string;
  automationId: string;
  automationVersion: number;
  /** resume: the step the new run starts at, and the steps whose outcomes it reused */
  fromStep?: number;
  reusedSteps?: number[];
}

export interface RunRestartDeps {
  registry: Registry;
  blobs: BlobStore;
  signer: SignedUrlSigner;
  runs: RunService;
  triggers: TriggerService;
  /** when a blob written at `modified` is deleted (ms since the epoch); undefined: never (retention off) */
  blobExpiry?: (key: string, modified: Date) => number | undefined;
}

function refusal(code: RestartRefusalCode, message: string): RestartRefusal {
  return { ok: false, code, message };
}

export class RunRestarts {
  constructor(private readonly deps: RunRestartDeps) {}

  /** `idempotencyKey`: a second call with the same key finds the first call's run (a batch's retried activity) */
  async rerun(view: RunView, which: 'latest' | 'same', idempotencyKey?: string): Promise<Restarted | RestartRefusal> {
    const original = await this.deps.runs.startedInput(view.runId);
    const number = which === 'same' ? original.automationVersion : await this.deps.registry.workflows.publishedVersionNumber(original.automationId);
    if (number === undefined) return refusal('WORKFLOW_GONE', `workflow ${original.automationId} has been deleted`);
    const version = number === null ? undefined : await this.deps.registry.workflows.getVersion(original.automationId, number);
    if (!version) return refusal('VERSION_GONE', `workflow ${original.automationId} has no published version ${number ?? ''}`.trim());
    const inputs = await this.currentInputs(original);
    if (!inputs.ok) return inputs;
    // The earlier run's trigger may be gone since; the run still names it, as the earlier one did.
    const trigger: TriggerRecord = (await this.deps.registry.triggers.get(original.triggerId)) ?? {
      id: original.triggerId, orgId: original.orgId, workflowId: original.automationId, name: null, designatedOutput: null, tool: null,
      createdAt: original.started, disabledAt: null, callbackUrl: null, priority: original.priority ?? null, concurrency: null, verify: null, shaping: null, revision: 1,
    };
    const prepared = await this.deps.triggers.prepare({ trigger, version }, {
      inputs: inputs.inputs, coerce: false, startedBy: original.startedBy, callbackUrl: original.callback?.url ?? '',
    });
    if (!prepared.ok) return refusal('INVALID_INPUTS', `the earlier run's inputs do not fit version ${version.version}: ${prepared.message}`);
    // An empty callbackUrl above keeps the trigger's own from applying to a run that had none.
    const { callback, ...input } = prepared.input;
    const started = await this.deps.triggers.start(this.deps.runs, {
      ...prepared,
      input: { ...input, ...(callback?.url ? { callback } : {}), origin: { kind: 'rerun', runId: view.runId } },
    }, idempotencyKey);
    return { ok: true, runId: started.runId, automationId: version.workflowId, automationVersion: version.version };
  }

  async resume(view: RunView, idempotencyKey?: string): Promise<Restarted | RestartRefusal> {
    if (view.status !== 'FAILED' && view.status !== 'TIMEOUT') {
      return refusal('NOT_RESUMABLE', `run ${view.runId} is ${view.status}: only a FAILED or TIMEOUT run can be resumed`);
    }
    // A run closed without a summary (cancelled, terminated) tells its steps through a worker: without
    // one they are guesses, and a resume from them would run again what completed.
    if (!view.final) return refusal('STEPS_UNREAD', `which steps of run ${view.runId} completed cannot be read now (no worker answers for it); nothing was started: try again shortly`);
    const original = await this.deps.runs.startedInput(view.runId);
    const reused: StepOutcome[] = [];
    for (let index = 1; index <= original.definition.steps.length; index++) {
      const outcome = view.outcomes.find((o) => o.stepIndex === index);
      if (!outcome || outcome.status !== 'COMPLETE') break;
      reused.push(outcome);
    }
    const fromStep = reused.length + 1;
    const inputs = await this.currentInputs(original);
    if (!inputs.ok) return inputs;
    const stored = await inputsForRun(this.deps.blobs, original.orgId, inputs.inputs);
    const { runId: _earlier, resume: _earlierResume, origin: _earlierOrigin, ...rest } = original;
    const input: Omit<RunInput, 'runId'> = {
      ...rest,
      inputs: stored.inputs,
      started: new Date().toISOString(),
      origin: { kind: 'resume', runId: view.runId },
      resume: { fromRunId: view.runId, fromStep, outcomes: reused },
    };
    const started = await this.deps.triggers.start(this.deps.runs, { input, storedKeys: stored.storedKey ? [stored.storedKey] : [] }, idempotencyKey);
    return {
      ok: true, runId: started.runId, automationId: original.automationId, automationVersion: original.automationVersion,
      fromStep, reusedSteps: reused.map((o) => o.stepIndex),
    };
  }

  /**
   * The earlier run's inputs as it got them: stored inputs read back, attachment links signed
   * anew. INPUTS_GONE when a stored part has been deleted since.
   */
  private async currentInputs(original: RunInput): Promise<{ ok: true; inputs: RunInput['inputs'] } | RestartRefusal> {
    let inputs = original.inputs;
    if (isInputsReference(inputs)) {
      const stored = await this.deps.blobs.read(inputs[INPUTS_REF_FIELD].key);
      if (!stored) return refusal('INPUTS_GONE', `the stored inputs of run ${original.runId} are no longer kept`);
      inputs = ownJson<RunInput['inputs']>(stored.toString('utf8'));
    }
    if (inputs === '' || !Array.isArray(inputs.attachments)) return { ok: true, inputs };
    const attachments: unknown[] = [];
    const given: unknown[] = inputs.attachments;
    for (const attachment of given) {
      const refreshed = await this.refreshedAttachment(attachment);
      if (!refreshed.ok) return refreshed;
      attachments.push(refreshed.attachment);
    }
    return { ok: true, inputs: { ...inputs, attachments } };
  }

  private async refreshedAttachment(attachment: unknown): Promise<{ ok: true; attachment: unknown } | RestartRefusal> {
    if (!isRecord(attachment) || typeof attachment.url !== 'string') return { ok: true, attachment };
    const record = attachment;
    let url: URL;
    try {
      url = new URL(attachment.url);
    } catch {
      return { ok: true, attachment };
    }
    const at = url.pathname.indexOf('/files/');
    const key = at < 0 ? undefined : decodeFileKey(url.pathname.slice(at + '/files/'.length));
    if (!key) return { ok: true, attachment };
    const opened = await this.deps.blobs.open(key);
    opened?.stream.destroy();
    // A re-signed link ends when the original call's file does (24 hours after that call).
    const notAfter = opened && this.deps.blobExpiry?.(key, opened.modified);
    if (!opened || (notAfter !== undefined && notAfter <= Date.now())) {
      return refusal('INPUTS_GONE', `attachment ${String(record.filename)} of the earlier run is no longer stored`);
    }
    const name = url.searchParams.get('name') ?? undefined;
    const type = url.searchParams.get('type') ?? undefined;
    return { ok: true, attachment: { ...record, url: this.deps.signer.sign(key, ATTACHMENT_LINK_TTL_SECONDS, { name, type, notAfter }) } };
  }
}
