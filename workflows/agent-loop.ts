/**
 * invokeAgent: one invocation of an agent, the model and tool loop of issue 11.
 *
 * Input: AgentInvocationInput (small: IDs, the message, forwarded headers). The conversation lives
 *   in the blob store; history holds references and the model's short replies, and one
 *   invocation is bounded by the agent's turn and tool-call limits, so it needs no continue-as-new
 *   (a long chat is many invocations, each reading the chat's history from the blob store).
 * Query `agentStatus`: RUNNING or COMPLETE, and the turns and tool calls so far.
 * Each model call and each tool call is an activity with its own timeout, heartbeat and retry
 *   policy: a worker killed mid-loop resumes from the last finished activity. Workflow tools run as
 *   child runs (runAutomation), waited for.
 * Timeouts: the execution timeout is the agent's wall-clock limit (set by the starter; Temporal
 *   reports TIMED_OUT). Failures are ApplicationFailure of AgentFailureType.
 * Usage (level 7 and later): each model call's tokens and cost add up per model, in the result and
 *   in the details of a failure; when a budget is reached (the agent's per invocation, the
 *   organization's per month) the invocation ends BUDGET_EXHAUSTED before its next model call,
 *   without starting the tool calls of the answer that reached it (their results could only go to
 *   a model call the budget forbids). A final answer is never thrown away.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, ChildWorkflowFailure, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  AgentFailureType, type AgentInvocationInput, type AgentInvocationResult, type AgentToolCallLog, type ToolBinding, type ToolResultRef,
} from '../src/common/agent-invocation';
import { addUsage, budgetReached, type ModelUsage } from '../src/common/agent-usage';
import { agentStatusQuery, type AgentStatus } from '../src/common/workflow-contracts';
import { runAutomation } from './run-automation';
import { startChainedRun } from './steps/chain';
import { atLevel, useEngine } from './run/features';
import { showDetails, summary } from './run/ui-metadata';


const RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 } as const;

const { prepareAgentInvocation, finishAgentInvocation, resolveTrigger } = proxyActivities<Activities>({ startToCloseTimeout: '1m', retry: RETRY });
// The model adapter bounds one call (FLOWGATE_LLM_TIMEOUT_SECONDS); heartbeats notice a dead worker in seconds.
const { callAgentModel } = proxyActivities<Activities>({
  startToCloseTimeout: '11m', heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 6 },
});
// The dispatcher bounds one call by the tool's own limit; this is the outer guard.
const { callAgentTool } = proxyActivities<Activities>({ startToCloseTimeout: '10m', heartbeatTimeout: '10s', retry: RETRY });

export async function invokeAgent(input: AgentInvocationInput): Promise<AgentInvocationResult> {
  useEngine(input);
  const status: AgentStatus = { status: 'RUNNING', turns: 0, toolCalls: 0 };
  setHandler(agentStatusQuery, () => status);

  // level 7: usage is added up, carried in the result and failures, and budgets stop the loop
  const accounting = atLevel(7);
  let usage: ModelUsage[] = [];
  const withUsage = <T extends object>(details: T): T | (T & { usage: ModelUsage[] }) => (accounting ? { ...details, usage } : details);

  const prepared = await prepareAgentInvocation.executeWithOptions(summary(`agent ${input.agentId}: prepare`), [input]);
  if (!prepared.ok) {
    if (accounting && prepared.budget) throw ApplicationFailure.nonRetryable(prepared.error, AgentFailureType.BUDGET_EXHAUSTED, { usage });
    throw ApplicationFailure.nonRetryable(prepared.error, AgentFailureType.AGENT_UNAVAILABLE);
  }
  const { plan } = prepared;
  const calls: AgentToolCallLog[] = [];
  let toolResults: ToolResultRef[] = [];
  let note: string | undefined;
  let outputRetried = false;

  for (let turn = 0; ; turn++) {
    if (turn >= plan.maxTurns) {
      throw ApplicationFailure.nonRetryable(
        `the agent used all ${plan.maxTurns} model turns (limits.maxTurns) without a final answer`, AgentFailureType.TURN_LIMIT, withUsage({ toolCalls: calls }));
    }
    showDetails(`Agent ${plan.agentName}: model turn ${turn + 1} of at most ${plan.maxTurns}; ${status.toolCalls} tool call(s) so far`);
    const reply = await modelTurn(`agent ${plan.agentName}: model call ${turn + 1}`, { orgId: input.orgId, invocationId: input.invocationId, agentId: input.agentId, turn, toolResults, note },
      accounting ? [{ usage }] : []);
    status.turns = turn + 1;
    toolResults = [];
    note = undefined;
    if (accounting && reply.usage) {
      usage = addUsage(usage, reply.usage);
      status.usage = usage;
    }
    // another model call is needed (tools to call, or an answer to correct): not past a budget
    const reached = accounting && (reply.toolCalls.length > 0 || reply.invalidOutput !== undefined) ? budgetReached(plan.budget, usage, reply.month) : undefined;
    if (reached) {
      const pending = reply.toolCalls.length ? `, without running the ${reply.toolCalls.length} tool call(s) it asked for` : '';
      throw ApplicationFailure.nonRetryable(`budget exhausted: ${reached}; the invocation stopped after model call ${turn + 1}${pending}`,
        AgentFailureType.BUDGET_EXHAUSTED, { toolCalls: calls, usage });
    }

    if (reply.toolCalls.length === 0) {
      if (reply.invalidOutput !== undefined) {
        if (outputRetried) throw ApplicationFailure.nonRetryable(`the agent's answer was refused twice: ${reply.invalidOutput}`, AgentFailureType.OUTPUT_INVALID, ...(accounting ? [{ usage }] : []));
        outputRetried = true;
        note = `Your answer was not accepted: ${reply.invalidOutput}. Answer again with only a JSON value that validates against the schema.`;
        continue;
      }
      const response = reply.content ?? '';
      await finishAgentInvocation.executeWithOptions(summary(`agent ${plan.agentName}: save the answer`), [{ orgId: input.orgId, chatId: input.chatId, invocationId: input.invocationId, message: input.message, response }]);
      status.status = 'COMPLETE';
      return {
        invocationId: input.invocationId, agentId: input.agentId, chatId: input.chatId, status: 'COMPLETE', response,
        ...(reply.output === undefined ? {} : { output: reply.output }), turns: status.turns, toolCalls: calls, ...(accounting ? { usage } : {}),
      };
    }

    for (const [index, call] of reply.toolCalls.entries()) {
      const binding = plan.tools.find((b) => b.modelName === call.name);
      const refuse = (error: string): void => {
        toolResults.push({ toolCallId: call.id, text: JSON.stringify({ error }) });
        calls.push({ turn, name: call.name, ok: false, line: `${call.name}: ${error}` });
      };
      if (!binding) {
        refuse(`there is no tool ${call.name}`);
      } else if (status.toolCalls >= plan.maxToolCalls) {
        refuse(`the limit of ${plan.maxToolCalls} tool calls for this request is reached; answer with what you have`);
      } else {
        status.toolCalls++;
        if (binding.kind === 'tool') {
          showDetails(`Agent ${plan.agentName}: turn ${turn + 1} calls tool ${call.name}`);
          const result = await callAgentTool.executeWithOptions(summary(`agent ${plan.agentName}: turn ${turn + 1} tool ${call.name} (${binding.server}/${binding.tool})`), [{
            orgId: input.orgId, invocationId: input.invocationId, chatId: input.chatId, turn, index, toolCallId: call.id, binding,
            arguments: call.arguments, forwardHeaders: input.forwardHeaders, toolResultChars: plan.toolResultChars,
          }]);
          toolResults.push(result.ref);
          calls.push({ turn, name: call.name, ok: result.ok, line: result.line });
        } else {
          showDetails(`Agent ${plan.agentName}: turn ${turn + 1} runs workflow tool ${call.name} (trigger ${binding.triggerId})`);
          const outcome = await runWorkflowTool(binding, call.arguments, input);
          toolResults.push({ toolCallId: call.id, text: cut(outcome.text, plan.toolResultChars) });
          calls.push({ turn, name: call.name, ok: outcome.ok, line: outcome.line });
        }
      }
    }
  }
}

/** One model call; a call that cannot succeed (a refused request, retries used up) fails the invocation with its reason. */
async function modelTurn(label: string, request: Parameters<typeof callAgentModel>[0], details: unknown[]): ReturnType<typeof callAgentModel> {
  try {
    return await callAgentModel.executeWithOptions(summary(label), [request]);
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
      throw ApplicationFailure.nonRetryable(err.cause.message, AgentFailureType.MODEL_FAILED, ...details);
    }
    throw err;
  }
}

