/**
 * A run as flowgate shows it (status, steps, outcomes, what it waits on), and how a view is made
 * from what a run leaves behind: its memo, its summary, its state. Pure: reading those from
 * Temporal is run-reader.ts; keeping closed runs' views is finished-run-cache.ts.
 */
import { z } from 'zod';
import type { RunMemo } from '../common/run-memo';
import type { CallbackStatus, DecisionOutcome, OperatorPause, RunStatus, RunSummary, StepOutcome, StepState, StepTransition, WaitingOn } from '../common/run-types';

export interface RunView {
  runId: string;
  memo: RunMemo;
  status: RunStatus;
  steps: Record<string, StepState>;
  outcomes: StepOutcome[];
  waitingOn?: WaitingOn;
  /** an operator's pause in force (issue 54), from the moment the run took it: PAUSED once its current step ends */
  operatorPause?: OperatorPause;
  error?: string;
  /** closed, and everything shown is the run's last word: safe to keep (finished-run-cache.ts) */
  final?: boolean;
  /** step status changes as the workflow logged them (the status stream's events) */
  transitions?: StepTransition[];
  /** the completion callback's state, for a run that names one (never kept with the view: it changes after the run closed) */
  callback?: CallbackStatus;
  /** what became of the gateway's approval decisions (RunState.decisionOutcomes) */
  decisionOutcomes?: DecisionOutcome[];
  /**
   * An open run whose `state` query went unanswered (no worker, or a slow one): its steps are
   * guesses and it shows no `waitingOn`, which does not mean it waits on nothing.
   */
  stateUnread?: true;
  /**
   * Why a FAILED run ended, when it is not a step's failure: `CANCELLED` (an operator's cancel)
   * or `TERMINATED`. The contract's status stays FAILED; the console reads this (issue 52).
   */
  reasonCode?: 'CANCELLED' | 'TERMINATED';
}

/**
 * What describe alone tells of a run (no worker, no query): whose it is and whether it is open.
 * Enough to authorize an action on it and to refuse one on a run that has ended.
 */
export interface RunBrief {
  runId: string;
  memo: RunMemo;
  /** Temporal's status (RUNNING while open), or flowgate's for a run whose view is kept */
  status: string;
  open: boolean;
}

/** A closed run's status: its view no longer changes (but for its callback). */
export function isEnded(status: RunStatus): boolean {
  return status === 'COMPLETE' || status === 'FAILED' || status === 'TIMEOUT';
}

/**
 * The summary a run's failure carries as its first detail (STEP_FAILED, STEP_TIMEOUT,
 * RUN_TIMEOUT): checked as far as the view reads it, and kept as the workflow sent it.
 */
const FailureSummarySchema = z.object({ status: z.string(), outcomes: z.array(z.unknown()) }).loose();

export function isRunSummary(detail: unknown): detail is RunSummary {
  return FailureSummarySchema.safeParse(detail).success;
}

export function completedView(runId: string, memo: RunMemo, summary: RunSummary): RunView {
  // Summaries of runs before nested and SKIPPED steps carry no `steps`: derive them from the outcomes.
  return { runId, memo, status: 'COMPLETE', steps: summary.steps ?? stepsFromOutcomes(runId, memo, summary.outcomes, 'COMPLETE'), outcomes: summary.outcomes, final: true,
    ...(summary.transitions ? { transitions: summary.transitions } : {}), ...(summary.decisionOutcomes ? { decisionOutcomes: summary.decisionOutcomes } : {}) };
}

export function stepsFromMemo(memo: RunMemo, status: RunStatus): Record<string, StepState> {
  return Object.fromEntries(memo.steps.map((s, i) => [String(i + 1), { name: s.name, type: s.type, status }]));
}

export function stepsFromOutcomes(runId: string, memo: RunMemo, outcomes: StepOutcome[], notRun: RunStatus): Record<string, StepState> {
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
