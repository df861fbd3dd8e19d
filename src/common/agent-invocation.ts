/**
 * Types shared by the agent workflow, its activities and the callers that start it. Pure: the
 * workflow bundle imports this module.
 */
import type { CallUsage, ModelUsage, MonthTotals, UsageBudget } from './agent-usage';

/** The input of the invokeAgent workflow. Messages and tool results travel through the blob store. */
export interface AgentInvocationInput {
  invocationId: string;
  orgId: string;
  agentId: string;
  chatId: string;
  message: string;
  /** `X-Pf-Forward-*` headers of the invoking request, already reduced (contract 4.7) */
  forwardHeaders: Record<string, string>;
  /** who started it, for runs its workflow tools start */
  startedBy: string;
  /** set when an `agent` step started it */
  parentRunId?: string;
  chainDepth?: number;
  /**
   * the workflow code level its starter knew (ENGINE_LEVEL, src/common/run-types.ts); absent on
   * invocations started before level 6, which label none of their commands (workflows/run/ui-metadata.ts)
   */
  engine?: number;
}

/** One tool the model may call, under the name it sees. */
export type ToolBinding =
  | { modelName: string; kind: 'tool'; server: string; tool: string }
  | { modelName: string; kind: 'workflow'; triggerId: string };

export interface AgentPlan {
  agentName: string;
  maxTurns: number;
  maxToolCalls: number;
  toolResultChars: number;
  tools: ToolBinding[];
  /** the budgets the invocation stops at (agent limits, the organization's month); absent before level 7 or with none */
  budget?: UsageBudget;
}

/** `budget`: refused because a budget is already used up (the organization's month) */
export type PrepareResult = { ok: true; plan: AgentPlan } | { ok: false; error: string; budget?: boolean };

/** A tool result the next model call appends: in the blob store, or inline when short. */
export interface ToolResultRef {
  toolCallId: string;
  key?: string;
  text?: string;
}

export interface ModelTurnRequest {
  orgId: string;
  invocationId: string;
  agentId: string;
  turn: number;
  /** results of the previous turn's tool calls, in order */
  toolResults: ToolResultRef[];
  /** a user message appended after them (the output-schema correction) */
  note?: string;
}

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelTurnResult {
  content: string | null;
  toolCalls: ModelToolCall[];
  /** with an output schema: why the answer does not fit it */
  invalidOutput?: string;
  /** with an output schema: the parsed answer, when it fits */
  output?: unknown;
  /** what the call used, when the provider reported it */
  usage?: CallUsage;
  /** the organization's month totals after the call */
  month?: MonthTotals;
}

export interface ToolCallRequest {
  orgId: string;
  invocationId: string;
  chatId: string;
  turn: number;
  index: number;
  toolCallId: string;
  binding: ToolBinding & { kind: 'tool' };
  arguments: string;
  forwardHeaders: Record<string, string>;
  toolResultChars: number;
}

export interface ToolCallResult {
  ref: ToolResultRef;
  ok: boolean;
  /** one line for the step's stdout.txt */
  line: string;
}

export interface FinishRequest {
  orgId: string;
  chatId: string;
  invocationId: string;
  message: string;
  response: string;
}

/** Status values of an invocation, as agent_invoke and the status tool answer them. */
export type InvocationStatus = 'RUNNING' | 'COMPLETE' | 'FAILED' | 'TIMEOUT';

export interface AgentToolCallLog {
  turn: number;
  name: string;
  ok: boolean;
  line: string;
}

/** What invokeAgent returns. */
export interface AgentInvocationResult {
  invocationId: string;
  agentId: string;
  chatId: string;
  status: 'COMPLETE';
  /** the final answer: markdown, or JSON text with an output schema */
  response: string;
  /** the parsed answer, with an output schema */
  output?: unknown;
  turns: number;
  toolCalls: AgentToolCallLog[];
  /** tokens and cost per model (level 7 and later) */
  usage?: ModelUsage[];
}

/** The details of a failed invocation's ApplicationFailure (level 7 and later): what it used. */
export interface AgentFailureDetails {
  usage: ModelUsage[];
}

/** ApplicationFailure types of the agent workflow. */
export const AgentFailureType = {
  AGENT_UNAVAILABLE: 'AGENT_UNAVAILABLE',
  TURN_LIMIT: 'TURN_LIMIT',
  OUTPUT_INVALID: 'OUTPUT_INVALID',
  MODEL_FAILED: 'MODEL_FAILED',
  /** a token or cost budget (the agent's per invocation, the organization's per month) is reached */
  BUDGET_EXHAUSTED: 'BUDGET_EXHAUSTED',
} as const;

export function invocationKey(orgId: string, invocationId: string, file: string): string {
  return `agents/${orgId}/invocations/${invocationId}/${file}`;
}

export function chatHistoryKey(orgId: string, chatId: string): string {
  return `agents/${orgId}/chats/${chatId}/history.json`;
}
