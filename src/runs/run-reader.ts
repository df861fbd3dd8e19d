/**
 * Reads a run's view from Temporal. Open runs answer through the `state` query; closed runs
 * through their result or failure (no worker needed); describe tells which, and PENDING is a run
 * whose first workflow task has not completed yet.
 */
import { describeIfKnown } from './describe';
import { WorkflowFailedError, type Client, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import type { RunMemo } from '../common/run-memo';
import { SUMMARY_FAILURES, type RunState, type RunSummary, type WaitingOn } from '../common/run-types';
import { slotsWorkflowId } from '../common/slots';
import { slotGrantSignal, slotsQuery, stateQuery, type RunAutomationWorkflow, type RunSlotsWorkflow } from '../common/workflow-contracts';
import type { Logger } from '../observability/logger';
import { isRunMemo } from './run-memo-schema';
import { completedView, isEnded, isRunSummary, stepsFromMemo, stepsFromOutcomes, type RunBrief, type RunView } from './run-view';

/** What result() answered for a closed run: its summary, or the failure it threw. */
export type Closing = { summary: RunSummary } | { failure: WorkflowFailedError };

/** Workflow task events before the first one completes: started, scheduled, (started). */
const HISTORY_LENGTH_BEFORE_FIRST_TASK = 3;
export const QUERY_DEADLINE_MS = 5000;
/** How long a poll waits for a run whose workflow reported its end to be closed by Temporal. */
const CLOSING_WAIT_MS = 3000;
/**
 * How long one answer of a semaphore's queue serves the places of the runs waiting on it: many
 * waiting runs polled at once ask the semaphore once (one query in flight per semaphore, its answer
 * reused this long), so a place is at most this old and a busy worker is not asked the same query
 * by every poll.
 */
const QUEUE_REUSE_MS = 500;

/** A read of a semaphore's queue: `at` is when its answer came, undefined while it is in flight. */
type QueueRead = { at?: number; queue: Promise<readonly string[]> };

type RunHandle = WorkflowHandle<RunAutomationWorkflow>;

/** The failure a FAILED run's result() throws. */
async function failureOf(handle: RunHandle): Promise<unknown> {
  try {
    await handle.result();
  } catch (err) {
    return err;
  }
  throw new Error(`run ${handle.workflowId} is FAILED in describe but its result succeeded`);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class RunReader {
  /** The last (or in-flight) read of each semaphore's queue, by slot key. */
  private readonly queues = new Map<string, QueueRead>();

  constructor(private readonly client: Client, private readonly log: Logger) {}

  handle(runId: string): RunHandle {
    return this.client.workflow.getHandle<RunAutomationWorkflow>(runId);
  }

  /** The run's result or failure once it closes; undefined if it is still open after `windowMs`. */
  async closingWithin(runId: string, windowMs: number): Promise<Closing | undefined> {
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
   * The run as Temporal has it; undefined when Temporal does not know it or it is not a flowgate
   * run. `closing` is the run's result or failure when the caller already has it.
   */
  async read(runId: string, closing?: Closing): Promise<RunView | undefined> {
    const handle = this.handle(runId);
    const described = await this.described(handle);
    if (!described) return undefined;
    const { description, memo } = described;
    const base = { runId, memo };
    switch (description.status.name) {
      case 'RUNNING': {
        const historyLength = Number(description.raw.workflowExecutionInfo?.historyLength ?? 0);
        if (historyLength <= HISTORY_LENGTH_BEFORE_FIRST_TASK) return { ...base, status: 'PENDING', steps: stepsFromMemo(memo, 'PENDING'), outcomes: [] };
        const state = await this.queryState(handle);
        if (!state) return { ...base, status: await this.guessedStatus(handle, memo), steps: stepsFromMemo(memo, 'PENDING'), outcomes: [], stateUnread: true };
        if (!closing && isEnded(state.status)) {
          // The workflow has ended its work but Temporal has not closed it yet (its last task is on
          // its way): answer from the closed run, so a terminal status is only shown once it is final
          // and kept (a poll that saw it must find it again without Temporal).
          const closed = await this.closingWithin(runId, CLOSING_WAIT_MS);
          if (closed) return this.read(runId, closed);
        }
        const waitingOn = state.waitingOn?.kind === 'slot' ? await this.slotPlace(runId, state.waitingOn) : state.waitingOn;
        return { ...base, status: state.status, steps: state.steps, outcomes: state.outcomes, ...(waitingOn ? { waitingOn } : {}), ...(state.operatorPause ? { operatorPause: state.operatorPause } : {}), ...(state.error ? { error: state.error } : {}),
          ...(state.transitions ? { transitions: state.transitions } : {}), ...(state.decisionOutcomes ? { decisionOutcomes: state.decisionOutcomes } : {}) };
      }
      case 'COMPLETED': {
        return completedView(runId, memo, closing && 'summary' in closing ? closing.summary : await handle.result());
      }
      case 'FAILED':
        return this.failedView(handle, base, closing && 'failure' in closing ? closing.failure : await failureOf(handle));
      case 'TIMED_OUT':
        return this.closedWithoutSummary(handle, base, 'TIMEOUT', `the run exceeded Temporal's workflow execution timeout of ${Math.round(Number(description.raw.executionConfig?.workflowExecutionTimeout?.seconds ?? 0))} seconds`);
      case 'TERMINATED':
        return { ...await this.closedWithoutSummary(handle, base, 'FAILED', 'the run was terminated by an operator'), reasonCode: 'TERMINATED' };
      case 'CANCELLED':
        return { ...await this.closedWithoutSummary(handle, base, 'FAILED', 'the run was cancelled'), reasonCode: 'CANCELLED' };
      default:
        return this.closedWithoutSummary(handle, base, 'FAILED', `the run ended as ${description.status.name}`);
    }
  }

  /** The run's memo and whether it is open: describe alone, no worker needed. */
  async brief(runId: string): Promise<RunBrief | undefined> {
    const described = await this.described(this.handle(runId));
    if (!described) return undefined;
    const status = described.description.status.name;
    return { runId, memo: described.memo, status, open: status === 'RUNNING' };
  }

  /** The run's description and memo; undefined when Temporal does not know it or it is not a flowgate run. */
  private async described(handle: RunHandle): Promise<{ description: WorkflowExecutionDescription; memo: RunMemo } | undefined> {
    const description = await describeIfKnown(handle);
    if (!description) return undefined;
    const stored = description.memo;
    if (!isRunMemo(stored)) return undefined; // not a flowgate run
    // A scheduled run's memo is its schedule's, shared by all its runs: the start is the run's own.
    const memo = stored.type === 'SCHEDULE' ? { ...stored, started: description.startTime.toISOString() } : stored;
    return { description, memo };
  }

  /**
   * An open run whose state query went unanswered (no worker, or its worker just died): RUNNING,
   * unless it is a limited run that has not had all its slots yet (read from its history), which
   * has not started: PENDING.
   */
  private async guessedStatus(handle: RunHandle, memo: RunMemo): Promise<'RUNNING' | 'PENDING'> {
    if (!memo.slots) return 'RUNNING';
    try {
      const history = await handle.fetchHistory();
      const grants = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === slotGrantSignal.name).length;
      return grants >= memo.slots ? 'RUNNING' : 'PENDING';
    } catch (err) {
      this.log.warn('could not read a limited run\'s history', { runId: handle.workflowId, error: messageOf(err) });
      return 'PENDING';
    }
  }

  /** A run waiting for a slot, with its place in the semaphore's queue when the semaphore answers. */
  private async slotPlace(runId: string, waitingOn: Extract<WaitingOn, { kind: 'slot' }>): Promise<WaitingOn> {
    try {
      const place = (await this.queueOf(waitingOn.key)).indexOf(runId);
      return place < 0 ? waitingOn : { ...waitingOn, position: place + 1 };
    } catch (err) {
      // not started yet (the run's acquireSlot is on its way), or no worker: the place is unknown
      this.log.debug('slots query failed', { runId, key: waitingOn.key, error: messageOf(err) });
      return waitingOn;
    }
  }

  /** The semaphore's queue: one query in flight per semaphore, its answer reused for QUEUE_REUSE_MS. */
  private queueOf(key: string): Promise<readonly string[]> {
    const now = Date.now();
    const fresh = (read: QueueRead): boolean => read.at === undefined || now - read.at < QUEUE_REUSE_MS;
    const last = this.queues.get(key);
    if (last && fresh(last)) return last.queue;
    for (const [k, read] of this.queues) if (!fresh(read)) this.queues.delete(k);
    const read: QueueRead = {
      queue: this.client.connection.withDeadline(now + QUERY_DEADLINE_MS,
        () => this.client.workflow.getHandle<RunSlotsWorkflow>(slotsWorkflowId(key)).query(slotsQuery)).then((slots) => slots.queue),
    };
    this.queues.set(key, read);
    // an answer is reused from when it came; a failed read is not reused: the next poll asks again
    read.queue.then(() => { read.at = Date.now(); }, () => { if (this.queues.get(key) === read) this.queues.delete(key); });
    return read.queue;
  }

  private async queryState(handle: RunHandle): Promise<RunState | undefined> {
    try {
      return await this.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(stateQuery));
    } catch (err) {
      this.log.warn('state query failed; is a worker running?', { runId: handle.workflowId, error: messageOf(err) });
      return undefined;
    }
  }

  private async failedView(handle: RunHandle, base: { runId: string; memo: RunMemo }, err: unknown): Promise<RunView> {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type !== undefined && cause.type !== null && SUMMARY_FAILURES.includes(cause.type)) {
      const summary = cause.details?.[0];
      if (isRunSummary(summary)) {
        return { ...base, status: summary.status, steps: summary.steps ?? stepsFromOutcomes(base.runId, base.memo, summary.outcomes, 'PENDING'), outcomes: summary.outcomes, error: cause.message, final: true,
          ...(summary.transitions ? { transitions: summary.transitions } : {}), ...(summary.decisionOutcomes ? { decisionOutcomes: summary.decisionOutcomes } : {}) };
      }
    }
    const reason = cause instanceof TimeoutFailure ? 'the run timed out'
      : cause instanceof CancelledFailure ? 'the run was cancelled'
        : cause instanceof TerminatedFailure ? 'the run was terminated'
          : cause?.message ?? messageOf(err);
    const view = await this.closedWithoutSummary(handle, base, 'FAILED', reason);
    if (cause instanceof CancelledFailure) return { ...view, reasonCode: 'CANCELLED' };
    return cause instanceof TerminatedFailure ? { ...view, reasonCode: 'TERMINATED' } : view;
  }

  /** Closed without a summary of its own: the state query replays the history, if a worker is there. */
  private async closedWithoutSummary(handle: RunHandle, base: { runId: string; memo: RunMemo },
    status: 'FAILED' | 'TIMEOUT', error: string): Promise<RunView> {
    const state = await this.queryState(handle);
    const outcomes = state?.outcomes ?? [];
    const steps = state?.steps ?? stepsFromMemo(base.memo, 'PENDING');
    for (const step of Object.values(steps)) {
      if (step.status === 'RUNNING' || step.status === 'PAUSED') step.status = status;
    }
    // Without the state query's answer the steps are guesses: not the run's last word.
    return { ...base, status, steps, outcomes, error, ...(state ? { final: true } : {}), ...(state?.transitions ? { transitions: state.transitions } : {}),
      ...(state?.decisionOutcomes ? { decisionOutcomes: state.decisionOutcomes } : {}) };
  }
}
