/** What an agent invocation is asked with and answered as (src/agents/service.ts invoke, status, wait). */
import type { AgentInvocationResult } from '../common/agent-invocation';
import type { UsageView } from '../common/agent-usage';

export interface InvokeRequest {
  agentId: string;
  message: string;
  chatId?: string;
  forwardHeaders?: Record<string, string>;
  startedBy: string;
  /** seconds to wait for the answer; default FLOWGATE_AGENT_WAIT_SECONDS */
  waitSeconds?: number;
  /** started by a task-augmented agent_invoke (MCP Tasks): the invocation is then a task of the organization */
  asTask?: boolean;
  /** the task's ttl (ms), kept in the memo: past it the task is unknown */
  taskTtlMs?: number;
}

/** `usage`: every model call's tokens and cost so far; `reason`: a failure's AgentFailureType (BUDGET_EXHAUSTED, …) */
export type InvocationView =
  | (Omit<AgentInvocationResult, 'usage'> & { status: 'COMPLETE'; usage?: UsageView })
  | { invocationId: string; agentId: string; chatId: string; status: 'RUNNING' | 'FAILED' | 'TIMEOUT'; error?: string; reason?: string; usage?: UsageView };