/** A workflow tool: its trigger resolved as the agent's organization, then a child run, waited for. */
async function runWorkflowTool(binding: ToolBinding & { kind: 'workflow' }, rawArguments: string, agent: AgentInvocationInput): Promise<{ ok: boolean; text: string; line: string }> {
  let inputs: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(rawArguments || '{}');
    if (parsed !== null && typeof parsed === 'object' && 'inputs' in parsed && isRecord(parsed.inputs)) inputs = parsed.inputs;
  } catch {
    return { ok: false, text: JSON.stringify({ error: 'the arguments are not JSON' }), line: `workflow ${binding.triggerId}: arguments are not JSON` };
  }
  const resolved = await resolveTrigger.executeWithOptions(summary(`agent ${agent.agentId}: resolve trigger ${binding.triggerId}`), [{
    orgId: agent.orgId, triggerId: binding.triggerId, inputs, parentRunId: agent.invocationId, chainDepth: (agent.chainDepth ?? 0) + 1, startedBy: agent.startedBy,
  }]);
  if (!resolved.ok) return { ok: false, text: JSON.stringify({ error: resolved.error }), line: `workflow ${binding.triggerId}: ${resolved.error}` };
  const { runId, input: runInput, child } = await startChainedRun(resolved.input, true, runAutomation, 'agent');
  try {
    const summary = await child.result();
    const text = JSON.stringify({
      runId, automationId: runInput.automationId, status: summary.status,
      results: summary.outcomes.map((o) => ({ stepIndex: o.stepIndex, resultType: o.resultType, result: o.result })),
    });
    return { ok: true, text, line: `workflow ${binding.triggerId}: run ${runId} completed` };
  } catch (err) {
    // The invocation being cancelled propagates; a child that failed is the model's to hear about.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    const reason = err.cause?.message ?? err.message;
    return { ok: false, text: JSON.stringify({ runId, error: reason }), line: `workflow ${binding.triggerId}: run ${runId} failed: ${reason}` };
  }
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n[… ${text.length - limit} more characters cut]`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
