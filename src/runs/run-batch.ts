/**
 * Bulk actions on runs (issue 54): the gateway's side (start a batch, read it) and the batch
 * activities' (select the runs, act on one). A batch is a Temporal workflow (runBatch,
 * workflows/run-batch.ts) whose workflow ID is the batch ID, with the organization in its memo;
 * each run is acted on through the single-run services (RunService's cancel and pause,
 * RunRestarts' rerun and resume), so a batch refuses exactly what the single-run routes refuse.
 */
import { randomUUID } from 'node:crypto';
import { type Client } from '@temporalio/client';
import { describeIfKnown } from './describe';
import {
  BATCH_ACTIONS, BATCH_ID, INPUT_SCAN_MAX, inputsMatch, type BatchAction, type BatchFilter, type BatchInput, type BatchRunOutcome, type BatchState,
} from '../common/run-batch';
import { batchStateQuery, WORKFLOW_TYPES, type RunBatchWorkflow } from '../common/workflow-contracts';
import { startPriority } from '../common/priority';
import { isRecord } from '../common/narrow';
import { listRuns } from './run-list';
import type { RunRestarts } from './run-restarts';
import type { RunService } from './run-service';
import { QUERY_DEADLINE_MS } from './run-reader';

export interface RunBatchDeps {
  client: Client;
  taskQueue: string;
  runs: RunService;
  restarts: RunRestarts;
  /** the inputs a run was started with, stored inputs read back (TriggerService.startedInputs); unset: as Temporal has them */
  inputsOf?: (runId: string) => Promise<unknown>;
}

/** What a selection found (a dry run answers `count`, `scanned` and `capped`). */
export interface Selection {
  runIds: string[];
  /** the candidates Temporal visibility listed that were read one by one (all of them when nothing is refined) */
  scanned: number;
  /** the scan stopped at its cap (INPUT_SCAN_MAX, or five times the limit) before the limit was reached: older runs may match too */
  capped: boolean;
}

/** How many candidates a refined selection reads at once. */
const SCAN_CONCURRENCY = 8;

/** A batch as the gateway reads it: its state, or FAILED when the workflow itself did not finish (terminated, say). */
export type BatchReport = Omit<BatchState, 'status'> & { status: BatchState['status'] | 'FAILED'; error?: string; stateUnread?: true };

/** One run for the applyBatchAction activity. */
export interface BatchActionRequest {
  batchId: string;
  orgId: string;
  action: BatchAction;
  runId: string;
  by: string;
  reason?: string;
}

/** Statuses visibility cannot tell from RUNNING: the batch reads each open run's own status for them. */
const OPEN_SUBSTATES = new Set(['PAUSED', 'PENDING']);

export class RunBatches {
  constructor(private readonly deps: RunBatchDeps) {}

  /**
   * The runs of `orgId` the filter selects, newest first, at most `limit`. Status, workflow,
   * trigger and start time are asked of Temporal visibility; PAUSED, PENDING and `errorContains`
   * need each candidate's view (a query for an open run), `input` each candidate's start input
   * (decoded here: visibility cannot search sealed inputs), at most INPUT_SCAN_MAX candidates.
   */
  async select(orgId: string, filter: BatchFilter, limit: number): Promise<string[]> {
    return (await this.choose(orgId, filter, limit)).runIds;
  }

  /** As select, with how many candidates were read and whether the scan stopped at its cap (a dry run reports both). */
  async choose(orgId: string, filter: BatchFilter, limit: number): Promise<Selection> {
    const byView = filter.errorContains !== undefined || (filter.status !== undefined && OPEN_SUBSTATES.has(filter.status));
    const byInput = filter.input !== undefined && Object.keys(filter.input).length > 0;
    // a filter refined run by run reads a bounded number of candidates
    const candidates = byInput ? INPUT_SCAN_MAX : byView ? Math.max(limit, Math.min(limit * 5, 5000)) : limit;
    const listed = await listRuns(this.deps.client, orgId, {
      ...(filter.workflowId ? { workflowId: filter.workflowId } : {}),
      ...(filter.triggerId ? { triggerId: filter.triggerId } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.startedAfter ? { startedSince: filter.startedAfter } : {}),
      ...(filter.startedBefore ? { startedBefore: filter.startedBefore } : {}),
      limit: candidates,
    });
    const capped = (byView || byInput) && listed.length >= candidates;
    if (!byView && !byInput) return { runIds: listed.map((e) => e.runId), scanned: listed.length, capped: false };
    const needle = filter.errorContains?.toLowerCase();
    const fits = async (runId: string): Promise<boolean> => {
      if (byInput && !inputsMatch(await this.inputsOf(runId), filter.input ?? {})) return false;
      if (!byView) return true;
      const view = await this.deps.runs.view(runId);
      if (!view) return false;
      if (filter.status !== undefined && OPEN_SUBSTATES.has(filter.status) && view.status !== filter.status) return false;
      return needle === undefined || (view.error ?? '').toLowerCase().includes(needle);
    };
    const runIds: string[] = [];
    let scanned = 0;
    // a few candidates at a time, kept in their order (newest first)
    while (scanned < listed.length && runIds.length < limit) {
      const slice = listed.slice(scanned, scanned + SCAN_CONCURRENCY);
      const verdicts = await Promise.all(slice.map((entry) => fits(entry.runId)));
      scanned += slice.length;
      slice.forEach((entry, i) => {
        if (verdicts[i] && runIds.length < limit) runIds.push(entry.runId);
      });
    }
    return { runIds, scanned, capped: capped && runIds.length < limit };
  }

