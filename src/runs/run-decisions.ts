/**
 * Approval decisions delivered to runs, with answers that hold under load (issue 46). A decision is
 *   1. refused without a worker when that can be told from what Temporal keeps: the run has ended
 *      (describe), or its definition (its start input, read once per run and kept) has no such
 *      approval step or does not name the approver;
 *   2. otherwise sent as the `decide` update (update ID = the decision's ID), waited for at most
 *      UPDATE_WAIT_MS: answered, it is applied (or refused by the run's validator, at once);
 *   3. when the run does not answer in time (no worker, a slow one), recorded with the
 *      `recordedDecision` signal carrying the same ID, request, `via` and actor: written to the
 *      history at once, applied (or refused) when the run reads it. The update may still arrive
 *      too; the run counts the two as one decision (workflows/steps/approval.ts).
 * What became of a decision is read back from the run's `decisionOutcomes` (its state, or its
 * summary once it closed) or, while the run does not answer, from its history (report()).
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Step } from '../common/definition';
import { LruCache } from '../cache/lru-cache';
import { FLOW_STEP_TYPES, isStepOf, nestedLists } from '../common/step-kinds';
import { DECISION_OUTCOMES_KEPT, DecisionRefusal, type DecidedApproval, type DecisionOutcome, type DecisionRequest } from '../common/run-types';
import { decideUpdate, recordedDecisionSignal, type RunAutomationWorkflow } from '../common/workflow-contracts';
import { GRPC_UNAVAILABLE, isTemporalUnavailable, temporalStatusCode } from '../../temporal/client';
import type { Logger } from '../observability/logger';
import { decisionTrail, startedInput } from './run-history';
import { isEnded, type RunBrief, type RunView } from './run-view';

export type DecideOutcome =
  /** the run took it: the decision as it recorded it */
  | { ok: true; applied: true; decisionId: string; decision: DecidedApproval }
  /** the run did not answer in time: the decision is in its history and is applied (or refused) when the run reads it */
  | { ok: true; applied: false; decisionId: string }
  | { ok: false; refusal: keyof typeof DecisionRefusal; message: string };

/** What became of one decision, as the outcome URLs answer it. */
export type DecisionReport = { decisionId: string; status: 'recorded' | 'applied' | 'refused' | 'not_applied' }
  & Partial<Pick<DecisionOutcome, 'stepIndex' | 'decision' | 'approver' | 'via' | 'refusal' | 'message' | 'at'>>;

/**
 * How long a decision waits for the run to answer its update before it is recorded by signal: with
 * the describe, the start input (once per run) and the signal, the answer comes within about 4 s
 * whatever the worker does.
 */
export const UPDATE_WAIT_MS = 2500;
/**
 * A signal is written by Temporal alone: these are for a slow Temporal, tried twice, the second time
 * longer. A signal Temporal did not confirm is an answer that cannot say whether the decision was
 * recorded (503 decision_unconfirmed), so the second try waits out a Temporal that is slow rather than
 * away (the embedded one on SQLite under a 100,000-request fuzz at load average 27 answered 7% of
 * the fuzz's decisions 503 with one second twice).
 */
const SIGNAL_DEADLINES_MS = [1000, 4000];
const APPROVERS_CACHED = 10_000;

/** The signal of a decision may or may not be in the run's history: Temporal did not say in time. */
export class DecisionUnconfirmedError extends Error {
  constructor(readonly runId: string, readonly decisionId: string, cause: unknown) {
    super(`decision ${decisionId} on run ${runId} may not have been recorded: Temporal did not confirm it in time`, { cause });
    this.name = 'DecisionUnconfirmedError';
  }
}

