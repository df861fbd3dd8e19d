// The worker bundles this file: every workflow function exported here is a Temporal workflow type.
export { runAutomation } from './run-automation';
export { invokeAgent } from './agent-loop';
export { deliverRunCallback } from './run/completion-callback';
export { retentionSweep } from './retention-sweep';
export { runForEachChunk } from './for-each-chunk';
export { codeAgentTask } from './codeagent-task';
