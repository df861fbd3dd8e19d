/**
 * Runs on Temporal: start one (the run ID is the workflow ID), wait for it within a window, read
 * its view, decide its approval, cancel it. Reading a view is run-reader.ts (kept views:
 * finished-run-cache.ts), its callback's state callback-status.ts, run lists run-list.ts, its
 * start input run-history.ts; this service joins them for the gateway and the tool servers.
 */
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { startPriority } from '../common/priority';
import { runDetailsText, runSummaryText } from '../common/run-labels';
import { ENGINE_LEVEL, type CallbackStatus, type DecisionRequest, type PauseRequest, type RunInput } from '../common/run-types';
import { buildRunMemo, type RunMemo } from '../common/run-memo';
import { runExecutionTimeoutMs, runLifetimeSeconds } from '../common/run-time-limit';
import { nameAttribute, SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { WORKFLOW_TYPES, type RunAutomationWorkflow } from '../common/workflow-contracts';
import { channelReady } from '../../temporal/client';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import { CallbackStatusReader } from './callback-status';
import { cancelRun, type CancelOutcome } from './run-cancel';
import { deliverPause, type PauseOutcome } from './run-pause';
import type { FinishedRunCache } from './finished-run-cache';
import { startedInput } from './run-history';
import { listRuns, type RunListEntry, type RunListFilter } from './run-list';
import { RunReader, type Closing } from './run-reader';
import { RunDecisions, type DecideOutcome, type DecisionReport } from './run-decisions';
import { completedView, type RunBrief, type RunView } from './run-view';

export type { RunMemo } from '../common/run-memo';
// Where importers found these before the run service was split (issue 29).
export type { RunListEntry } from './run-list';
export type { RunBrief, RunView } from './run-view';
export type { DecideOutcome, DecisionReport } from './run-decisions';
export { DecisionUnconfirmedError } from './run-decisions';
export type { CancelOutcome } from './run-cancel';
export type { PauseOutcome } from './run-pause';

export type WaitOutcome = { done: true; view: RunView } | { done: false };

/**
 * How long to ask Temporal whether a run exists after its start failed: the caller is waiting, and
 * a reachable Temporal answers a describe in milliseconds (after a start that found Temporal
 * unreachable, this one usually fails too, and the caller gets its 503 this much later).
 */
const EXISTS_DEADLINE_MS = 1000;
/** See FLOWGATE_TEMPORAL_UNREACHABLE_MS (src/config/config.ts). */
const DEFAULT_UNREACHABLE_MS = 2000;

/** A run ID derived from the trigger and an Idempotency-Key: the same call twice names the same workflow. */
export function idempotentRunId(orgId: string, triggerId: string, idempotencyKey: string): string {
  const hex = createHash('sha256').update(`${orgId}\n${triggerId}\n${idempotencyKey}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The ID a started run gets: derived from the Idempotency-Key when there is one, else fresh. The
 * gateway chooses it before start, so that after a start that failed it can ask about that run.
 */
export function runIdFor(orgId: string, triggerId: string, idempotencyKey?: string): string {
  return idempotencyKey ? idempotentRunId(orgId, triggerId, idempotencyKey) : randomUUID();
}

export interface StartOptions {
  /** the MCP task's ttl, for a run started as a task (kept in the memo) */
  taskTtlMs?: number;
  /**
   * The caller waits for the run: ask Temporal to hand its first workflow task straight to this
   * process's worker (eager start), which saves the matching round trip. Used only when a worker
   * runs in this process (startEagerlyThrough); a start without a free local worker slot is an
   * ordinary start.
   */
  eager?: boolean;
}

/**
 * A start over the worker's connection that has not answered while the gateway's own connection
 * finds Temporal unreachable: it goes on in the background and may still create the run, so the
 * run's stored files must stay and the caller must be told the start is unconfirmed.
 */
export class StartInFlightError extends Error {
  constructor(readonly runId: string, waitedMs: number) {
    super(`the start of run ${runId} has not answered after ${waitedMs} ms and Temporal looks unreachable`);
    this.name = 'StartInFlightError';
  }
}

export interface RunServiceOptions {
  /** FLOWGATE_TEMPORAL_UNREACHABLE_MS: how often an eager start's wait looks whether Temporal is reachable */
  unreachableMs?: number;
  /** how long a decision waits for the run's answer before it is recorded by signal (run-decisions.ts) */
  decisionWaitMs?: number;
}


export class RunService {
  private readonly reader: RunReader;
  private readonly callbacks: CallbackStatusReader;
  private readonly decisions: RunDecisions;
  /** a client over the local worker's connection (eager starts), once that worker runs */
  private eagerStarter?: Client;
  private readonly unreachableMs: number;

  /** `finished`: where closed runs' views are kept, so polling them needs no Temporal call */
  constructor(private readonly client: Client, private readonly taskQueue: string, private readonly log: Logger,
    private readonly finished?: FinishedRunCache, private readonly metrics?: Pick<FlowgateMetrics, 'eagerStart'>, options: RunServiceOptions = {}) {
    this.unreachableMs = options.unreachableMs ?? DEFAULT_UNREACHABLE_MS;
    this.reader = new RunReader(client, log);
    this.callbacks = new CallbackStatusReader(client);
    this.decisions = new RunDecisions(client, log, { ...(options.decisionWaitMs === undefined ? {} : { updateWaitMs: options.decisionWaitMs }) });
  }

  /** Starts with `eager` go through `client`: one over the connection of a worker of this task queue in this process. */
  startEagerlyThrough(client: Client): void {
    this.eagerStarter = client;
  }

  /**
   * Starts the run as `runId` (runIdFor); with an idempotency key, a second call finds the first
   * call's run instead. An eager start is asked for only while the gateway's connection has a live
   * connection to Temporal: the worker's connection cannot be told to give up on an unreachable one
   * (see eagerly()), the gateway's gives up after FLOWGATE_TEMPORAL_UNREACHABLE_MS.
   */
  async start(input: Omit<RunInput, 'runId'>, idempotencyKey?: string,
    runId: string = runIdFor(input.orgId, input.triggerId, idempotencyKey), options: StartOptions = {}): Promise<{ runId: string; existing: boolean }> {
    const memo: RunMemo = buildRunMemo(input);
    const via = options.taskTtlMs === undefined ? undefined : 'mcp-task';
    if (options.taskTtlMs !== undefined) memo.taskTtlMs = options.taskTtlMs;
    const eagerStarter = options.eager && this.eagerStarter && channelReady(this.client.connection) ? this.eagerStarter : undefined;
    try {
      const starting = (eagerStarter ?? this.client).workflow.start<RunAutomationWorkflow>(WORKFLOW_TYPES.runAutomation, {
        requestEagerStart: eagerStarter !== undefined,
        workflowId: runId,
        taskQueue: this.taskQueue,
        args: [{ ...input, runId, engine: ENGINE_LEVEL }],
        // a limited run's own time limit counts from its slot (a held one's from its release); it waits for them at most so long
        workflowExecutionTimeout: runExecutionTimeoutMs(runLifetimeSeconds(input)),
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        memo,
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.orgId, value: input.orgId },
          { key: SEARCH_ATTRIBUTES.automationId, value: input.automationId },
          { key: SEARCH_ATTRIBUTES.triggerId, value: input.triggerId },
          { key: SEARCH_ATTRIBUTES.workflowName, value: nameAttribute(input.automationName) },
        ],
        staticSummary: runSummaryText(input, via),
        staticDetails: runDetailsText(input, via),
        // the organization as fairness key, the trigger's priority: inherited by everything the run starts
        priority: startPriority(input.orgId, input.priority),
      });
      const handle = eagerStarter ? await this.eagerly(starting, runId) : await starting;
      if (eagerStarter) this.metrics?.eagerStart(handle.eagerlyStarted);
      return { runId, existing: false };
    } catch (err) {
      if (idempotencyKey && err instanceof WorkflowExecutionAlreadyStartedError) return { runId, existing: true };
      throw err;
    }
  }

  /**
   * Awaits a start over the worker's native connection. The Rust core behind it retries an
   * unreachable Temporal for about 10 s, whatever deadline the call carries; a slow but reachable
   * Temporal (a burst of starts) must still be waited for. So the start is awaited as long as the
   * gateway's own connection to Temporal is live, looked at every FLOWGATE_TEMPORAL_UNREACHABLE_MS;
   * once it is not, StartInFlightError, and the start goes on without its caller.
   */
  private async eagerly<T>(starting: Promise<T>, runId: string): Promise<T> {
    const began = Date.now();
    const started = starting.then((value) => ({ value }));
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([started, new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), this.unreachableMs); })])
        .finally(() => clearTimeout(timer));
      if (outcome) return outcome.value;
      if (!channelReady(this.client.connection)) {
        starting.then(
          () => this.log.warn('an eager start whose caller was told it is unconfirmed went through', { runId }),
          (err: unknown) => this.log.warn('an eager start whose caller was told it is unconfirmed failed', { runId, error: err }),
        );
        throw new StartInFlightError(runId, Date.now() - began);
      }
    }
  }

  /**
   * Whether Temporal has a workflow `runId`, for a caller whose start of it failed (the server may
   * have created it all the same). Throws when Temporal cannot tell within EXISTS_DEADLINE_MS.
   */
  async exists(runId: string): Promise<boolean> {
    try {
      await this.client.connection.withDeadline(Date.now() + EXISTS_DEADLINE_MS, () => this.reader.handle(runId).describe());
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /**
   * Waits for the run to close, at most `windowMs`; the run itself is never cancelled by this.
   * `memo`: the run's memo when the caller started it, so a run that completed needs no describe.
   */
  async waitFor(runId: string, windowMs: number, memo?: RunMemo): Promise<WaitOutcome> {
    const closing = await this.reader.closingWithin(runId, windowMs);
    if (!closing) return { done: false };
    // The view reuses what result() answered instead of reading the closing event again; with
    // the memo too, a completed run's view needs nothing more from Temporal.
    const view = memo && 'summary' in closing ? completedView(runId, memo, closing.summary) : await this.view(runId, closing);
    if (!view) throw new Error(`run ${runId} vanished after it closed`);
    await this.finished?.remember(view);
    return { done: true, view };
  }

  /**
   * The run as flowgate shows it; undefined when Temporal does not know it. `closing` is the run's
   * result or failure when the caller already has it.
   */
  async view(runId: string, closing?: Closing): Promise<RunView | undefined> {
    const kept = await this.finished?.get(runId);
    if (kept) return this.withCallback(kept);
    const view = await this.reader.read(runId, closing);
    if (view?.final) await this.finished?.remember(view);
    return view && this.withCallback(view);
  }

  /** The view with its callback's state (a copy: kept views are shared). */
  private async withCallback(view: RunView): Promise<RunView> {
    if (!view.memo.callback) return view;
    return { ...view, callback: await this.callbackStatus(view) };
  }

  /** Where the run's completion callback is (callback-status.ts). */
  callbackStatus(view: Pick<RunView, 'runId' | 'status'>): Promise<CallbackStatus> {
    return this.callbacks.read(view);
  }

  /** An organization's runs, newest first (run-list.ts: open runs show as RUNNING). */
  list(orgId: string, filter: RunListFilter): Promise<RunListEntry[]> {
    return listRuns(this.client, orgId, filter);
  }

  /** The inputs a run was started with, read from its first history event (no worker needed). */
  async startedInputs(runId: string): Promise<RunInput['inputs']> {
    return (await this.startedInput(runId)).inputs;
  }

  /** The whole input a run was started with (its first history event). */
  startedInput(runId: string): Promise<RunInput> {
    return startedInput(this.client, runId);
  }

  /**
   * Whose the run is and whether it is open, from describe alone (a kept view for a closed one): no
   * worker needed, so an action on the run is authorized and a closed run refused whatever the
   * worker does. Undefined when Temporal does not know it.
   */
  async brief(runId: string): Promise<RunBrief | undefined> {
    const kept = await this.finished?.get(runId);
    if (kept) return { runId, memo: kept.memo, status: kept.status, open: false };
    return this.reader.brief(runId);
  }

  /**
   * Delivers an approval decision (run-decisions.ts): refused from what Temporal keeps when it can
   * be (a closed run, an approver the definition does not name), else applied through the `decide`
   * update, or, when the run does not answer within the decision wait, recorded by signal and
   * applied when the run reads it. Answers within about 4 s whatever the worker does.
   */
  async decide(run: RunBrief | string, request: DecisionRequest): Promise<DecideOutcome> {
    const brief = typeof run === 'string' ? await this.brief(run) : run;
    if (!brief) return { ok: false, refusal: 'NOT_WAITING', message: `no run ${String(run)}; it is not waiting for a decision` };
    return this.decisions.decide(brief, request);
  }

  /** What became of decision `decisionId` of the run `view` shows; undefined when the run never heard of it. */
  decisionReport(view: RunView, decisionId: string): Promise<DecisionReport | undefined> {
    return this.decisions.report(view, decisionId);
  }

  /**
   * Requests Temporal cancellation of an open run (run-cancel.ts): the current step's activity is
   * cancelled and the run closes as CANCELLED, which flowgate reports as FAILED with error "the run
   * was cancelled". Taken without a worker; 'closed' when the run had already ended.
   */
  async cancel(run: RunBrief | string): Promise<CancelOutcome> {
    const brief = typeof run === 'string' ? await this.brief(run) : run;
    return brief?.open ? cancelRun(this.client, brief.runId) : 'closed';
  }

  /**
   * An operator's pause (`paused: true`) or unpause of an open run (run-pause.ts): held at its next
   * step boundary; refused CLOSED when the run had already ended.
   */
  async pause(run: RunBrief | string, request: PauseRequest): Promise<PauseOutcome> {
    const brief = typeof run === 'string' ? await this.brief(run) : run;
    if (!brief?.open) return { ok: false, refusal: 'CLOSED', message: `the run is ${brief ? brief.status.toLowerCase() : 'unknown'}; only an open run can be paused or unpaused` };
    return deliverPause(this.client, brief.runId, request);
  }
}
