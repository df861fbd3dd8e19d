/**
 * The contract's bodies (interface.md 2.3 to 2.6) built from a RunView. File links are signed
 * here; results of cut outcomes are read back from output.txt, up to the caps below.
 */
import type { BlobStore } from '../blobs/blob-store';
import type { RunView } from '../runs/run-service';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import type { StepOutcome, WaitingOn } from '../common/run-types';
import { sumUsage, usageView } from '../common/agent-usage';
import { mimeTypeOfName } from '../common/file-types';
import type { PollingHandle, ResultsBody, StatusBody, SyncResultBody, WaitingOnBody } from './http-bodies';

/**
 * What a synchronous body (2.3) inlines of step results, in UTF-8 bytes. A step's output.txt may
 * hold 10 MiB (an http step) and a run may have dozens of steps: read whole, the body would take
 * hundreds of MB of gateway memory and, past V8's longest string, JSON.stringify would throw. A
 * result over its cap, or once the body's budget is spent, is inlined cut and its entry says
 * `truncated: true`, with `resultUrls` linking the whole output.txt as in 2.6.
 */
export const SYNC_RESULT_MAX_BYTES = 1024 * 1024;
export const SYNC_BODY_RESULTS_MAX_BYTES = 8 * 1024 * 1024;

export interface DesignatedOutput {
  stepIndex: number;
  fileName?: string;
}

export interface BodyContext {
  blobs: BlobStore;
  signer: Pick<SignedUrlSigner, 'sign'>;
  resultUrlTtlSeconds: number;
}

function stepVersion(view: RunView, stepIndex: number): number {
  return view.memo.stepMap[String(stepIndex)] ?? 1;
}

/** Where to cut `bytes` at most `at` bytes in without splitting a character: back over continuation bytes. */
export function utf8Cut(bytes: Buffer, at: number): number {
  if (at >= bytes.length) return bytes.length;
  let cut = at;
  while (cut > 0 && cut > at - 4 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return cut;
}

/**
 * The inline text of a cut outcome, without a lone high surrogate at its end: outcomes stored
 * before `inlinePrefix` (run-types) learned to avoid that may still carry one.
 */
function storedPrefix(outcome: StepOutcome): string {
  const last = outcome.result.charCodeAt(outcome.result.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? outcome.result.slice(0, -1) : outcome.result;
}

/**
 * The first `maxBytes` of a blob as text, cut on a character boundary; `whole` when it all fit.
 * Stops reading once past the cap (the stream reads a chunk or two ahead), never the whole file.
 */
export async function readTextPrefix(blobs: BlobStore, key: string, maxBytes: number): Promise<{ text: string; whole: boolean } | undefined> {
  const opened = await blobs.open(key);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of opened.stream) {
      // a blob stream has no encoding: its chunks are Buffers (Readable types them `any`)
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      // One byte past the cap tells a cut result from one of exactly maxBytes.
      const kept = bytes.subarray(0, maxBytes + 1 - length);
      chunks.push(kept);
      length += kept.length;
      if (length > maxBytes) break;
    }
  } finally {
    opened.stream.destroy();
  }
  const bytes = Buffer.concat(chunks, length);
  if (length <= maxBytes) return { text: bytes.toString('utf8'), whole: true };
  return { text: bytes.subarray(0, utf8Cut(bytes, maxBytes)).toString('utf8'), whole: false };
}

type InlinedResult = { outcome: StepOutcome; text: string; truncated: boolean };

/**
 * The text each outcome inlines in a synchronous body. The budget is handed out in step order
 * before any read, so which results are cut does not depend on which read finishes first. Inline
 * results count against it too; a cut outcome left with no more budget than its inline prefix
 * keeps that prefix (already in memory) rather than reading output.txt.
 */
async function inlinedResults(blobs: BlobStore, outcomes: StepOutcome[]): Promise<InlinedResult[]> {
  let budget = SYNC_BODY_RESULTS_MAX_BYTES;
  const plans = outcomes.map((o) => {
    const inlineBytes = Buffer.byteLength(o.result);
    if (!o.truncated) {
      budget -= inlineBytes;
      return { outcome: o, readBytes: 0 };
    }
    const allowance = Math.max(0, Math.min(SYNC_RESULT_MAX_BYTES, budget));
    if (allowance <= inlineBytes) return { outcome: o, readBytes: 0 };
    budget -= Math.min(allowance, o.files['output.txt'].size);
    return { outcome: o, readBytes: allowance };
  });
  return Promise.all(plans.map(async ({ outcome, readBytes }): Promise<InlinedResult> => {
    if (!outcome.truncated) return { outcome, text: outcome.result, truncated: false };
    const read = readBytes > 0 ? await readTextPrefix(blobs, outcome.files['output.txt'].key, readBytes) : undefined;
    return read ? { outcome, text: read.text, truncated: !read.whole } : { outcome, text: storedPrefix(outcome), truncated: true };
  }));
}

/** The signed links of an outcome's files (2.6 `resultUrls`). */
function resultUrls(outcome: StepOutcome, ctx: BodyContext) {
  return Object.fromEntries(Object.entries(outcome.files).map(([name, file]) =>
    [name, { url: ctx.signer.sign(file.key, ctx.resultUrlTtlSeconds, { type: file.mimeType }), mimeType: file.mimeType, size: file.size }]));
}

/** The fields 2.3 and 2.6 share, plus `status` (and `error` when the run did not complete). */
function runHeader(view: RunView) {
  return {
    automationId: view.memo.automationId,
    automationVersion: view.memo.automationVersion,
    automationName: view.memo.automationName,
    id: view.runId,
    /** interface.md's `TRIGGER`, or `SCHEDULE` for a run a trigger's schedule started */
    type: view.memo.type ?? ('TRIGGER' as const),
    started: view.memo.started,
    ...(view.memo.sourceCommit ? { sourceCommit: view.memo.sourceCommit } : {}),
    status: view.status,
    ...(view.error ? { error: view.error } : {}),
  };
}

