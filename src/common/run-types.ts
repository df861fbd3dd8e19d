/**
 * Types shared by the workflow, the activities and the gateway. Pure: no imports with side effects,
 * so workflow code may import it.
 *
 * One piece (over 300 lines): these are the shapes that cross the workflow/activity/gateway boundary,
 * kept together so a change to one is seen beside the others it travels with (it holds no logic).
 */
import type { ActivityStep, Step, WorkflowDefinition } from './definition';
import type { StepScope } from './step-scope';
import type { ModelUsage } from './agent-usage';
import type { RunSlots } from './slots';

export type { ItemScope, StepScope } from './step-scope';

export type RunStatus = 'PENDING' | 'RUNNING' | 'PAUSED' | 'COMPLETE' | 'FAILED' | 'TIMEOUT';
/** A step's status: a run status, or SKIPPED (its `if` was false, or its parallel branch lost the race). */
export type StepStatus = RunStatus | 'SKIPPED';
export type ResultType = 'markdown' | 'plaintext' | 'json';

/** A file a step wrote to the blob store. */
export interface StoredFile {
  key: string;
  mimeType: string;
  size: number;
}

/** What the input of one run carries: everything the workflow needs, pinned at start. */
export interface RunInput {
  runId: string;
  orgId: string;
  automationId: string;
  automationName: string;
  automationVersion: number;
  /** step index (as a string, from 1) → step version */
  stepMap: Record<string, number>;
  definition: WorkflowDefinition;
  triggerId: string;
  startedBy: string;
  /** ISO 8601 UTC */
  started: string;
  inputs: Record<string, unknown> | '';
  /** set on runs started by a `trigger` step */
  parentRunId?: string;
  /** the source commit its version was applied from (definitions as code, docs/definitions-as-code.md) */
  sourceCommit?: string;
  /** 0 for a run started over HTTP; one more per chained `trigger` step */
  chainDepth?: number;
  /** where the run's final status is POSTed when it ends (workflows/run/completion-callback.ts) */
  callback?: { url: string };
  /**
   * Temporal priority key (1 first .. 5 last) its trigger sets; absent: Temporal's default. The
   * run is started with it and its organization as fairness key (src/common/priority.ts).
   */
  priority?: number;
  /**
   * ISO 8601 UTC: a waited-for chained run ends TIMEOUT by then at the latest (its parent's own
   * deadline), even when its own `timeoutSeconds` is longer (workflows/run/time-limit.ts)
   */
  deadline?: string;
  /** a re-run of another run with its inputs, or a resumption of a failed run */
  origin?: RunOrigin;
  /**
   * a resumed run: the earlier run's outcomes of the steps before `fromStep`, reused as they are
   * (workflows/run/resume.ts)
   */
  resume?: { fromRunId: string; fromStep: number; outcomes: StepOutcome[] };
  /**
   * set on runs a trigger's schedule starts: the input is the schedule's, shared by all its runs,
   * so `runId` and `started` are the schedule's; the run reads its own from Temporal (workflowInfo)
   */
  type?: 'SCHEDULE';
  /**
   * the workflow code level the starter knew (ENGINE_LEVEL): which history-changing revisions
   * apply without a patch marker; absent on runs started before levels existed
   * (workflows/run/features.ts)
   */
  engine?: number;
  /**
   * the concurrency limits in force when the run started (level 7): the run takes a slot of each,
   * in order, before its steps start, and gives them back when it ends (workflows/run/slots.ts);
   * absent: no limit, and the run does none of it
   */
  slots?: RunSlots;
  /**
   * the workflow or trigger was paused by an operator when the run was prepared (issue 54): the
   * run waits PENDING before its first step (and before its slots) until that hold is lifted
   * (workflows/run/operator-pause.ts); absent: it starts at once
   */
  hold?: RunHold;
}

/** A hold on new runs of a workflow or a trigger (issue 54, src/common/run-holds.ts). */
export interface RunHold {
  scope: 'workflow' | 'trigger';
  /** who paused the workflow or trigger, and when (ISO 8601 UTC) */
  by: string;
  at: string;
  reason?: string;
}

