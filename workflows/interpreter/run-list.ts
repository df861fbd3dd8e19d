/**
 * Runs a list of steps in order: the top-level steps of a definition, or a list nested in a
 * branch, forEach or parallel step. A step whose `if` is false is SKIPPED (no outcome, no files;
 * later steps see `status: "SKIPPED"`); a step that fails ends the list unless its `onError` is
 * `continue`. Each step's state is in the run's `state` query under its address (`2`, `3.2.1`).
 */
import { proxyActivities, proxyLocalActivities, proxySinks } from '@temporalio/workflow';
import type { MetricsSinks } from '../../src/common/metrics-sinks';
import type { AlertSinks } from '../../src/common/alerts';
import type { Activities } from '../../activities';
import type { ActivityStep, Step } from '../../src/common/definition';
import { durationMs } from '../../src/common/duration';
import { truthy } from '../../src/common/expressions';
import { isInputsReference } from '../../src/common/inputs-reference';
import { buildContext, interpolateDeep } from '../../src/common/interpolate';
import { previousSteps, type RecordStepRequest, type RunStepRequest, type StepOutcome, type StepScope, type StepState, type StepWaitingOn, type VisibleStep } from '../../src/common/run-types';
import { executeWorkflowKind, isActivityStep, isWorkflowStep } from '../steps';
import { isPollingToolStep, pollToolStep } from '../steps/poll';
import { reuseEarlierOutcome } from '../run/resume';
import type { Renderer, StepDraft } from '../steps/step-draft';
import { feature } from '../run/features';
import type { Pauser } from '../steps/timers';
import { showDetails, summary } from '../run/ui-metadata';
import { stepAction, stepLabel, waitingText } from '../../src/common/run-labels';
import { branchStep } from './branch';
import type { CompositeDraft } from './composite';
import { evaluateIn } from './conditions';
import { forEachStep } from './for-each';
import { parallelStep } from './parallel';
import { stepScopeOf, visible, type ListOutcome, type ListScope, type Runtime } from './runtime';

const RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 } as const;
const HEARTBEAT_TIMEOUT = '10s';
const MARGIN_MS = 30_000;

/**
 * A step's own time limit: `timeoutMs` of code, http and tool steps and of registered kinds that
 * declare one; none for template steps (and registered kinds without it): the margin alone.
 */
function ownLimitMs(step: ActivityStep): number {
  return 'timeoutMs' in step && typeof step.timeoutMs === 'number' ? step.timeoutMs : 0;
}

/** The step's activities: its own time limit plus a margin, and its own retry policy when it has one. */
function stepActivities(step: ActivityStep, label: string): Activities {
  const retry = step.retry ? stepActivityRetry(step.retry) : RETRY;
  return proxyActivities<Activities>({ startToCloseTimeout: ownLimitMs(step) + MARGIN_MS, heartbeatTimeout: HEARTBEAT_TIMEOUT, retry, ...summary(label) });
}

/** A step's `retry` as Temporal's retry policy of its activity. */
function stepActivityRetry(retry: NonNullable<ActivityStep['retry']>) {
  return {
    maximumAttempts: retry.maxAttempts,
    initialInterval: durationMs(retry.initialInterval),
    backoffCoefficient: retry.backoff,
    ...(retry.maxInterval === undefined ? {} : { maximumInterval: durationMs(retry.maxInterval) }),
    nonRetryableErrorTypes: retry.nonRetryable.filter((t) => !t.endsWith('XX')),
  };
}

/**
 * A `template` step renders text and stores its two files: milliseconds of work, which as a
 * local activity runs in the worker that runs the workflow, recorded as one marker, instead of a
 * task the server dispatches (three history events, a round trip, a second workflow task). Its
 * writes are idempotent (same keys, atomic replace), so a re-run after a crash is harmless.
 * Runs from level 2 (run/features.ts); earlier runs keep the activity task their history holds.
 */
export const TEMPLATE_LOCAL_REVISION = 'template-local-activity';

/**
 * But not side by side (level 5): a template step in a list that runs alongside another
 * (`ListScope.alongside`: a forEach running items at once, a parallel step, a list inside one) is
 * an activity task. Local activities in flight together finish into one workflow activation or
 * several, as they happen to finish; the history keeps their order (markers) but not that
 * grouping, and on replay the SDK groups them its own way (every one already scheduled, in marker
 * order, and one carried over from an earlier workflow task together with that task's events).
 * The lists then resume in another order and issue their next commands in another order: the run
 * fails with a nondeterminism error or, when the swapped commands are alike (two template steps),
 * replay hands a step another step's result. An activity task's completion is a history event, so
 * replay sees the activations the run saw. Alone, a local activity has nothing to race with.
 * Runs before level 5 replay with the local activities they recorded.
 */
