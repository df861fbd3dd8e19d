/**
 * Runs on Temporal: start one (the run ID is the workflow ID), wait for it within a window, and
 * read its state back. Open runs answer through the `state` query; closed runs through their
 * result or failure (no worker needed); describe tells which, and PENDING is a run whose first
 * workflow task has not completed yet.
 */
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ApplicationFailure, arrayFromPayloads, TimeoutFailure, CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { runAutomation } from '../../workflows';
import { CallbackState, DecisionRefusal, ENGINE_LEVEL, FailureType, type ApprovalDecision, type CallbackStatus, type StepTransition, type DecisionRequest, type RunInput, type RunState, type RunStatus, type RunSummary, type StepOutcome, type StepState, type WaitingOn } from '../common/run-types';
import { buildRunMemo, type RunMemo } from '../common/run-memo';
import { runExecutionTimeoutMs } from '../common/run-time-limit';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { channelReady, GRPC_UNAVAILABLE, temporalStatusCode } from '../../temporal/client';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { FinishedRunCache } from './finished-run-cache';
import { LruCache } from '../common/lru-cache';

export type { RunMemo } from '../common/run-memo';

export interface RunView {
  runId: string;
  memo: RunMemo;
  status: RunStatus;
  steps: Record<string, StepState>;
  outcomes: StepOutcome[];
  waitingOn?: WaitingOn;
  error?: string;
  /** closed, and everything shown is the run's last word: safe to keep (finished-run-cache.ts) */
  final?: boolean;
  /** step status changes as the workflow logged them (the status stream's events) */
  transitions?: StepTransition[];
  /** the completion callback's state, for a run that names one (never kept with the view: it changes after the run closed) */
  callback?: CallbackStatus;
}

export interface RunListEntry {
  runId: string;
  automationId: string;
  automationVersion: number;
  status: RunStatus;
  started: string;
  closed: string | null;
}

const TEMPORAL_STATUSES: Partial<Record<RunStatus, string[]>> = {
  RUNNING: ['Running'],
  PAUSED: ['Running'],
  PENDING: ['Running'],
  COMPLETE: ['Completed'],
  FAILED: ['Failed', 'Terminated', 'Canceled'],
  // a run over its own time limit (or a step over its own) closes Failed with memo endedAs TIMEOUT
  TIMEOUT: ['TimedOut', 'Failed'],
};

const CONTRACT_STATUS: Record<string, RunStatus> = {
  RUNNING: 'RUNNING', COMPLETED: 'COMPLETE', FAILED: 'FAILED', TIMED_OUT: 'TIMEOUT', TERMINATED: 'FAILED', CANCELLED: 'FAILED',
};

/** Values in visibility queries come from our own IDs; refuse anything that could break the quoting. */
function quoteSafe(value: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(value)) throw new Error(`not an ID: ${JSON.stringify(value)}`);
  return value;
}

export type DecideOutcome =
  | { ok: true; decision: ApprovalDecision }
  | { ok: false; refusal: keyof typeof DecisionRefusal; message: string };

const DECIDE_DEADLINE_MS = 10_000;

/** What result() answered for a closed run: its summary, or the failure it threw. */
type Closing = { summary: RunSummary } | { failure: WorkflowFailedError };

/** The failure a FAILED run's result() throws. */
async function failureOf(handle: WorkflowHandle<typeof runAutomation>): Promise<unknown> {
  try {
    await handle.result();
  } catch (err) {
    return err;
  }
  throw new Error(`run ${handle.workflowId} is FAILED in describe but its result succeeded`);
}

export type WaitOutcome = { done: true; view: RunView } | { done: false };

/** Workflow task events before the first one completes: started, scheduled, (started). */
const HISTORY_LENGTH_BEFORE_FIRST_TASK = 3;
const QUERY_DEADLINE_MS = 5000;
/**
 * How long to ask Temporal whether a run exists after its start failed: the caller is waiting, and
 * a reachable Temporal answers a describe in milliseconds (after a start that found Temporal
 * unreachable, this one usually fails too, and the caller gets its 503 this much later).
 */
