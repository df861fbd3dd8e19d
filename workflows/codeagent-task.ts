/**
 * codeAgentTask: the waiter behind an MCP task of a code-agent tool (src/tools/mcp/tasks.ts). One
 * workflow per task, its id the task id. The gateway made the call that starts the agent's run
 * (create_agent, create_run) or checked the run exists (stream_run); this workflow waits for that
 * run to end, through one heartbeating activity that polls the backend, then answers the tool's
 * result: create_agent `{agent, run}` and create_run `{run}` with the run as it ended, stream_run
 * the run's events to its end. A run that ended other than FINISHED fails the workflow with the
 * result as the failure's detail (the task is `failed`, its result `isError`).
 *
 * Cancelled (tasks/cancel): the waiter asks the backend to cancel the run it started (create_agent,
 * create_run; stream_run only watched), then ends CANCELLED. Its execution timeout is the task's
 * ttl: past it nobody can see the task, so nobody waits.
 *
 * No signals or queries (the gateway reads the task from the workflow's status, memo and result).
 * Timeouts: the wait for the run is one activity as long as the ttl (at least a minute), heartbeats
 * every 60 s, retried without limit; reading a stream and cancelling the run 2 min, 5 attempts.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CodeAgentTaskFailureType, type CodeAgentTaskInput } from '../src/common/codeagent-task';
import { useEngine } from './run/features';
import { showDetails, summary } from './run/ui-metadata';

const { readCodeAgentRunStream, cancelCodeAgentRun } = proxyActivities<Activities>({
  startToCloseTimeout: '2m', retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

export async function codeAgentTask(input: CodeAgentTaskInput): Promise<Record<string, unknown>> {
  useEngine(input);
  if (input.refused) {
    throw ApplicationFailure.create({ message: input.refused.message, type: CodeAgentTaskFailureType.TOOL_ERROR, nonRetryable: true, details: [input.refused.value] });
  }
  // the poll runs as long as the task lives; heartbeats (above the longest pause and poll) notice a dead worker
  const { waitForCodeAgentRun } = proxyActivities<Activities>({
    startToCloseTimeout: Math.max(60_000, input.ttlMs), heartbeatTimeout: '60s',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
  });
  const ref = { orgId: input.orgId, pcid: input.pcid, agentId: input.agentId, runId: input.runId };
  let run: Record<string, unknown>;
  try {
    showDetails(`Waiting for the code agent's run ${input.runId} (agent ${input.agentId}, ${input.tool})`);
    run = await waitForCodeAgentRun.executeWithOptions(summary(`${input.tool}: wait for run ${input.runId} of agent ${input.agentId}`), [ref]);
    showDetails('');
  } catch (error) {
    if (isCancellation(error) && input.tool !== 'codeagent_stream_run') {
      await CancellationScope.nonCancellable(() => cancelCodeAgentRun.executeWithOptions(summary(`${input.tool}: cancel run ${input.runId}`), [ref]));
    }
    // the activity's own failure (run not found, key refused) is the task's reason, not "activity failed"
    if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) {
      const { message, type, details } = error.cause;
      throw ApplicationFailure.create({ message, type: type ?? CodeAgentTaskFailureType.RUN_UNREADABLE, nonRetryable: true, details: details ? [...details] : [] });
    }
    throw error;
  }
  let value: Record<string, unknown>;
  if (input.tool === 'codeagent_stream_run') {
    const read = await readCodeAgentRunStream.executeWithOptions(summary(`${input.tool}: read the events of run ${input.runId}`),
      [{ ...ref, ...(input.lastEventId === undefined ? {} : { lastEventId: input.lastEventId }) }]);
    if (read.isError) throw ApplicationFailure.create({ message: read.message, type: CodeAgentTaskFailureType.TOOL_ERROR, nonRetryable: true, details: [read.value] });
    value = read.value;
  } else {
    // create_agent answered {agent, run}, create_run {run}: the run as it ended takes the started one's place
    value = { ...input.started, run };
  }
  const status = String(run.status);
  if (status !== 'FINISHED') {
    const message = `the agent's run ${input.runId} ended ${status}`;
    throw ApplicationFailure.create({ message, type: CodeAgentTaskFailureType.TOOL_ERROR, nonRetryable: true, details: [{ ...value, error: message }] });
  }
  return value;
}
