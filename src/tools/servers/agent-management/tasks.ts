/**
 * The `agent-management` server's task kind: `agent_invoke` may run as an MCP task, and the task
 * is the invocation (an `invokeAgent` workflow started with `asTask`, whose memo marks it an MCP
 * task); its result is agent_invoke's answer, or a tool error saying why the invocation ended.
 */
import { z } from 'zod';
import type { AgentService, InvocationView } from '../../../agents/service';
import { WORKFLOW_TYPES } from '../../../common/workflow-contracts';
import { describeIssues } from '../../define-tool';
import { ToolCallError, type ToolResult } from '../../server';
import type { TaskKind } from '../../mcp/task-kind';
import { AGENT_INVOKE_TOOL, AGENT_MANAGEMENT_SERVER_NAME, agentInvokeInput, unprefixedAgentTool } from './index';

const InvocationTaskMemoSchema = z.object({ agent: z.object({ orgId: z.string(), mcpTask: z.literal(true), taskTtlMs: z.unknown() }).loose() }).loose();

/** What the task kind needs of the agent service (built once at start). */
export type AgentInvocations = Pick<AgentService, 'invoke' | 'wait'>;

export function agentTaskKind(agents: AgentInvocations): TaskKind {
  return {
    server: AGENT_MANAGEMENT_SERVER_NAME,
    workflowType: WORKFLOW_TYPES.invokeAgent,
    cancelledMessage: 'the invocation was cancelled',
    runsAsTask: (toolName) => unprefixedAgentTool(toolName) === AGENT_INVOKE_TOOL,
    owns(memo, orgId) {
      const parsed = InvocationTaskMemoSchema.safeParse(memo);
      return parsed.success && parsed.data.agent.orgId === orgId;
    },
    ttlOf(memo) {
      const parsed = z.object({ agent: z.object({ taskTtlMs: z.unknown() }).loose() }).loose().safeParse(memo);
      return parsed.success && typeof parsed.data.agent.taskTtlMs === 'number' ? parsed.data.agent.taskTtlMs : null;
    },
    async start(orgId, _toolName, args, call) {
      const parsed = agentInvokeInput(Number.MAX_SAFE_INTEGER).safeParse(args);
      if (!parsed.success) throw new ToolCallError('INVALID_ARGUMENTS', describeIssues(AGENT_INVOKE_TOOL, parsed.error));
      const { waitSeconds: _ignored, ...request } = parsed.data;
      const view = await agents.invoke(orgId, {
        ...request, forwardHeaders: { ...call.forwardHeaders }, startedBy: 'agent-management', waitSeconds: 0, asTask: true, taskTtlMs: call.ttlMs,
      });
      return view.invocationId;
    },
    async state(orgId, taskId, _workflow, closed) {
      const ended = closed === 'failed' ? await agents.wait(orgId, taskId, 0) : undefined;
      return { status: closed ?? 'working', statusMessage: ended && ended.status !== 'COMPLETE' ? ended.error : undefined };
    },
    async result(orgId, taskId, workflow, waitMs, signal) {
      const view = await agents.wait(orgId, taskId, workflow.status.name === 'RUNNING' ? waitMs : 0, signal);
      if (view.status === 'RUNNING') return undefined;
      return agentToolResult(view, workflow.status.name === 'CANCELLED');
    },
  };
}

/** A closed invocation as agent_invoke's result: the answer, or a tool error saying why it ended. */
function agentToolResult(view: InvocationView, cancelled: boolean): ToolResult {
  if (view.status === 'COMPLETE') return { isError: false, value: { ...view } };
  const error = cancelled ? 'the invocation was cancelled' : view.error ?? `the invocation ended ${view.status}`;
  const status = cancelled ? 'CANCELLED' : view.status;
  return { isError: true, message: error, value: { ...view, status, error } };
}