/**
 * The level of the workflow code's history-changing revisions new runs start at
 * (workflows/run/features.ts). 1: the revisions made with patch markers before levels existed
 * (run-time-limit, derived-child-ids, foreach-child-chunks, approval-actor-votes, callbacks,
 * resume); 2: template steps as local activities; 3: traced runs take their span IDs from the
 * OpenTelemetry 2 interceptors' own random stream (workflows/run/tracing-interceptors.ts); 4: lists
 * nested in a forEach item keep its `item` and `index`, and a nested forEach sees the enclosing
 * item as `outer`;
 * 5: template steps that run alongside other lists (forEach concurrency above 1, parallel) are
 * activity tasks again; 6: the run's commands carry Temporal user metadata (summaries of its
 * activities, timers and child workflows; current details while paused: workflows/run/ui-metadata.ts);
 * 7: agent invocations add up their model calls' usage (result, failure details) and stop at their
 * budgets (workflows/agent-loop.ts); an `agent` step records that usage with its outcome;
 * and a chained run is started with its own trigger's priority (src/common/priority.ts);
 * and runs with concurrency limits (`slots`) wait for their slots before their steps (workflows/run/slots.ts).
 */
export const ENGINE_LEVEL = 7;

/** Where a run came from when an operator started it from another run. */
export interface RunOrigin {
  kind: 'rerun' | 'resume';
  runId: string;
}

/** What a step produced, as seen by later steps (interpolation) and by the result bodies. */
export interface StepOutcome {
  /** the top-level step; a nested step's is the index of the top-level step it sits in */
  stepIndex: number;
  /** a nested step's address (`3.2.1`: step 1 of list 2 of step 3); absent on top-level steps */
  stepPath?: string;
  /** COMPLETE, FAILED or TIMEOUT (a step over its own limit) */
  status: 'COMPLETE' | 'FAILED' | 'TIMEOUT';
  resultType: ResultType;
  /** The result text, cut to RESULT_INLINE_LIMIT characters; the whole text is in output.txt. */
  result: string;
  truncated: boolean;
  exitCode: number;
  /** milliseconds */
  duration: number;
  /** why the step failed, for a person */
  error?: string;
  files: { 'output.txt': StoredFile; 'stdout.txt': StoredFile };
  /** an `agent` step's model usage (tokens and cost per model; runs at level 7 and later) */
  usage?: ModelUsage[];
}

/**
 * Results kept inline in workflow state and payloads are cut here, so a run of many steps stays far
 * below Temporal's payload limits; output.txt holds the whole text and readers load it from there.
 */
export const RESULT_INLINE_LIMIT = 4 * 1024;

/** The inline part of a result: at most RESULT_INLINE_LIMIT characters, never half a surrogate pair. */
export function inlinePrefix(text: string): string {
  if (text.length <= RESULT_INLINE_LIMIT) return text;
  const last = text.charCodeAt(RESULT_INLINE_LIMIT - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? RESULT_INLINE_LIMIT - 1 : RESULT_INLINE_LIMIT);
}

/** What an activity needs of an earlier step to interpolate it; the whole result is in its output.txt. */
export type PreviousStep = Pick<StepOutcome, 'stepIndex' | 'stepPath' | 'exitCode' | 'resultType' | 'result' | 'truncated'> & {
  /** absent in inputs scheduled by older workers (whose earlier steps had all completed) */
  status?: StepStatus;
};

/** A step as later steps see it: an outcome, or a SKIPPED step (which has no outcome). */
export type VisibleStep = PreviousStep & { status: StepStatus };

/**
 * Result text inlined into one activity's input, over all earlier steps together. Every step's
 * activity input lists the steps before it, so without a total bound a run's history grows with
 * the square of its results (150 steps of 4 KiB each passed Temporal's 50 MB history limit).
 */
export const PREVIOUS_INLINE_BUDGET = 16 * 1024;

/**
 * The earlier steps as an activity input: the latest results inline while they fit the budget,
 * the others marked truncated (the activity reloads them from output.txt). Pure: used in workflows.
 */
