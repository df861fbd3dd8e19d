/**
 * The contract's bodies (interface.md 2.3 to 2.6) built from a RunView. File links are signed
 * here; whole results of cut outcomes are read back from output.txt.
 */
import type { BlobStore } from '../blob-store';
import type { RunView } from '../runs/run-service';
import type { SignedUrlSigner } from '../signed-urls';
import type { StepOutcome, WaitingOn } from '../common/run-types';

export interface DesignatedOutput {
  stepIndex: number;
  fileName?: string;
}

export interface BodyContext {
  blobs: BlobStore;
  signer: SignedUrlSigner;
  resultUrlTtlSeconds: number;
}

function stepVersion(view: RunView, stepIndex: number): number {
  return view.memo.stepMap[String(stepIndex)] ?? 1;
}

async function wholeResult(blobs: BlobStore, outcome: StepOutcome): Promise<string> {
  if (!outcome.truncated) return outcome.result;
  const whole = await blobs.read(outcome.files['output.txt'].key);
  return whole ? whole.toString('utf8') : outcome.result;
}

/** The fields 2.3 and 2.6 share, plus `status` (and `error` when the run did not complete). */
function runHeader(view: RunView) {
  return {
    automationId: view.memo.automationId,
    automationVersion: view.memo.automationVersion,
    automationName: view.memo.automationName,
    id: view.runId,
    type: 'TRIGGER' as const,
    started: view.memo.started,
    status: view.status,
    ...(view.error ? { error: view.error } : {}),
  };
}

/** 2.3, plus `status` (and `error` when the run did not complete). */
export async function syncResultBody(view: RunView, inputs: unknown, ctx: BodyContext) {
  return {
    ...runHeader(view),
    stepMap: view.memo.stepMap,
    inputs: inputs ?? '',
    triggerId: view.memo.triggerId,
    results: await Promise.all(view.outcomes.map(async (o) => ({
      stepIndex: o.stepIndex,
      stepVersion: stepVersion(view, o.stepIndex),
      result: { stepIndex: o.stepIndex, resultType: o.resultType, result: await wholeResult(ctx.blobs, o) },
      exitCode: o.exitCode,
      duration: o.duration,
    }))),
    startedBy: view.memo.startedBy,
  };
}

export function statusPath(apiKey: string, automationId: string, runId: string): string {
  return `/ext/webhook/${encodeURIComponent(apiKey)}/runs/${encodeURIComponent(automationId)}/${encodeURIComponent(runId)}/status`;
}

export function resultsPath(apiKey: string, automationId: string, runId: string): string {
  return `/ext/webhook/${encodeURIComponent(apiKey)}/runs/${encodeURIComponent(automationId)}/${encodeURIComponent(runId)}/results`;
}

/** 2.4, plus `message` naming the run (ARCHITECTURE.md). */
export function pollingHandleBody(runId: string, automationId: string, apiKey: string, retryAfterSeconds: number, windowSeconds: number) {
  return {
    runId,
    automationId,
    status: 'RUNNING' as const,
    statusUrl: statusPath(apiKey, automationId, runId),
    resultsUrl: resultsPath(apiKey, automationId, runId),
    retryAfterSeconds,
    message: `run ${runId} is still going after the ${windowSeconds}-second wait window; it continues: poll statusUrl, then fetch resultsUrl once the status is COMPLETE`,
  };
}

/** Why a paused run waits, for pollers: no links, no secrets, only who is still expected. */
export function waitingOnBody(waitingOn: WaitingOn) {
  if (waitingOn.kind === 'timer') return waitingOn;
  const decided = new Set(waitingOn.decisions.map((d) => d.approver.toLowerCase()));
  return {
    kind: waitingOn.kind,
    stepIndex: waitingOn.stepIndex,
    deadline: waitingOn.deadline,
    required: waitingOn.required,
    approvals: waitingOn.decisions.filter((d) => d.decision === 'approve').length,
    approvers: waitingOn.approvers.filter((a) => !decided.has(a.toLowerCase())),
  };
}

/** 2.5, plus `error` when the run failed or timed out and `waitingOn` while it is PAUSED. */
export function statusBody(view: RunView) {
  const stepStatus: Record<string, string> = {};
  const stepInfo: Record<string, { status: string; name: string; executionOrder: number | null }> = {};
  for (const [index, step] of Object.entries(view.steps)) {
    stepStatus[index] = step.status;
    stepInfo[index] = { status: step.status, name: step.name, executionOrder: step.executionOrder ?? null };
  }
  return {
    automationId: view.memo.automationId,
    runId: view.runId,
    status: view.status,
    ...(view.error ? { error: view.error } : {}),
    ...(view.waitingOn ? { waitingOn: waitingOnBody(view.waitingOn) } : {}),
    stepStatus,
    stepInfo,
  };
}

/** 2.6. */
export function resultsBody(view: RunView, designated: DesignatedOutput | undefined, ctx: BodyContext) {
  const link = (key: string, mimeType: string, name?: string) => ctx.signer.sign(key, ctx.resultUrlTtlSeconds, { name, type: mimeType });
  const designatedOutcome = designated ? view.outcomes.find((o) => o.stepIndex === designated.stepIndex && o.status === 'COMPLETE') : undefined;
  return {
    ...runHeader(view),
    results: view.outcomes.map((o) => ({
      stepIndex: o.stepIndex,
      stepVersion: stepVersion(view, o.stepIndex),
      resultUrls: Object.fromEntries(Object.entries(o.files).map(([name, file]) => [name, { url: link(file.key, file.mimeType), mimeType: file.mimeType, size: file.size }])),
      exitCode: o.exitCode,
      duration: o.duration,
    })),
    ...(designated && designatedOutcome ? {
      designatedOutput: (() => {
        const file = designatedOutcome.files['output.txt'];
        const fileName = designated.fileName ?? 'output.txt';
        return { url: link(file.key, file.mimeType, fileName), fileName, mimeType: file.mimeType, size: file.size };
      })(),
    } : {}),
  };
}