export const TEMPLATE_ALONGSIDE_REVISION = 'template-alongside-activity';

function runsLocally(step: ActivityStep, scope: ListScope): boolean {
  if (step.type !== 'template' || !feature(TEMPLATE_LOCAL_REVISION, 2)) return false;
  return !scope.alongside || !feature(TEMPLATE_ALONGSIDE_REVISION, 5);
}

const localSteps = (step: ActivityStep, label: string): Pick<Activities, 'runStep'> => proxyLocalActivities<Activities>({
  startToCloseTimeout: MARGIN_MS, retry: step.retry ? stepActivityRetry(step.retry) : RETRY, ...summary(label),
});

const bookkeeping = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: RETRY });
const BOOKKEEPING_OPTIONS = { startToCloseTimeout: '30s', retry: RETRY } as const;

/** recordStep, recordComposite and renderValue, their commands labelled with the step and what they do (level 6). */
function bookkeepingFor(label: string): Pick<Activities, 'recordStep' | 'recordComposite' | 'renderValue'> {
  const s = summary(label);
  if (s.summary === undefined) return bookkeeping;
  return proxyActivities<Activities>({ ...BOOKKEEPING_OPTIONS, ...s });
}
/** The approvals-pending gauge (a sink call leaves no trace in the history). */
const { flowgateMetrics, flowgateAlerts } = proxySinks<MetricsSinks & AlertSinks>();

/**
 * An approval wait started or ended: told to the worker's alerts (src/runs/alerts.ts, approval_waiting
 * rules). A sink call adds nothing to the history, so runs started before it replay unchanged.
 */
function approvalWait(rt: Runtime, stepIndex: number, waiting: boolean): void {
  const { run, input } = rt;
  flowgateAlerts.approvalWaiting({
    runId: run.runId, orgId: run.orgId, workflowId: run.automationId, workflowName: input.automationName || run.automationId, stepIndex, waiting, at: Date.now(),
  });
}

/**
 * Interpolation for workflow-side steps: in the workflow when it sees everything, else through the
 * renderValue activity (inputs passed by reference, or earlier results cut in workflow state).
 */
function rendererFor(run: RunStepRequest['run'], previous: VisibleStep[], scope: StepScope | undefined, label: string): Renderer {
  const { renderValue } = bookkeepingFor(label);
  const complete = !isInputsReference(run.inputs) && previous.every((o) => !o.truncated);
  const context = buildContext(run, previous, scope);
  return async (value) => (complete ? interpolateDeep(value, context)
    : renderValue({ run, previous: previousSteps(previous), value, ...(scope ? { scope } : {}) }));
}

export async function runList(rt: Runtime, steps: Step[], scope: ListScope): Promise<ListOutcome> {
  let last: StepOutcome | undefined;
  for (const [i, step] of steps.entries()) {
    const address = scope.prefix === undefined ? String(i + 1) : `${scope.prefix}.${i + 1}`;
    const stepState = rt.state.steps[address] ??= { name: step.name, type: step.type, status: 'PENDING' };
    // A resumed run takes the earlier run's outcomes of the top-level steps before the failed one.
    if (scope.prefix === undefined && reuseEarlierOutcome(rt.input, rt.state, i + 1, stepState, rt.nextOrder)) {
      const reused = rt.state.outcomes[rt.state.outcomes.length - 1];
      if (reused) {
        scope.seen.push(visible(reused));
        last = reused;
      }
      continue;
    }
    // an operator's pause holds here, before the step's condition is even read (run/operator-pause.ts)
    if (rt.hold?.inForce()) await rt.hold.boundary();
    let outcome: StepOutcome;
    const verdict = step.if === undefined ? { value: true } : await evaluateIn(rt, step.if, scope);
    if ('value' in verdict && !truthy(verdict.value)) {
      stepState.status = 'SKIPPED';
      scope.seen.push({ stepIndex: Number(address.split('.')[0]), ...(scope.prefix === undefined ? {} : { stepPath: address }),
        status: 'SKIPPED', exitCode: 0, resultType: 'plaintext', result: '', truncated: false });
      continue;
    }
    stepState.status = 'RUNNING';
    stepState.executionOrder = rt.nextOrder();
    if ('error' in verdict) {
      outcome = await bookkeepingFor(stepAction(address, step, 'record')).recordStep({ ...where(rt, address, scope), status: 'FAILED', resultType: 'plaintext', result: '', exitCode: 1,
        stdout: `if: ${verdict.error}\n`, error: `if: ${verdict.error}`, duration: 0 });
    } else {
      outcome = await executeStep(rt, step, address, scope, stepState);
    }
    rt.state.outcomes.push(outcome);
    stepState.status = outcome.status;
    scope.seen.push(visible(outcome));
    last = outcome;
    if (outcome.status !== 'COMPLETE' && step.onError !== 'continue') return { failure: { address, name: step.name, outcome }, last };
  }
  return { ...(last ? { last } : {}) };
}