export function previousSteps(outcomes: readonly (StepOutcome | VisibleStep)[]): PreviousStep[] {
  let budget = PREVIOUS_INLINE_BUDGET;
  const compact: PreviousStep[] = [];
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const { stepIndex, stepPath, status, exitCode, resultType, result, truncated } = outcomes[i]!;
    const inline = !truncated && result.length <= budget;
    if (inline) budget -= result.length;
    compact.unshift({
      stepIndex, exitCode, resultType, result: inline ? result : '', truncated: !inline,
      // only new fields are added, so a flat run's activity inputs stay as they were
      ...(stepPath === undefined ? {} : { stepPath }), ...(status === undefined || status === 'COMPLETE' ? {} : { status }),
    });
  }
  return compact;
}

/** A step's retry policy as the runStep activity applies it (definition.ts RetrySchema). */
export interface StepRetry {
  maxAttempts: number;
  nonRetryable: string[];
}

/** The argument of the runStep activity. */
export interface RunStepRequest {
  run: Pick<RunInput, 'runId' | 'orgId' | 'automationId' | 'automationVersion' | 'triggerId' | 'started' | 'inputs'>;
  stepIndex: number;
  /** a nested step's address */
  stepPath?: string;
  /** inside a list: `local`, `item`, `index` and `outer` of the interpolation context */
  scope?: StepScope;
  /** the step's own retry policy: a failed attempt is thrown (Temporal retries it) until the last */
  retry?: StepRetry;
  step: ActivityStep;
  /**
   * the steps that ran before this one, in order (`previousSteps`; inputs scheduled by older
   * workers carry whole StepOutcomes, which fit this type too)
   */
  previous: PreviousStep[];
}

export interface StepState {
  name: string;
  type: Step['type'];
  status: StepStatus;
  executionOrder?: number;
  /** a resumed run's step whose outcome was taken from that earlier run */
  reusedFrom?: string;
  /** forEach and parallel: `12/40 done` */
  progress?: string;
}

/** One step status change, as the workflow saw it (workflows/run/transitions.ts). */
export interface StepTransition {
  /** 1, 2, 3… in the order they happened: the id of the live status stream's events */
  seq: number;
  stepIndex: number;
  status: StepStatus;
  /** ISO 8601 UTC, workflow time */
  at: string;
}

export type Decision = 'approve' | 'reject';

/** One approver's decision, as recorded in the approval step's result and stdout.txt. */
export interface ApprovalDecision {
  approver: string;
  /**
   * Who sent the decision: `api-key:<id>` for the API (the key's ID, never the key), the approver
   * for a link, `operator-signal` or `operator-update` for an operator going straight to Temporal.
   */
  actor: string;
  decision: Decision;
  comment?: string;
  /** ISO 8601 UTC */
  at: string;
  via: 'api' | 'link' | 'signal';
}

/** What the `decide` update answers: the decision as recorded, and the approval step it was recorded on (absent from workers before issue 46). */
export type DecidedApproval = ApprovalDecision & { stepIndex?: number };

/** The argument of the `decide` update and the `approvalDecision` signal. */
export interface DecisionRequest {
  decision: Decision;
  /** required for links; must be one of the step's approvers when given */
  approver?: string;
  /**
   * the API key that sent the decision (`api-key:<id>`), set by the gateway; recorded as the
   * decision's actor, and as the approver when none is named. One key counts as one approval.
   */
  actor?: string;
  comment?: string;
  via?: 'api' | 'link' | 'signal';
  /** the approval step meant; absent means the one waiting now */
  stepIndex?: number;
  /**
   * Set by the gateway: names this decision, so that the `decide` update and the `recordedDecision`
   * signal that may both carry it (the update admitted but not answered in time) count once, and
   * what became of it is kept (`DecisionOutcome`).
   */
  decisionId?: string;
}

/**
 * A decision the gateway recorded with the `recordedDecision` signal because the run did not answer
 * its `decide` update in time (no worker, or a slow one): applied, or refused, when the run reads it.
 */
export interface RecordedDecision extends DecisionRequest {
  decisionId: string;
  via: 'api' | 'link';
}

/**
 * What became of a decision that carried a `decisionId` (the gateway's: API, links, console, MCP):
 * the `state` query's and the run summary's `decisionOutcomes`, the last DECISION_OUTCOMES_KEPT.
 * A decision the `decide` update refused at once is not here: its caller was told.
 */