const EXISTS_DEADLINE_MS = 1000;
/** See FLOWGATE_TEMPORAL_UNREACHABLE_MS (src/config/config.ts). */
const DEFAULT_UNREACHABLE_MS = 2000;
/** How long a poll waits for a run whose workflow reported its end to be closed by Temporal. */
const CLOSING_WAIT_MS = 3000;

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
}

/** How many delivered or failed callbacks' states one process keeps (they never change). */
const KEPT_CALLBACK_STATES = 5_000;

export class RunService {
  private readonly callbacks = new LruCache<string, CallbackStatus>({ maxEntries: KEPT_CALLBACK_STATES, ttlMs: Infinity });
  /** a client over the local worker's connection (eager starts), once that worker runs */
  private eagerStarter?: Client;
  private readonly unreachableMs: number;

  /** `finished`: where closed runs' views are kept, so polling them needs no Temporal call */
  constructor(private readonly client: Client, private readonly taskQueue: string, private readonly log: Logger,
    private readonly finished?: FinishedRunCache, private readonly metrics?: Pick<FlowgateMetrics, 'eagerStart'>, options: RunServiceOptions = {}) {
    this.unreachableMs = options.unreachableMs ?? DEFAULT_UNREACHABLE_MS;
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
    if (options.taskTtlMs !== undefined) memo.taskTtlMs = options.taskTtlMs;
    const eagerStarter = options.eager && this.eagerStarter && channelReady(this.client.connection) ? this.eagerStarter : undefined;
    try {
      const starting = (eagerStarter ?? this.client).workflow.start<typeof runAutomation>('runAutomation', {
        requestEagerStart: eagerStarter !== undefined,
        workflowId: runId,
        taskQueue: this.taskQueue,
        args: [{ ...input, runId, engine: ENGINE_LEVEL }],
        workflowExecutionTimeout: runExecutionTimeoutMs(input.definition.timeoutSeconds),
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        memo: memo as unknown as Record<string, unknown>,
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.orgId, value: input.orgId },
          { key: SEARCH_ATTRIBUTES.automationId, value: input.automationId },
          { key: SEARCH_ATTRIBUTES.triggerId, value: input.triggerId },
        ],
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
    const lookAgain = Symbol('look again');
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([starting, new Promise<symbol>((resolve) => { timer = setTimeout(() => resolve(lookAgain), this.unreachableMs); })])
        .finally(() => clearTimeout(timer));
      if (outcome !== lookAgain) return outcome as T;
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
      await this.client.connection.withDeadline(Date.now() + EXISTS_DEADLINE_MS, () => this.handle(runId).describe());
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
    const closing = await this.closingWithin(runId, windowMs);
    if (!closing) return { done: false };
    // The view reuses what result() answered instead of reading the closing event again; with
    // the memo too, a completed run's view needs nothing more from Temporal.
    const view = memo && 'summary' in closing ? completedView(runId, memo, closing.summary) : await this.view(runId, closing);
    if (!view) throw new Error(`run ${runId} vanished after it closed`);
    await this.finished?.remember(view);
    return { done: true, view };
  }

  /** The run's result or failure once it closes; undefined if it is still open after `windowMs`. */
  private async closingWithin(runId: string, windowMs: number): Promise<Closing | undefined> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), windowMs);
    try {
      return { summary: await this.client.connection.withAbortSignal(abort.signal, () => this.handle(runId).result()) };
    } catch (err) {
      if (abort.signal.aborted) return undefined;
      if (!(err instanceof WorkflowFailedError)) throw err;
      return { failure: err };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The run as flowgate shows it; undefined when Temporal does not know it. `closing` is the run's
   * result or failure when the caller already has it.
   */
  async view(runId: string, closing?: Closing): Promise<RunView | undefined> {
    const kept = await this.finished?.get(runId);
    if (kept) return this.withCallback(kept);
    const view = await this.viewFromTemporal(runId, closing);
    if (view?.final) await this.finished?.remember(view);
    return view && this.withCallback(view);
  }

  /** The view with its callback's state (a copy: kept views are shared). */
  private async withCallback(view: RunView): Promise<RunView> {
    if (!view.memo.callback) return view;
    return { ...view, callback: await this.callbackStatus(view) };
  }

  /**
   * Where the run's completion callback is: PENDING while the run is open, then the delivery
   * workflow's pending activity (attempts so far, last error) or its result. Final states are kept.
   */
  async callbackStatus(view: Pick<RunView, 'runId' | 'status'>): Promise<CallbackStatus> {
    const known = this.callbacks.get(view.runId);
    if (known) return known;
    const ended = view.status === 'COMPLETE' || view.status === 'FAILED' || view.status === 'TIMEOUT';
    const handle = this.client.workflow.getHandle(`${view.runId}-callback`);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (!ended) return { state: CallbackState.PENDING, attempts: 0 };
      // The run closed without starting it (its workflow timeout, a termination), or is closing.
      const closed = await this.client.workflow.getHandle(view.runId).describe().then((d) => d.status.name !== 'RUNNING', () => false);
      return { state: closed ? CallbackState.NOT_SENT : CallbackState.PENDING, attempts: 0 };
    }
    if (description.status.name === 'COMPLETED') {
      const status = await handle.result() as CallbackStatus;
      this.callbacks.set(view.runId, status);
      return status;
    }
    if (description.status.name !== 'RUNNING') return { state: CallbackState.FAILED, attempts: 0, lastError: `the delivery workflow ended as ${description.status.name}` };
    const pending = description.raw.pendingActivities?.[0];
    const attempt = pending?.attempt ?? 1;
    // STARTED: the attempt is under way and counts; SCHEDULED after a failure: waiting to retry.
    const inFlight = pending?.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    return {
      state: CallbackState.DELIVERING,
      attempts: inFlight ? attempt : attempt - 1,
      ...(pending?.lastFailure?.message ? { lastError: pending.lastFailure.message } : {}),
    };
  }

  private async viewFromTemporal(runId: string, closing?: Closing): Promise<RunView | undefined> {
    const handle = this.handle(runId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
    const stored = description.memo as unknown as RunMemo | undefined;
    if (!stored?.orgId) return undefined; // not a flowgate run
    // A scheduled run's memo is its schedule's, shared by all its runs: the start is the run's own.
    const memo = stored.type === 'SCHEDULE' ? { ...stored, started: description.startTime.toISOString() } : stored;
    const base = { runId, memo };
    switch (description.status.name) {
      case 'RUNNING': {
        const historyLength = Number(description.raw.workflowExecutionInfo?.historyLength ?? 0);
        if (historyLength <= HISTORY_LENGTH_BEFORE_FIRST_TASK) return { ...base, status: 'PENDING', steps: stepsFromMemo(memo, 'PENDING'), outcomes: [] };
        const state = await this.queryState(handle);
        if (!state) return { ...base, status: 'RUNNING', steps: stepsFromMemo(memo, 'PENDING'), outcomes: [] };
        if (!closing && (state.status === 'COMPLETE' || state.status === 'FAILED' || state.status === 'TIMEOUT')) {
          // The workflow has ended its work but Temporal has not closed it yet (its last task is on
          // its way): answer from the closed run, so a terminal status is only shown once it is final
          // and kept (a poll that saw it must find it again without Temporal).
          const closed = await this.closingWithin(runId, CLOSING_WAIT_MS);
          if (closed) return this.viewFromTemporal(runId, closed);
        }
        return { ...base, status: state.status, steps: state.steps, outcomes: state.outcomes, ...(state.waitingOn ? { waitingOn: state.waitingOn } : {}), ...(state.error ? { error: state.error } : {}),
          ...(state.transitions ? { transitions: state.transitions } : {}) };
      }
      case 'COMPLETED': {
        return completedView(runId, memo, closing && 'summary' in closing ? closing.summary : await handle.result());
      }
      case 'FAILED':
        return this.failedView(handle, base, closing && 'failure' in closing ? closing.failure : await failureOf(handle));
      case 'TIMED_OUT':
        return this.closedWithoutSummary(handle, base, 'TIMEOUT', `the run exceeded Temporal's workflow execution timeout of ${Math.round(Number(description.raw.executionConfig?.workflowExecutionTimeout?.seconds ?? 0))} seconds`);
      case 'TERMINATED':
        return this.closedWithoutSummary(handle, base, 'FAILED', 'the run was terminated by an operator');
      case 'CANCELLED':
        return this.closedWithoutSummary(handle, base, 'FAILED', 'the run was cancelled');
      default:
        return this.closedWithoutSummary(handle, base, 'FAILED', `the run ended as ${description.status.name}`);
    }
  }

  /**
   * An organization's runs from Temporal visibility, newest first. Open runs show as RUNNING here
   * (telling PAUSED or PENDING apart takes a query per run: use the status endpoint for that).
   */
  async list(orgId: string, filter: { workflowId?: string; status?: RunStatus; limit: number }): Promise<RunListEntry[]> {
    const clauses = [`WorkflowType = 'runAutomation'`, `${SEARCH_ATTRIBUTES.orgId.name} = '${quoteSafe(orgId)}'`];
    if (filter.workflowId) clauses.push(`${SEARCH_ATTRIBUTES.automationId.name} = '${quoteSafe(filter.workflowId)}'`);
    const statuses = filter.status ? TEMPORAL_STATUSES[filter.status] : undefined;
    if (statuses) clauses.push(`(${statuses.map((s) => `ExecutionStatus = '${s}'`).join(' OR ')})`);
    const entries: RunListEntry[] = [];
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const memo = execution.memo as unknown as RunMemo | undefined;
      const status = memo?.endedAs ?? CONTRACT_STATUS[execution.status.name] ?? 'FAILED';
      // Temporal's Failed covers FAILED and (endedAs) TIMEOUT runs: keep those the filter asked for.
      if ((filter.status === 'FAILED' || filter.status === 'TIMEOUT') && status !== filter.status) continue;
      entries.push({
        runId: execution.workflowId,
        automationId: memo?.automationId ?? '',
        automationVersion: memo?.automationVersion ?? 0,
        status,
        started: execution.startTime.toISOString(),
        closed: execution.closeTime?.toISOString() ?? null,
      });
      if (entries.length >= filter.limit) break;
    }
    return entries;
  }

  /** The inputs a run was started with, read from its first history event (no worker needed). */
  async startedInputs(runId: string): Promise<RunInput['inputs']> {
    return (await this.startedInput(runId)).inputs;
  }

  /** The whole input a run was started with (its first history event). */
  async startedInput(runId: string): Promise<RunInput> {
    const { history } = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace, execution: { workflowId: runId }, maximumPageSize: 1,
    });
    const payloads = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
    const [input] = arrayFromPayloads(this.client.workflow.options.loadedDataConverter.payloadConverter, payloads) as [RunInput | undefined];
    if (!input) throw new Error(`run ${runId} has no start input`);
    return input;
  }

  /**
   * Delivers an approval decision through the `decide` update: the workflow validates it and the
   * caller learns at once whether it was taken. Needs a worker; waits at most DECIDE_DEADLINE_MS.
   */
  async decide(runId: string, request: DecisionRequest): Promise<DecideOutcome> {
    const handle = this.handle(runId);
    try {
      const decision = await this.client.connection.withDeadline(Date.now() + DECIDE_DEADLINE_MS,
        () => handle.executeUpdate<ApprovalDecision, [DecisionRequest]>('decide', { args: [request] }));
      return { ok: true, decision };
    } catch (err) {
      const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type && cause.type in DecisionRefusal) {
        return { ok: false, refusal: cause.type as keyof typeof DecisionRefusal, message: cause.message };
      }
      // Unreachable: a describe would only make the caller wait for its 503 twice as long.
      if (temporalStatusCode(err) === GRPC_UNAVAILABLE) throw err;
      // A closed run cannot take updates; say so the same way as a run that is not waiting.
      const description = await handle.describe().catch(() => undefined);
      if (description && description.status.name !== 'RUNNING') {
        return { ok: false, refusal: 'NOT_WAITING', message: `the run is ${description.status.name.toLowerCase()}; it is not waiting for a decision` };
      }
      throw err;
    }
  }

  /**
   * Requests Temporal cancellation of an open run: the current step's activity is cancelled and
   * the run closes as CANCELLED, which flowgate reports as FAILED with error "the run was
   * cancelled". False when the run is already closed.
   */
  async cancel(runId: string): Promise<boolean> {
    const handle = this.handle(runId);
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return false;
    await this.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.cancel());
    return true;
  }

  private handle(runId: string): WorkflowHandle<typeof runAutomation> {
    return this.client.workflow.getHandle<typeof runAutomation>(runId);
  }

  private async queryState(handle: WorkflowHandle<typeof runAutomation>): Promise<RunState | undefined> {
    try {
      return await this.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query<RunState>('state'));
    } catch (err) {
      this.log.warn('state query failed; is a worker running?', { runId: handle.workflowId, error: (err as Error).message });
      return undefined;
    }
  }

  private async failedView(handle: WorkflowHandle<typeof runAutomation>, base: { runId: string; memo: RunMemo }, err: unknown): Promise<RunView> {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && (cause.type === FailureType.STEP_FAILED || cause.type === FailureType.STEP_TIMEOUT || cause.type === FailureType.RUN_TIMEOUT)) {
      const summary = cause.details?.[0] as RunSummary | undefined;
      if (summary) {
        return { ...base, status: summary.status, steps: summary.steps ?? stepsFromOutcomes(base.runId, base.memo, summary.outcomes, 'PENDING'), outcomes: summary.outcomes, error: cause.message, final: true,
          ...(summary.transitions ? { transitions: summary.transitions } : {}) };
      }
    }
    const reason = cause instanceof TimeoutFailure ? 'the run timed out'
      : cause instanceof CancelledFailure ? 'the run was cancelled'
        : cause instanceof TerminatedFailure ? 'the run was terminated'
          : cause?.message ?? (err as Error).message;
    return this.closedWithoutSummary(handle, base, 'FAILED', reason);
  }

  /** Closed without a summary of its own: the state query replays the history, if a worker is there. */
  private async closedWithoutSummary(handle: WorkflowHandle<typeof runAutomation>, base: { runId: string; memo: RunMemo },
    status: 'FAILED' | 'TIMEOUT', error: string): Promise<RunView> {
    const state = await this.queryState(handle);
    const outcomes = state?.outcomes ?? [];
    const steps = state?.steps ?? stepsFromMemo(base.memo, 'PENDING');
    for (const step of Object.values(steps)) {
      if (step.status === 'RUNNING' || step.status === 'PAUSED') step.status = status;
    }
    // Without the state query's answer the steps are guesses: not the run's last word.
    return { ...base, status, steps, outcomes, error, ...(state ? { final: true } : {}), ...(state?.transitions ? { transitions: state.transitions } : {}) };
  }
}