function isRefusal(type: string): type is keyof typeof DecisionRefusal {
  return type in DecisionRefusal;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** Whether a step list holds an approval step (anywhere inside), adding its approvers to `into`. */
function collectApprovers(steps: readonly Step[], into: string[]): boolean {
  let found = false;
  for (const step of steps) {
    if (isStepOf(step, 'approval')) {
      into.push(...step.approvers);
      found = true;
    }
    for (const list of nestedLists(step)) found = collectApprovers(list, into) || found;
  }
  return found;
}

/**
 * Each approval step's approvers, by the top-level step index decisions name (an approval nested
 * in a branch, forEach or parallel step is decided as its top-level step). Approvers are the
 * definition's own strings: never interpolated, so the definition says who may decide.
 */
export function approversByStep(steps: readonly Step[]): Map<number, string[]> {
  const byStep = new Map<number, string[]>();
  steps.forEach((step, i) => {
    const approvers: string[] = [];
    if (collectApprovers([step], approvers)) byStep.set(i + 1, approvers);
  });
  return byStep;
}

/** The refusal a decision gets from the run's definition alone, if it gets one. */
export function refusalByDefinition(approvers: ReadonlyMap<number, readonly string[]>, request: DecisionRequest): { refusal: keyof typeof DecisionRefusal; message: string } | undefined {
  if (approvers.size === 0) return { refusal: 'NOT_WAITING', message: 'the run has no approval step; it is not waiting for a decision' };
  const { stepIndex, approver } = request;
  const listed = stepIndex === undefined ? undefined : approvers.get(stepIndex);
  if (stepIndex !== undefined && !listed) return { refusal: 'NOT_WAITING', message: `step ${stepIndex} is no approval step; the run is not waiting for a decision on it` };
  if (request.via === 'link' && !approver) return { refusal: 'NOT_AN_APPROVER', message: 'a link decides for its approver' };
  if (approver === undefined) return undefined;
  const candidates = listed ?? [...approvers.values()].flat();
  if (candidates.some((a) => same(a, approver))) return undefined;
  return { refusal: 'NOT_AN_APPROVER', message: stepIndex === undefined ? `${approver} is not an approver of any approval step of this run` : `${approver} is not an approver of step ${stepIndex}` };
}

/** Step types that are, or may hold, an approval step. */
const MAY_HOLD_APPROVAL = new Set<string>(['approval', ...FLOW_STEP_TYPES]);

export interface RunDecisionsOptions {
  /** how long to wait for the run's answer to a decision's update (default UPDATE_WAIT_MS) */
  updateWaitMs?: number;
}

export class RunDecisions {
  private readonly approvers = new LruCache<string, Map<number, string[]>>({ maxEntries: APPROVERS_CACHED, ttlMs: Infinity });
  private readonly updateWaitMs: number;

  constructor(private readonly client: Client, private readonly log: Logger, options: RunDecisionsOptions = {}) {
    this.updateWaitMs = options.updateWaitMs ?? UPDATE_WAIT_MS;
  }

  /** Delivers `request` to run `run` (see the header): applied, recorded to be applied, or refused. */
  async decide(run: RunBrief, request: DecisionRequest): Promise<DecideOutcome> {
    if (!run.open) return { ok: false, refusal: 'NOT_WAITING', message: `the run is ${run.status.toLowerCase()}; it is not waiting for a decision` };
    const refused = await this.refusedByDefinition(run, request);
    if (refused) return { ok: false, ...refused };
    const decisionId = randomUUID();
    const sent: DecisionRequest = { ...request, decisionId };
    const handle = this.client.workflow.getHandle<RunAutomationWorkflow>(run.runId);
    try {
      const decision = await this.client.connection.withDeadline(Date.now() + this.updateWaitMs,
        () => handle.executeUpdate(decideUpdate, { args: [sent], updateId: decisionId }));
      return { ok: true, applied: true, decisionId, decision };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const cause = err.cause;
        if (cause instanceof ApplicationFailure && cause.type && isRefusal(cause.type)) return { ok: false, refusal: cause.type, message: cause.message };
        // refused otherwise by the run: a run waiting for its concurrency slot has not begun its steps
        return { ok: false, refusal: 'NOT_WAITING', message: `the run is not waiting for a decision (${cause?.message ?? err.message})` };
      }
      if (err instanceof WorkflowNotFoundError) return { ok: false, refusal: 'NOT_WAITING', message: 'the run has ended; it is not waiting for a decision' };
      // Unreachable: nothing could record it either; the caller gets its 503 and may send it again.
      if (temporalStatusCode(err) === GRPC_UNAVAILABLE) throw err;
      this.log.info('a decision\'s update was not answered in time: recording it by signal', { runId: run.runId, decisionId, error: err instanceof Error ? err.message : String(err) });
    }
    return this.record(run.runId, { ...sent, decisionId, via: request.via === 'link' ? 'link' : 'api' });
  }

  /** What became of decision `decisionId` of the run `view` shows; undefined when the run never heard of it. */
  async report(view: RunView, decisionId: string): Promise<DecisionReport | undefined> {
    const noted = view.decisionOutcomes?.find((o) => o.decisionId === decisionId);
    if (noted) {
      const { outcome, decisionId: _id, ...rest } = noted;
      return { decisionId, status: outcome, ...rest };
    }
    const trail = await decisionTrail(this.client, view.runId, decisionId);
    if (trail.applied) return { decisionId, status: 'applied' };
    if (!trail.recorded) return undefined;
    // A closed run that read everything it was sent, and did not apply this one: it ended first.
    const ended = view.final === true && isEnded(view.status) && (view.decisionOutcomes?.length ?? 0) < DECISION_OUTCOMES_KEPT;
    return { decisionId, status: ended ? 'not_applied' : 'recorded' };
  }

  /** Records a decision by signal; the run ended meanwhile is a refusal, a signal Temporal did not confirm is DecisionUnconfirmedError. */
  private async record(runId: string, recorded: DecisionRequest & { decisionId: string; via: 'api' | 'link' }): Promise<DecideOutcome> {
    const handle = this.client.workflow.getHandle<RunAutomationWorkflow>(runId);
    let failure: unknown;
    // A second signal of the same decision counts once: the run knows its ID.
    for (const deadlineMs of SIGNAL_DEADLINES_MS) {
      try {
        await this.client.connection.withDeadline(Date.now() + deadlineMs, () => handle.signal(recordedDecisionSignal, recorded));
        return { ok: true, applied: false, decisionId: recorded.decisionId };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { ok: false, refusal: 'NOT_WAITING', message: 'the run has ended; it is not waiting for a decision' };
        failure = err;
      }
    }
    throw new DecisionUnconfirmedError(runId, recorded.decisionId, failure);
  }

  /**
   * The refusal the run's definition gives (its approval steps' approvers, kept per run), if any.
   * A start input this gateway cannot read (sealed under a key it lacks, say) leaves the decision
   * to the run's own validation; an unreachable Temporal is the caller's 503.
   */
  private async refusedByDefinition(run: RunBrief, request: DecisionRequest): Promise<{ refusal: keyof typeof DecisionRefusal; message: string } | undefined> {
    if (!run.memo.steps.some((s) => MAY_HOLD_APPROVAL.has(s.type))) return refusalByDefinition(new Map(), request);
    let approvers: Map<number, string[]> | undefined;
    try {
      approvers = await this.approvers.getOrLoad(run.runId, async () => approversByStep((await startedInput(this.client, run.runId)).definition.steps));
    } catch (err) {
      if (isTemporalUnavailable(err)) throw err;
      this.log.warn('a run\'s start input could not be read: its decision is checked by the run alone', { runId: run.runId, error: err instanceof Error ? err.message : String(err) });
    }
    return approvers ? refusalByDefinition(approvers, request) : undefined;
  }
}
