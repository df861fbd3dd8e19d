/**
 * runAutomation: runs one published workflow version step by step.
 *
 * Input: RunInput (the whole definition travels in it, so a run is pinned to its version).
 * Query `state`: the run's status, per-step status and execution order, the outcomes so far, and
 *   `waitingOn` while PAUSED.
 * Update `decide` (DecisionRequest → ApprovalDecision) and signal `approvalDecision`
 *   (DecisionRequest): a decision on the approval step that is waiting (see steps/approval.ts).
 * Timeouts: the workflow execution timeout is the definition's `timeoutSeconds` (set by the
 *   starter; Temporal reports TIMED_OUT); each activity step gets its own limit plus a margin and a
 *   heartbeat timeout, so a dead worker is noticed in seconds and the step retried elsewhere.
 * A `tool` step with `until` polls on timers (steps/poll.ts).
 * A step that fails or exceeds its own limit ends the run with ApplicationFailure type
 * STEP_FAILED or STEP_TIMEOUT carrying the RunSummary as details.
 */
import { ApplicationFailure, defineQuery, defineSignal, defineUpdate, log, proxyActivities, proxySinks, setHandler } from '@temporalio/workflow';
import type { MetricsSinks } from '../src/common/metrics-sinks';
import type { Activities } from '../activities';
import type { ActivityStep } from '../src/common/definition';
import { isActivityStep } from '../src/common/step-kinds';
import { isInputsReference } from '../src/common/inputs-reference';
import { buildContext, interpolateDeep } from '../src/common/interpolate';
import {
  FailureType, previousSteps, type ApprovalDecision, type DecisionRequest, type RunInput, type RunState, type RunStepRequest, type RunSummary, type StepOutcome,
  type WaitingOn,
} from '../src/common/run-types';
import { agentStep } from './steps/agent';
import { ApprovalDesk } from './steps/approval';
import { triggerStep } from './steps/chain';
import { pollToolStep } from './steps/poll';
import type { Renderer, StepDraft } from './steps/step-draft';
import { delayStep, waitUntilStep, type Pauser } from './steps/timers';

export const stateQuery = defineQuery<RunState>('state');
export const decideUpdate = defineUpdate<ApprovalDecision, [DecisionRequest]>('decide');
export const approvalSignal = defineSignal<[DecisionRequest]>('approvalDecision');

const RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 } as const;
const HEARTBEAT_TIMEOUT = '10s';
const MARGIN_MS = 30_000;

function stepActivities(step: ActivityStep): Activities {
  const ownLimitMs = step.type === 'template' ? 0 : step.timeoutMs;
  return proxyActivities<Activities>({ startToCloseTimeout: ownLimitMs + MARGIN_MS, heartbeatTimeout: HEARTBEAT_TIMEOUT, retry: RETRY });
}

const { recordStep, renderValue } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: RETRY });
/** The approvals-pending gauge (a sink call leaves no trace in the history). */
const { flowgateMetrics } = proxySinks<MetricsSinks>();

/**
 * Interpolation for workflow-side steps: in the workflow when it sees everything, else through the
 * renderValue activity (inputs passed by reference, or earlier results cut in workflow state).
 */
function rendererFor(run: RunStepRequest['run'], previous: StepOutcome[]): Renderer {
  const complete = !isInputsReference(run.inputs) && previous.every((o) => !o.truncated);
  const context = buildContext(run, previous);
  return async (value) => (complete ? interpolateDeep(value, context) : renderValue({ run, previous: previousSteps(previous), value }));
}

export async function runAutomation(input: RunInput): Promise<RunSummary> {
  const { definition } = input;
  const state: RunState = {
    status: 'RUNNING',
    steps: Object.fromEntries(definition.steps.map((step, i) => [String(i + 1), { name: step.name, type: step.type, status: 'PENDING' as const }])),
    outcomes: [],
  };
  const approvals = new ApprovalDesk();
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
      log.warn('approval signal ignored', { reason: (err as Error).message });
    }
  });

  const run = { runId: input.runId, orgId: input.orgId, automationId: input.automationId, automationVersion: input.automationVersion,
    triggerId: input.triggerId, started: input.started, inputs: input.inputs };
  let executionOrder = 0;
  for (const [i, step] of definition.steps.entries()) {
    const stepIndex = i + 1;
    const stepState = state.steps[String(stepIndex)];
    if (!stepState) throw ApplicationFailure.nonRetryable(`step ${stepIndex} has no state`, 'INTERNAL');
    stepState.status = 'RUNNING';
    stepState.executionOrder = ++executionOrder;
    const pauser: Pauser = {
      pause(waitingOn: WaitingOn) {
        state.status = 'PAUSED';
        stepState.status = 'PAUSED';
        state.waitingOn = waitingOn;
        if (waitingOn.kind === 'approval') flowgateMetrics.approvalWaiting(input.runId, stepIndex, true);
      },
      resume() {
        if (state.waitingOn?.kind === 'approval') flowgateMetrics.approvalWaiting(input.runId, stepIndex, false);
        state.status = 'RUNNING';
        stepState.status = 'RUNNING';
        delete state.waitingOn;
      },
    };

    let outcome: StepOutcome;
    if (step.type === 'tool' && step.until !== undefined) {
      const started = Date.now();
      const callTool = () => stepActivities(step).runStep({ run, stepIndex, step, previous: previousSteps(state.outcomes) });
      const record = (draft: StepDraft) => recordStep({ run, stepIndex, ...draft, duration: Date.now() - started });
      outcome = await pollToolStep({ ...step, until: step.until }, stepIndex, { callTool, record }, pauser);
    } else if (isActivityStep(step)) {
      outcome = await stepActivities(step).runStep({ run, stepIndex, step, previous: previousSteps(state.outcomes) });
    } else {
      const started = Date.now();
      const render = rendererFor(run, state.outcomes);
      let draft: StepDraft;
      switch (step.type) {
        case 'delay':
          draft = await delayStep(step, stepIndex, pauser);
          break;
        case 'waitUntil':
          draft = await waitUntilStep(step, stepIndex, render, pauser);
          break;
        case 'approval':
          draft = await approvals.wait(step, stepIndex, render, pauser);
          break;
        case 'trigger':
          draft = await triggerStep(step, input, render, runAutomation);
          break;
        case 'agent':
          draft = await agentStep(step, input, stepIndex, render);
          break;
      }
      outcome = await recordStep({ run, stepIndex, ...draft, duration: Date.now() - started });
    }
    state.outcomes.push(outcome);
    stepState.status = outcome.status;

    if (outcome.status !== 'COMPLETE') {
      const summary: RunSummary = { status: outcome.status, failedStep: stepIndex, error: outcome.error, outcomes: state.outcomes };
      const message = `step ${stepIndex} (${step.name}) ${outcome.status === 'TIMEOUT' ? 'exceeded its time limit' : 'failed'}: ${outcome.error ?? `exit code ${outcome.exitCode}`}`;
      // A query answered between here and the close must already say why, as the closed run will.
      Object.assign(state, { status: outcome.status, error: message });
      throw ApplicationFailure.create({
        type: outcome.status === 'TIMEOUT' ? FailureType.STEP_TIMEOUT : FailureType.STEP_FAILED,
        message,
        nonRetryable: true,
        details: [summary],
      });
    }
  }
  state.status = 'COMPLETE';
  return { status: 'COMPLETE', outcomes: state.outcomes };
}