export interface DecisionOutcome {
  decisionId: string;
  outcome: 'applied' | 'refused';
  /** the approval step it was applied to, or meant for */
  stepIndex?: number;
  decision: Decision;
  /** the approver it decides for (the API key's `api-key:<id>` when it named none) */
  approver: string;
  via: 'api' | 'link';
  /** a refused decision's DecisionRefusal code and why */
  refusal?: keyof typeof DecisionRefusal;
  message?: string;
  /** ISO 8601 UTC, workflow time: when it was applied or refused */
  at: string;
}

/** How many decision outcomes a run keeps in its state and summary (the oldest go first). */
export const DECISION_OUTCOMES_KEPT = 100;

/** Why a paused run is paused (the status response's `waitingOn`). */
export type WaitingOn =
  | { kind: 'timer'; stepIndex: number; stepPath?: string; resumeAt: string }
  | {
    kind: 'approval'; stepIndex: number; stepPath?: string; deadline: string; message: string; required: number;
    approvers: string[]; decisions: ApprovalDecision[];
  }
  /** a PENDING run waits for a slot of a concurrency limit; `position` (1: next) is added by the gateway */
  | { kind: 'slot'; scope: 'trigger' | 'organization'; key: string; limit: number; position?: number }
  /** an operator paused the run (issue 54): it starts no step until unpaused */
  | { kind: 'operator'; by: string; at: string; reason?: string; scope?: RunHold['scope'] };

/** What a step waits on (a timer or an approval), as opposed to a run waiting for a slot or an operator. */
export type StepWaitingOn = Exclude<WaitingOn, { kind: 'slot' | 'operator' }>;

/** An operator's pause of a run, as the run keeps it (RunState.operatorPause, `waitingOn` kind `operator`). */
export interface OperatorPause {
  /** who paused it: the gateway's actor (`member:<id>`, `api-key:<id>`, `admin`), `operator-signal` for a signal sent by hand */
  by: string;
  /** ISO 8601 UTC, workflow time: when the run took the pause */
  at: string;
  reason?: string;
}

/** A pause or unpause sent to a run (the `operatorPause` update, or the `operatorPauseRecorded` signal). */
export interface PauseRequest {
  paused: boolean;
  by?: string;
  reason?: string;
  /**
   * an unpause of a whole workflow or trigger (the release fan-out): lifts only a hold of that scope
   * the run waits in before its first step, never an operator's pause of the run itself
   */
  scope?: RunHold['scope'];
}

/** What the run answers a pause request with: whether it is now held, and the pause it holds. */
export interface PauseAnswer {
  paused: boolean;
  pause?: OperatorPause;
  /** the run's status when it answered (PAUSED once a step boundary was reached, RUNNING while a step finishes) */
  status: RunStatus;
}

/** What the `state` query answers. */
export interface RunState {
  status: RunStatus;
  steps: Record<string, StepState>;
  outcomes: StepOutcome[];
  waitingOn?: WaitingOn;
  /** Why the run failed, once a step has failed (the workflow is then closing). */
  error?: string;
  /** step status changes, oldest first (the last TRANSITIONS_KEPT of them) */
  transitions?: StepTransition[];
  /** what became of the gateway's decisions, oldest first (absent until one is applied or refused) */
  decisionOutcomes?: DecisionOutcome[];
  /** an operator's pause in force (issue 54): the run starts no step until it is lifted; set as soon as the run takes it */
  operatorPause?: OperatorPause;
}

/** What the workflow returns, and what a failed run carries as failure details. */
export interface RunSummary {
  status: 'COMPLETE' | 'FAILED' | 'TIMEOUT';
  error?: string;
  failedStep?: number;
  outcomes: StepOutcome[];
  /** the run's step status changes (absent in runs closed before flowgate recorded them) */
  transitions?: StepTransition[];
  /** every step's final status, nested and SKIPPED steps included (absent from older runs) */
  steps?: Record<string, StepState>;
  /** what became of the gateway's decisions (RunState.decisionOutcomes), when there were any */
  decisionOutcomes?: DecisionOutcome[];
}

/** The decision outcomes a run's summary carries, when it has any. */
export function decisionsOf(state: Pick<RunState, 'decisionOutcomes'>): Pick<RunSummary, 'decisionOutcomes'> {
  return state.decisionOutcomes ? { decisionOutcomes: state.decisionOutcomes } : {};
}