function completedView(runId: string, memo: RunMemo, summary: RunSummary): RunView {
  // Summaries of runs before nested and SKIPPED steps carry no `steps`: derive them from the outcomes.
  return { runId, memo, status: 'COMPLETE', steps: summary.steps ?? stepsFromOutcomes(runId, memo, summary.outcomes, 'COMPLETE'), outcomes: summary.outcomes, final: true,
    ...(summary.transitions ? { transitions: summary.transitions } : {}) };
}

function stepsFromMemo(memo: RunMemo, status: RunStatus): Record<string, StepState> {
  return Object.fromEntries(memo.steps.map((s, i) => [String(i + 1), { name: s.name, type: s.type as StepState['type'], status }]));
}

function stepsFromOutcomes(runId: string, memo: RunMemo, outcomes: StepOutcome[], notRun: RunStatus): Record<string, StepState> {
  const steps = stepsFromMemo(memo, notRun);
  outcomes.forEach((outcome, order) => {
    const step = steps[String(outcome.stepIndex)];
    if (step) Object.assign(step, { status: outcome.status, executionOrder: order + 1 });
    // A resumed run's reused outcome keeps the files of the run that produced it (runs/<org>/<run>/…).
    const producer = outcome.files['output.txt'].key.split('/')[2];
    if (step && memo.origin?.kind === 'resume' && producer && producer !== runId) step.reusedFrom = producer;
  });
  return steps;
}
