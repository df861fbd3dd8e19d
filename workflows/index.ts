// The worker bundles this file: every workflow function exported here is a Temporal workflow type.
export { approvalSignal, decideUpdate, runAutomation, stateQuery } from './run-automation';
export { agentStatusQuery, invokeAgent } from './agent-loop';
export { deliverRunCallback } from './steps/callback';
export { retentionSweep } from './retention-sweep';
export { runForEachChunk } from './for-each-chunk';
export { codeAgentTask } from './codeagent-task';