/** The run and the step's place, as recordStep and recordComposite take them. */
function where(rt: Runtime, address: string, scope: ListScope): Pick<RecordStepRequest, 'run' | 'stepIndex' | 'stepPath'> {
  return { run: rt.run, stepIndex: Number(address.split('.')[0]), ...(scope.prefix === undefined ? {} : { stepPath: address }) };
}

/** What an activity step's activity takes: the step, its place and what it may see. */
function activityRequest(place: Pick<RecordStepRequest, 'run' | 'stepIndex' | 'stepPath'>, step: ActivityStep, scope: ListScope, stepScope: StepScope | undefined): RunStepRequest {
  return {
    ...place, step, previous: previousSteps(scope.seen),
    ...(stepScope ? { scope: stepScope } : {}),
    ...(step.retry ? { retry: { maxAttempts: step.retry.maxAttempts, nonRetryable: step.retry.nonRetryable } } : {}),
  };
}

/**
 * Runs one step. Not async itself: an activity step (most steps) hands back its activity's own
 * promise, since every promise a workflow makes costs a stack capture in the SDK's promise hook.
 */
function executeStep(rt: Runtime, step: Step, address: string, scope: ListScope, stepState: StepState): Promise<StepOutcome> {
  if (isActivityStep(step) && !isPollingToolStep(step)) {
    const label = stepLabel(address, step);
    return (runsLocally(step, scope) ? localSteps(step, label) : stepActivities(step, label)).runStep(activityRequest(where(rt, address, scope), step, scope, stepScopeOf(scope)));
  }
  return executeWorkflowStep(rt, step, address, scope, stepState);
}

async function executeWorkflowStep(rt: Runtime, step: Step, address: string, scope: ListScope, stepState: StepState): Promise<StepOutcome> {
  const { state, run } = rt;
  const place = where(rt, address, scope);
  const stepScope = stepScopeOf(scope);
  const { recordStep, recordComposite } = bookkeepingFor(stepAction(address, step, 'record'));
  const pauser: Pauser = {
    label: (what) => stepAction(address, step, what),
    pause(waitingOn: StepWaitingOn) {
      state.status = 'PAUSED';
      stepState.status = 'PAUSED';
      state.waitingOn = place.stepPath === undefined ? waitingOn : { ...waitingOn, stepPath: place.stepPath };
      showDetails(waitingText(state.waitingOn, step.name));
      if (waitingOn.kind === 'approval') {
        flowgateMetrics.approvalWaiting(run.runId, place.stepIndex, true);
        approvalWait(rt, place.stepIndex, true);
      }
    },
    resume() {
      if (state.waitingOn?.kind === 'approval') {
        flowgateMetrics.approvalWaiting(run.runId, place.stepIndex, false);
        approvalWait(rt, place.stepIndex, false);
      }
      state.status = 'RUNNING';
      stepState.status = 'RUNNING';
      delete state.waitingOn;
      showDetails('');
    },
  };
  const started = Date.now();

  if (isPollingToolStep(step)) {
    const callTool = () => stepActivities(step, stepLabel(address, step)).runStep(activityRequest(place, step, scope, stepScope));
    const record = (draft: StepDraft) => recordStep({ ...place, ...draft, duration: Date.now() - started });
    return pollToolStep(step, place.stepIndex, { callTool, record }, pauser);
  }
  if (!isWorkflowStep(step)) throw new Error(`activity step ${step.type} reached the workflow-side steps`);

  if (step.type === 'branch' || step.type === 'forEach' || step.type === 'parallel') {
    let composite: CompositeDraft;
    switch (step.type) {
      case 'branch':
        composite = await branchStep(rt, step, address, scope, stepState, runList);
        break;
      case 'forEach':
        composite = await forEachStep(rt, step, address, scope, stepState, runList);
        break;
      case 'parallel':
        composite = await parallelStep(rt, step, address, scope, stepState, runList);
        break;
    }
    return recordComposite({ ...place, ...composite, duration: Date.now() - started });
  }

  const render = rendererFor(run, scope.seen, stepScope, stepAction(address, step, 'render'));
  const draft = await executeWorkflowKind(step.type, step, { rt, place, render, pauser, label: stepLabel(address, step) });
  return recordStep({ ...place, ...draft, duration: Date.now() - started });
}
