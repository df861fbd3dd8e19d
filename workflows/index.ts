// The worker bundles this file: every workflow function exported here is a Temporal workflow type.
import type {
  CodeAgentTaskWorkflow, DeliverRunCallbackWorkflow, InvokeAgentWorkflow, RetentionSweepWorkflow, RunAutomationWorkflow, RunBatchWorkflow, ReleaseHeldRunsWorkflow, RunForEachChunkWorkflow, RunSlotsWorkflow, ShapeTriggerEventsWorkflow, WorkflowType, EvaluateAlertRuleWorkflow, DurableToolCallWorkflow,
} from '../src/common/workflow-contracts';
import { runAutomation } from './run-automation';
import { invokeAgent } from './agent-loop';
import { deliverRunCallback } from './deliver-run-callback';
import { retentionSweep } from './retention-sweep';
import { runForEachChunk } from './for-each-chunk';
import { codeAgentTask } from './codeagent-task';
import { runSlots } from './run-slots';
import { shapeTriggerEvents } from './shape-trigger-events';
import { evaluateAlertRule } from './alert-evaluator';
import { durableToolCall } from './durable-tool-call';
import { runBatch } from './run-batch';
import { releaseHeldRuns } from './release-held-runs';

export { runAutomation, invokeAgent, deliverRunCallback, retentionSweep, runForEachChunk, codeAgentTask, runSlots, shapeTriggerEvents, evaluateAlertRule, durableToolCall, runBatch, releaseHeldRuns };

/** The function type Node code starts and reads each workflow type by (src/common/workflow-contracts.ts). */
interface Contracts {
  runAutomation: RunAutomationWorkflow;
  invokeAgent: InvokeAgentWorkflow;
  codeAgentTask: CodeAgentTaskWorkflow;
  runForEachChunk: RunForEachChunkWorkflow;
  retentionSweep: RetentionSweepWorkflow;
  deliverRunCallback: DeliverRunCallbackWorkflow;
  runSlots: RunSlotsWorkflow;
  shapeTriggerEvents: ShapeTriggerEventsWorkflow;
  evaluateAlertRule: EvaluateAlertRuleWorkflow;
  durableToolCall: DurableToolCallWorkflow;
  runBatch: RunBatchWorkflow;
  releaseHeldRuns: ReleaseHeldRunsWorkflow;
}

type Holds<Actual extends Expected, Expected> = Actual;

/**
 * Checked by the build: the contracts name exactly the workflow types exported here, and each
 * workflow function fits the function type of its contract.
 */
export type ContractsHold = [
  Holds<keyof Contracts, WorkflowType>,
  Holds<WorkflowType, keyof Contracts>,
  Holds<{
    runAutomation: typeof runAutomation; invokeAgent: typeof invokeAgent; codeAgentTask: typeof codeAgentTask;
    runForEachChunk: typeof runForEachChunk; retentionSweep: typeof retentionSweep; deliverRunCallback: typeof deliverRunCallback;
    runSlots: typeof runSlots; shapeTriggerEvents: typeof shapeTriggerEvents; evaluateAlertRule: typeof evaluateAlertRule; durableToolCall: typeof durableToolCall; runBatch: typeof runBatch;
    releaseHeldRuns: typeof releaseHeldRuns;
  }, Contracts>,
];