/** ApplicationFailure types thrown by the workflow; the gateway maps them to contract statuses. */
export const FailureType = {
  STEP_FAILED: 'STEP_FAILED',
  STEP_TIMEOUT: 'STEP_TIMEOUT',
  /** the run as a whole exceeded its `timeoutSeconds` (workflows/run/time-limit.ts) */
  RUN_TIMEOUT: 'RUN_TIMEOUT',
  /** newest-wins: a newer run of the trigger took this waiting run's place (workflows/run/slots.ts) */
  RUN_SUPERSEDED: 'RUN_SUPERSEDED',
} as const;

/** The failure types whose first detail is the run's RunSummary. */
export const SUMMARY_FAILURES: readonly string[] = [FailureType.STEP_FAILED, FailureType.STEP_TIMEOUT, FailureType.RUN_TIMEOUT, FailureType.RUN_SUPERSEDED];

/** Why the `decide` update refuses a decision; the gateway answers 409 (403 for NOT_AN_APPROVER). */
export const DecisionRefusal = {
  NOT_WAITING: 'NOT_WAITING',
  ALREADY_DECIDED: 'ALREADY_DECIDED',
  NOT_AN_APPROVER: 'NOT_AN_APPROVER',
} as const;

/** A step computed in the workflow, stored by the recordStep activity (files, outcome). */
export interface RecordStepRequest {
  run: RunStepRequest['run'];
  stepIndex: number;
  stepPath?: string;
  status: StepOutcome['status'];
  resultType: ResultType;
  result: string;
  exitCode: number;
  stdout: string;
  error?: string;
  duration: number;
  /** an `agent` step's model usage */
  usage?: ModelUsage[];
}

/** What the completion callback of a run sends (workflows/run/completion-callback.ts → the postCallback activity). */
export interface CallbackRequest {
  url: string;
  run: Pick<RunInput, 'runId' | 'orgId' | 'automationId' | 'automationName' | 'automationVersion' | 'triggerId' | 'started' | 'startedBy' | 'stepMap'>;
  status: RunSummary['status'];
  error?: string;
  outcomes: StepOutcome[];
  /** ISO 8601 UTC, workflow time: when the run ended */
  ended: string;
  /** the workflow code level of the run that asks for it (6 and later: its commands are labelled); absent before */
  engine?: number;
}

/** A completion callback's state, as the status response shows it (`callback`). */
export const CallbackState = {
  /** the run has not ended yet */
  PENDING: 'PENDING',
  /** the run ended; attempts are being made (retries with backoff) */
  DELIVERING: 'DELIVERING',
  /** a 2xx answer was received */
  DELIVERED: 'DELIVERED',
  /** no attempt succeeded, or the URL is refused (private address, 410 Gone) */
  FAILED: 'FAILED',
  /** the run ended without a chance to send it (terminated in Temporal, or closed by Temporal's backstop execution timeout) */
  NOT_SENT: 'NOT_SENT',
} as const;

export interface CallbackStatus {
  state: keyof typeof CallbackState;
  /** delivery attempts made so far */
  attempts: number;
  /** the last failed attempt's reason */
  lastError?: string;
}

/** ApplicationFailure type of a callback that must not be retried. */
export const CALLBACK_REFUSED = 'CALLBACK_REFUSED';
/** A step result a composite step (branch, forEach, parallel) is made of: its stored output.txt. */
export interface ResultPart {
  key: string;
  resultType: ResultType;
}

/** The recordComposite activity's argument: a construct's result assembled from its parts. */
export interface RecordCompositeRequest extends Omit<RecordStepRequest, 'result' | 'resultType'> {
  /**
   * `array`: a JSON array of the parts (JSON parsed, text as strings, null for none); `single`: the
   * part as it is; `chunks`: the JSON arrays of a chunked forEach's chunks joined (`items` nulls for
   * a chunk without a part)
   */
  combine: { kind: 'array'; parts: (ResultPart | null)[] } | { kind: 'single'; part: ResultPart | null }
    | { kind: 'chunks'; parts: { part: ResultPart | null; items: number }[] };
}
