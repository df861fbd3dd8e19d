/**
 * MCP Tasks for the code-agent tools that wait (src/tools/mcp/tasks.ts): the waiter workflow's
 * input, its memo and its failure types. Pure, so the workflow (workflows/codeagent-task.ts), its
 * activities (activities/codeagent-task.ts) and the gateway share them.
 *
 * The waiter holds no secret: the connection is named by its PCID and opened by the activity
 * (through the tool dispatcher, as the task's organization) each time it talks to the backend.
 */

export const CODEAGENT_TASK_WORKFLOW = 'codeAgentTask';
export const CODEAGENT_SERVER = 'codeagent';

/** The code-agent tools a task-augmented `tools/call` may run as a task. */
export const CODEAGENT_TASK_TOOLS = ['codeagent_create_agent', 'codeagent_create_run', 'codeagent_stream_run'] as const;
export type CodeAgentTaskTool = (typeof CODEAGENT_TASK_TOOLS)[number];

export function isCodeAgentTaskTool(name: string): name is CodeAgentTaskTool {
  return CODEAGENT_TASK_TOOLS.some((tool) => tool === name);
}

/** A run in one of these states is over (the backend's run statuses). */
export const TERMINAL_CODEAGENT_RUN_STATUSES = ['FINISHED', 'ERROR', 'CANCELLED', 'EXPIRED'] as const;

export interface CodeAgentTaskInput {
  orgId: string;
  /** the task id: also the workflow id */
  taskId: string;
  tool: CodeAgentTaskTool;
  /** the codeagent connection (its PCID), opened by the activities */
  pcid: string;
  agentId: string;
  runId: string;
  /** the answer of the call that started the run (create_agent's `{agent, run}`, create_run's `{run}`); secrets are not in it */
  started?: Record<string, unknown>;
  /** stream_run: read the events after this id */
  lastEventId?: string;
  /** the backend refused the call that would have started the run: the task fails at once with this tool error */
  refused?: { message: string; value: Record<string, unknown> };
  /** the task's time to live: the waiter gives up after it (its execution timeout says the same) */
  ttlMs: number;
  /** the workflow code level its starter knew (6 and later: its commands are labelled); absent before */
  engine?: number;
}

/** The waiter's memo: enough to authorize and list the task without reading its input. */
export interface CodeAgentTaskMemo {
  codeAgentTask: { orgId: string; tool: CodeAgentTaskTool; agentId: string; runId: string; ttlMs: number };
}

/** The waiter's failures: the tool's error result travels as the failure's first detail. */
export const CodeAgentTaskFailureType = {
  /** the agent's run ended other than FINISHED, or the backend refused the starting call */
  TOOL_ERROR: 'CodeAgentToolError',
  /** the backend says the agent or run does not exist (any more), or refuses the connection's key */
  RUN_UNREADABLE: 'CodeAgentRunUnreadable',
} as const;
