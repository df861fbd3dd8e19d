/**
 * The contracts between flowgate's Node code and its Temporal workflows, defined once: each
 * workflow type's name and function type, and the queries, updates and signals it answers.
 * Sandbox-safe (types and `define*` only): the workflows register their handlers against these
 * definitions, and the gateway, the services and the tests type their handles with the function
 * types and call queries and updates with the definitions, never by string. Nothing in src/
 * imports workflows/. The names are Temporal workflow types and message names: never rename one
 * (histories and open runs name them).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { BatchInput, BatchState } from './run-batch';
import type { ReleaseInput, ReleaseResult } from './run-holds';
import type { AgentInvocationInput, AgentInvocationResult } from './agent-invocation';
import type { ModelUsage } from './agent-usage';
import type { CodeAgentTaskInput } from './codeagent-task';
import type { DurableToolCallInput, DurableToolCallResult } from './durable-call';
import type { ChunkProgress, ForEachChunkInput, ForEachChunkResult } from './for-each-chunk';
import type { CallbackRequest, CallbackStatus, DecidedApproval, DecisionRequest, PauseAnswer, PauseRequest, RecordedDecision, RunInput, RunState, RunSummary } from './run-types';
import type { ShapeInput, ShapeSignal, ShapeState } from './shaping';
import type { AlertEvaluatorInput, AlertSignal, AlertState, AlertWatchSignal } from './alerts';
import type { SlotAcquire, SlotGrant, SlotRelease, SlotsInput, SlotsState } from './slots';

/** Every workflow type the worker registers (workflows/index.ts exports a function of each name). */
export const WORKFLOW_TYPES = {
  runAutomation: 'runAutomation',
  invokeAgent: 'invokeAgent',
  codeAgentTask: 'codeAgentTask',
  runForEachChunk: 'runForEachChunk',
  retentionSweep: 'retentionSweep',
  deliverRunCallback: 'deliverRunCallback',
  runSlots: 'runSlots',
  shapeTriggerEvents: 'shapeTriggerEvents',
  evaluateAlertRule: 'evaluateAlertRule',
  durableToolCall: 'durableToolCall',
  runBatch: 'runBatch',
  releaseHeldRuns: 'releaseHeldRuns',
} as const;
export type WorkflowType = (typeof WORKFLOW_TYPES)[keyof typeof WORKFLOW_TYPES];

/** A run of a published workflow version (workflows/run-automation.ts). */
export type RunAutomationWorkflow = (input: RunInput) => Promise<RunSummary>;
/** One agent invocation: the model-and-tools loop (workflows/agent-loop.ts). */
export type InvokeAgentWorkflow = (input: AgentInvocationInput) => Promise<AgentInvocationResult>;
/** The waiter behind a code-agent tool called as an MCP task (workflows/codeagent-task.ts). */
export type CodeAgentTaskWorkflow = (input: CodeAgentTaskInput) => Promise<Record<string, unknown>>;
/** One call of a durable custom server's tool, its id the MCP task id (workflows/durable-tool-call.ts). */
export type DurableToolCallWorkflow = (input: DurableToolCallInput) => Promise<DurableToolCallResult>;
/** One chunk of a large forEach, a child of its run (workflows/for-each-chunk.ts). */
export type RunForEachChunkWorkflow = (chunk: ForEachChunkInput) => Promise<ForEachChunkResult>;
/** The hourly retention sweep (workflows/retention-sweep.ts). */
export type RetentionSweepWorkflow = (request?: SweepRequest) => Promise<{ blobs: unknown; finishedRuns: unknown }>;
/** The delivery of a run's completion callback (workflows/deliver-run-callback.ts). */
export type DeliverRunCallbackWorkflow = (request: CallbackRequest) => Promise<CallbackStatus>;

/** The semaphore of one concurrency limit: its FIFO queue and holders (workflows/run-slots.ts). */
export type RunSlotsWorkflow = (input: SlotsInput) => Promise<void>;

/** The entity of one (trigger, key) of a debounced or batched trigger (workflows/shape-trigger-events.ts). */
export type ShapeTriggerEventsWorkflow = (input: ShapeInput) => Promise<void>;

