/**
 * runAutomation: runs one published workflow version step by step.
 *
 * Input: RunInput (the whole definition travels in it, so a run is pinned to its version); a
 *   scheduled run's input is its schedule's (run/scheduled-run.ts).
 * Query `state`: the run's status, per-step status and execution order, the outcomes so far, and
 *   `waitingOn` while PAUSED.
 * Update `operatorPause` and signal `operatorPauseRecorded` (PauseRequest): an operator's pause,
 *   held at the run's next step boundary until unpaused (run/operator-pause.ts). A run started
 *   while its workflow or trigger was paused (`hold` in its input) first waits PENDING for the
 *   release (the same signal with a `scope`).
 * Update `decide` (DecisionRequest → ApprovalDecision) and signals `recordedDecision`
 *   (RecordedDecision: the gateway's decision whose update was not answered in time) and
 *   `approvalDecision` (DecisionRequest: operators): a decision on the approval step that is waiting
 *   (see steps/approval.ts); what became of the gateway's decisions is in `state.decisionOutcomes`
 *   and the summary.
 * Timeouts: the run keeps the definition's `timeoutSeconds` itself (run/time-limit.ts: a timer
 *   cancels the steps and the run ends with ApplicationFailure RUN_TIMEOUT, callback sent); the
 *   starter sets Temporal's workflow execution timeout a margin later as a backstop (runs started
 *   before that patch: exactly `timeoutSeconds`, Temporal reports TIMED_OUT). Each activity step
 *   gets its own limit plus a margin and a heartbeat timeout, so a dead worker is noticed in
 *   seconds and the step retried elsewhere.
 * A `tool` step with `until` polls on timers (steps/poll.ts). Steps run through the interpreter
 * (interpreter/run-list.ts): `if`, `onError`, `retry`, and the branch, forEach and parallel steps.
 * Step status changes are logged in state (run/transitions.ts); a run with a callback URL starts
 * its delivery when it ends (run/completion-callback.ts); a resumed run reuses the earlier run's outcomes
 * (run/resume.ts, through the interpreter's top-level list). A run started with concurrency limits
 * (`slots`, level 7) first waits PENDING for a slot of each and gives them back when it ends
 * (run/slots.ts; the semaphore is run-slots.ts).
 * A step that fails or exceeds its own limit ends the run with ApplicationFailure type
 * STEP_FAILED or STEP_TIMEOUT carrying the RunSummary as details.
 */
import { ApplicationFailure, log, setHandler } from '@temporalio/workflow';
import { approvalSignal, decideUpdate, recordedDecisionSignal, stateQuery } from '../src/common/workflow-contracts';
import {
  DECISION_OUTCOMES_KEPT, decisionsOf, FailureType, type DecisionOutcome, type DecisionRequest, type RunInput, type RunState, type RunSummary,
} from '../src/common/run-types';
import { messageOf } from '../src/common/narrow';
import { runList } from './interpreter/run-list';
import type { Runtime } from './interpreter/runtime';
import { asStartedRun } from './run/scheduled-run';
import { ApprovalDesk } from './steps/approval';
import { withCompletionCallback } from './run/completion-callback';
import { markTimedOut, withRunTimeLimit } from './run/time-limit';
import { trackTransitions } from './run/transitions';
import { useEngine } from './run/features';
import { withSlots } from './run/slots';
import { OperatorHold } from './run/operator-pause';


// Not async itself: it hands back its steps' promise (every promise a workflow makes costs a stack
// capture in the SDK's promise hook), and the SDK awaits the workflow function in an async handler,
// so a throw here still fails the run as a rejection would.
export function runAutomation(given: RunInput): Promise<RunSummary> {
  const input = asStartedRun(given);
  useEngine(input);
  const state: RunState = {
    status: 'RUNNING',
    steps: Object.fromEntries(input.definition.steps.map((step, i) => [String(i + 1), { name: step.name, type: step.type, status: 'PENDING' as const }])),
    outcomes: [],
  };
  trackTransitions(state);
  const hold = new OperatorHold(state);
  hold.listen();
  const start = (): Promise<RunSummary> => withSlots(input, state, () => withRunTimeLimit(input, state, () => runSteps(input, state, hold)));
  // a run without a hold takes no extra promise (the order of its commands stays what its history holds)
  const held = input.hold;
  return withCompletionCallback(input, state, held ? () => hold.beforeStart(held).then(start) : start);
}

async function runSteps(input: RunInput, state: RunState, hold: OperatorHold): Promise<RunSummary> {
  const { definition } = input;
  const approvals = new ApprovalDesk((outcome: DecisionOutcome) => {
    const kept = (state.decisionOutcomes ??= []);
    kept.push(outcome);
    if (kept.length > DECISION_OUTCOMES_KEPT) kept.splice(0, kept.length - DECISION_OUTCOMES_KEPT);
  });
  setHandler(stateQuery, () => state);
  const updateVia = (request: DecisionRequest): 'link' | 'api' => (request.via === 'link' ? 'link' : 'api');
  setHandler(decideUpdate, (request) => approvals.record(request, updateVia(request)), {
    validator: (request) => approvals.validate(request, updateVia(request)),
  });
  setHandler(approvalSignal, (request) => {
    try {
      approvals.validate(request, 'signal');
      approvals.record(request, 'signal');
    } catch (err) {
      log.warn('approval signal ignored', { reason: messageOf(err) });
    }
  });
  setHandler(recordedDecisionSignal, (request) => {
    // the gateway's own signal; one sent by hand without a decision ID is not one
    if (typeof request.decisionId !== 'string' || request.decisionId === '') {
      log.warn('recorded decision ignored: it has no decisionId');
      return;
    }
    approvals.apply(request);
  });

  const run = { runId: input.runId, orgId: input.orgId, automationId: input.automationId, automationVersion: input.automationVersion,
    triggerId: input.triggerId, started: input.started, inputs: input.inputs };
  let executionOrder = 0;
  const rt: Runtime = { input, run, state, approvals, hold, nextOrder: () => ++executionOrder, runAutomation };
  const { failure } = await runList(rt, definition.steps, { depth: 0, seen: [] });

  if (failure) {
    const { outcome, address, name } = failure;
    const status = outcome.status === 'TIMEOUT' ? 'TIMEOUT' : 'FAILED';
    const summary: RunSummary = { status, failedStep: outcome.stepIndex, error: outcome.error, outcomes: state.outcomes, steps: state.steps, transitions: state.transitions,
      ...decisionsOf(state) };
    const message = `step ${address} (${name}) ${status === 'TIMEOUT' ? 'exceeded its time limit' : 'failed'}: ${outcome.error ?? `exit code ${outcome.exitCode}`}`;
    // A query answered between here and the close must already say why, as the closed run will.
    Object.assign(state, { status, error: message });
    if (status === 'TIMEOUT') markTimedOut();
    throw ApplicationFailure.create({
      type: status === 'TIMEOUT' ? FailureType.STEP_TIMEOUT : FailureType.STEP_FAILED,
      message,
      nonRetryable: true,
      details: [summary],
    });
  }
  state.status = 'COMPLETE';
  return { status: 'COMPLETE', outcomes: state.outcomes, steps: state.steps, transitions: state.transitions, ...decisionsOf(state) };
}