/** 2.3, plus `status` (and `error` when the run did not complete). */
export async function syncResultBody(view: RunView, inputs: unknown, ctx: BodyContext): Promise<SyncResultBody> {
  return {
    ...runHeader(view),
    stepMap: view.memo.stepMap,
    inputs: inputs ?? '',
    triggerId: view.memo.triggerId,
    results: (await inlinedResults(ctx.blobs, view.outcomes)).map(({ outcome: o, text, truncated }) => ({
      stepIndex: o.stepIndex,
      ...(o.stepPath === undefined ? {} : { stepPath: o.stepPath }),
      stepVersion: stepVersion(view, o.stepIndex),
      result: { stepIndex: o.stepIndex, resultType: o.resultType, result: text },
      // A cut result says so, and links the whole text.
      ...(truncated ? { truncated: true as const, resultUrls: resultUrls(o, ctx) } : {}),
      exitCode: o.exitCode,
      duration: o.duration,
    })),
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
export function pollingHandleBody(runId: string, automationId: string, apiKey: string, retryAfterSeconds: number, windowSeconds: number): PollingHandle {
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
export function waitingOnBody(waitingOn: WaitingOn): WaitingOnBody {
  if (waitingOn.kind === 'timer') return waitingOn;
  if (waitingOn.kind === 'operator') return waitingOn;
  if (waitingOn.kind === 'slot') {
    // the limit's key (it names the organization or trigger) is internal: scope, limit and place only
    return { kind: 'slot', scope: waitingOn.scope, limit: waitingOn.limit, ...(waitingOn.position === undefined ? {} : { position: waitingOn.position }) };
  }
  const decided = new Set(waitingOn.decisions.map((d) => d.approver.toLowerCase()));
  return {
    kind: waitingOn.kind,
    stepIndex: waitingOn.stepIndex,
    ...(waitingOn.stepPath === undefined ? {} : { stepPath: waitingOn.stepPath }),
    deadline: waitingOn.deadline,
    required: waitingOn.required,
    approvals: waitingOn.decisions.filter((d) => d.decision === 'approve').length,
    approvers: waitingOn.approvers.filter((a) => !decided.has(a.toLowerCase())),
  };
}

/**
 * 2.5, plus `error` when the run failed or timed out, `waitingOn` while it is PAUSED (or PENDING for a slot), `callback`
 * when it names a completion callback and `origin` when it is a rerun or resumption.
 */
export function statusBody(view: RunView): StatusBody {
  const stepStatus: StatusBody['stepStatus'] = {};
  const stepInfo: StatusBody['stepInfo'] = {};
  for (const [index, step] of Object.entries(view.steps)) {
    stepStatus[index] = step.status;
    stepInfo[index] = {
      status: step.status, name: step.name, executionOrder: step.executionOrder ?? null,
      ...(step.progress ? { progress: step.progress } : {}), ...(step.reusedFrom ? { reusedFrom: step.reusedFrom } : {}),
    };
  }
  return {
    automationId: view.memo.automationId,
    runId: view.runId,
    status: view.status,
    ...(view.error ? { error: view.error } : {}),
    ...(view.reasonCode ? { reasonCode: view.reasonCode } : {}),
    ...(view.waitingOn ? { waitingOn: waitingOnBody(view.waitingOn) } : {}),
    ...(view.operatorPause ? { operatorPause: { ...view.operatorPause } } : {}),
    stepStatus,
    stepInfo,
    ...(view.callback ? { callback: { ...view.callback } } : {}),
    ...(view.memo.origin ? { origin: { ...view.memo.origin } } : {}),
    ...(view.memo.sourceCommit ? { sourceCommit: view.memo.sourceCommit } : {}),
  };
}

/** 2.6. */
export function resultsBody(view: RunView, designated: DesignatedOutput | undefined, ctx: BodyContext): ResultsBody {
  const link = (key: string, mimeType: string, name?: string) => ctx.signer.sign(key, ctx.resultUrlTtlSeconds, { name, type: mimeType });
  const designatedOutcome = designated ? view.outcomes.find((o) => o.stepIndex === designated.stepIndex && o.stepPath === undefined && o.status === 'COMPLETE') : undefined;
  const usage = sumUsage(view.outcomes.flatMap((o) => (o.usage ? [o.usage] : [])));
  return {
    ...runHeader(view),
    results: view.outcomes.map((o) => ({
      stepIndex: o.stepIndex,
      ...(o.stepPath === undefined ? {} : { stepPath: o.stepPath }),
      stepVersion: stepVersion(view, o.stepIndex),
      resultUrls: resultUrls(o, ctx),
      exitCode: o.exitCode,
      duration: o.duration,
      ...(o.usage?.length ? { usage: usageView(o.usage) } : {}),
    })),
    ...(usage.length ? { usage: usageView(usage) } : {}),
    ...(designated && designatedOutcome ? {
      designatedOutput: (() => {
        const file = designatedOutcome.files['output.txt'];
        const fileName = designated.fileName ?? 'output.txt';
        // the step's text under the name the trigger gives it: `echo.json` is JSON whatever the step's result type; without a name, the stored type
        const mimeType = designated.fileName === undefined ? file.mimeType : mimeTypeOfName(designated.fileName, file.mimeType);
        return { url: link(file.key, mimeType, fileName), fileName, mimeType, size: file.size };
      })(),
    } : {}),
  };
}