/** The evaluator of one alert rule: counts its outcomes, decides and makes its deliveries (workflows/alert-evaluator.ts). */
export type EvaluateAlertRuleWorkflow = (input: AlertEvaluatorInput) => Promise<void>;
/** A bulk action on the runs a filter selects (workflows/run-batch.ts); the workflow ID is the batch ID. */
export type RunBatchWorkflow = (input: BatchInput) => Promise<BatchState>;
/** The release fan-out of an unpaused workflow or trigger (workflows/release-held-runs.ts). */
export type ReleaseHeldRunsWorkflow = (input: ReleaseInput) => Promise<ReleaseResult>;

/**
 * The workflow ID of run `runId`'s completion-callback delivery (deliverRunCallback), a child the
 * run starts and abandons: the gateway reads the delivery's state under this ID.
 */
export function callbackWorkflowId(runId: string): string {
  return `${runId}-callback`;
}

/** What the retention sweep is asked: `now` (ISO 8601) sweeps as of another moment (tests); unset, the worker's clock. */
export interface SweepRequest {
  now?: string;
  /** the workflow code level of the schedule's creator (6 and later: the sweep's activities are labelled) */
  engine?: number;
}

/** An agent invocation's progress, as its `agentStatus` query answers it. */
export interface AgentStatus {
  status: 'RUNNING' | 'COMPLETE';
  turns: number;
  toolCalls: number;
  /** tokens and cost per model so far (invocations at level 7 and later) */
  usage?: ModelUsage[];
}

/** A run's state (runAutomation and runForEachChunk answer it): status, steps, what it waits on. */
export const stateQuery = defineQuery<RunState>('state');
/** An approval decision, validated and recorded by the run, answered with the decision as recorded. */
export const decideUpdate = defineUpdate<DecidedApproval, [DecisionRequest]>('decide');
/** An approval decision sent without waiting for its answer (`temporal workflow signal`, older gateways). */
export const approvalSignal = defineSignal<[DecisionRequest]>('approvalDecision');
/**
 * A decision of the API, a link or the console that the run did not answer through `decide` in
 * time: written to the history at once (no worker needed), applied or refused when the run reads
 * it, keeping its own `via` and actor; the same `decisionId` as its update, so both count once.
 */
export const recordedDecisionSignal = defineSignal<[RecordedDecision]>('recordedDecision');
/**
 * An operator's pause or unpause of a run (issue 54), answered with the pause in force; the run
 * holds at its next step boundary (workflows/run/operator-pause.ts).
 */
export const pauseUpdate = defineUpdate<PauseAnswer, [PauseRequest]>('operatorPause');
/** The same request sent without waiting (a run that did not answer the update in time, `temporal workflow signal`). */
export const pauseSignal = defineSignal<[PauseRequest]>('operatorPauseRecorded');
/** A batch's progress (runBatch). */
export const batchStateQuery = defineQuery<BatchState>('batchState');
/** An agent invocation's progress. */
export const agentStatusQuery = defineQuery<AgentStatus>('agentStatus');
/** A chunk's progress, sent to its run (throttled). */
export const forEachProgressSignal = defineSignal<[ChunkProgress]>('forEachProgress');
/** A run asks the semaphore of a limit for a slot (sent with signal-with-start by the acquireSlot activity). */
export const slotAcquireSignal = defineSignal<[SlotAcquire]>('slotAcquire');
/** A run gives its slot back (or leaves the queue): sent by the run when it ends, whatever the ending. */
export const slotReleaseSignal = defineSignal<[SlotRelease]>('slotRelease');
/** The semaphore grants a slot to a waiting run (or tells it it was superseded). */
export const slotGrantSignal = defineSignal<[SlotGrant]>('slotGrant');
/** The semaphore's holders and queue (the gateway reads a waiting run's place from it). */
export const slotsQuery = defineQuery<SlotsState>('slots');
/** One call to a debounced or batched trigger (sent with signal-with-start by the gateway). */
export const shapeEventSignal = defineSignal<[ShapeSignal]>('shapeEvent');
/** What a shaping entity holds: its pending events and the runs it started. */
export const shapeStateQuery = defineQuery<ShapeState>('shapeState');
/** A run's outcome for an alert rule (sent with signal-with-start by the worker that saw the run end). */
export const alertOutcomeSignal = defineSignal<[AlertSignal]>('alertOutcome');
/** An approval wait that started or ended, or a budget use, for an approval_waiting or budget rule (workflows/alert-watches.ts). */
export const alertWatchSignal = defineSignal<[AlertWatchSignal]>('alertWatch');
/** An alert evaluator's state: its window, cooldown and the deliveries it made. */
export const alertStateQuery = defineQuery<AlertState & { delivered: number; failed: number }>('alertState');