  /** The inputs a run was started with (stored inputs read back); undefined when they cannot be read. */
  private async inputsOf(runId: string): Promise<unknown> {
    try {
      return this.deps.inputsOf ? await this.deps.inputsOf(runId) : await this.deps.runs.startedInputs(runId);
    } catch {
      // a run sealed under a key this process lacks, or whose history is gone: no field matches
      return undefined;
    }
  }

  /** Acts on one run; a refusal is an outcome, an error (Temporal unreachable) throws and the activity is retried. */
  async apply(request: BatchActionRequest): Promise<BatchRunOutcome> {
    const { runId, orgId, action } = request;
    const refused = (code: string, message: string): BatchRunOutcome => ({ runId, outcome: 'refused', code, message });
    const brief = await this.deps.runs.brief(runId);
    if (!brief || brief.memo.orgId !== orgId) return refused('unknown_run', `no run ${runId}`);
    switch (action) {
      case 'cancel': {
        const outcome = await this.deps.runs.cancel(brief);
        return outcome === 'requested' ? { runId, outcome: 'succeeded', message: 'cancellation requested' } : refused('run_closed', 'the run had already ended');
      }
      case 'pause':
      case 'unpause': {
        const outcome = await this.deps.runs.pause(brief, { paused: action === 'pause', by: request.by, ...(request.reason ? { reason: request.reason } : {}) });
        if (!outcome.ok) return refused(outcome.refusal === 'CLOSED' ? 'run_closed' : 'refused', outcome.message);
        return { runId, outcome: 'succeeded', message: outcome.applied ? `${action}d` : `${action} recorded: the run takes it when it next runs` };
      }
      case 'rerun':
      case 'resume': {
        const view = await this.deps.runs.view(runId);
        if (!view) return refused('unknown_run', `no run ${runId}`);
        const key = `${request.batchId}:${runId}`;
        const started = action === 'rerun' ? await this.deps.restarts.rerun(view, 'latest', key) : await this.deps.restarts.resume(view, key);
        if (!started.ok) return refused(started.code.toLowerCase(), started.message);
        return { runId, outcome: 'succeeded', newRunId: started.runId };
      }
    }
  }

  /** Starts a batch; answers its ID. */
  async start(orgId: string, request: Omit<BatchInput, 'batchId' | 'orgId' | 'requested'>): Promise<string> {
    const batchId = `batch-${randomUUID()}`;
    const input: BatchInput = { ...request, batchId, orgId, requested: new Date().toISOString() };
    await this.deps.client.workflow.start<RunBatchWorkflow>(WORKFLOW_TYPES.runBatch, {
      workflowId: batchId, taskQueue: this.deps.taskQueue, args: [input], memo: { orgId, action: request.action, by: request.by, requested: input.requested, limit: request.limit },
      staticSummary: `${request.action} runs by filter (${request.by})`,
      priority: startPriority(orgId), // its sweeps' activities in its organization's turn (src/common/priority.ts)
    });
    return batchId;
  }

  /** The batch `batchId` of `orgId`; undefined when there is none (or it is another organization's). */
  async read(orgId: string, batchId: string): Promise<BatchReport | undefined> {
    if (!BATCH_ID.test(batchId)) return undefined;
    const handle = this.deps.client.workflow.getHandle<RunBatchWorkflow>(batchId);
    const description = await describeIfKnown(handle);
    if (!description) return undefined;
    if (description.type !== WORKFLOW_TYPES.runBatch || !isRecord(description.memo) || description.memo.orgId !== orgId) return undefined;
    const status = description.status.name;
    if (status === 'COMPLETED') return await handle.result();
    const { memo } = description;
    const action = BATCH_ACTIONS.find((a) => a === memo.action) ?? 'cancel';
    const base: BatchReport = {
      batchId, action, filter: {}, limit: typeof memo.limit === 'number' ? memo.limit : 0,
      by: typeof memo.by === 'string' ? memo.by : '', requested: typeof memo.requested === 'string' ? memo.requested : '',
      status: 'LISTING', total: 0, succeeded: 0, refused: 0, failed: 0, outcomes: [],
    };
    if (status !== 'RUNNING') return { ...base, status: 'FAILED', error: `the batch ended as ${status}` };
    try {
      return await this.deps.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(batchStateQuery));
    } catch {
      // no worker answers now: the batch goes on; its progress shows once one does
      return { ...base, status: 'RUNNING', stateUnread: true };
    }
  }
}
