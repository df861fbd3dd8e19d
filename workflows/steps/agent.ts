/**
 * `agent`: invokes an agent of the run's organization as a child workflow (invokeAgent) of the
 * run, so the run's page in the Temporal Web UI shows it and cancelling the run cancels it. The
 * child is bounded by the step's timeoutSeconds and the run's remaining time.
 */
import { CancellationScope, ChildWorkflowFailure, isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { AgentInvocationInput, AgentInvocationResult } from '../../src/common/agent-invocation';
import type { AgentStep } from '../../src/common/definition';
import type { RunInput } from '../../src/common/run-types';
import { SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { childUuid } from '../run/child-ids';
import { runDeadline } from '../run/time-limit';
import { completed, failed, type Renderer, type StepDraft } from './step-draft';

export async function agentStep(step: AgentStep, run: RunInput, stepIndex: number | string, render: Renderer): Promise<StepDraft> {
  const message = String(await render(step.message));
  const chatId = step.chatId === undefined ? `chat_${childUuid('chat').replace(/-/g, '')}` : String(await render(step.chatId));
  const invocationId = `${run.runId}-agent-${stepIndex}`;
  const input: AgentInvocationInput = {
    invocationId, orgId: run.orgId, agentId: step.agentId, chatId, message, forwardHeaders: {}, startedBy: run.startedBy,
    parentRunId: run.runId, chainDepth: run.chainDepth ?? 0,
  };
  let timeoutMs = step.timeoutSeconds * 1000;
  const expiry = runDeadline();
  if (expiry) timeoutMs = Math.max(1000, Math.min(timeoutMs, expiry.getTime() - Date.now()));
  // By name, not by import: the agent loop imports runAutomation for its workflow tools.
  const child = await startChild<(i: AgentInvocationInput) => Promise<AgentInvocationResult>>('invokeAgent', {
    workflowId: invocationId,
    args: [input],
    workflowExecutionTimeout: timeoutMs,
    memo: { agent: { orgId: run.orgId, agentId: step.agentId, chatId, parentRunId: run.runId } },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.orgId, value: run.orgId },
      { key: SEARCH_ATTRIBUTES.agentId, value: step.agentId },
    ],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
  const started = `invoked agent ${step.agentId} in chat ${chatId} (invocation ${invocationId})\n`;
  try {
    const result = await child.result();
    const stdout = `${started}${result.toolCalls.map((c) => `turn ${c.turn + 1}: ${c.ok ? 'called' : 'failed'} ${c.line}\n`).join('')}answered after ${result.turns} model turn(s)\n`;
    if (result.output !== undefined) return completed(JSON.stringify(result.output), stdout, 'json');
    return completed(result.response, stdout, 'markdown');
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    if (err instanceof ChildWorkflowFailure) {
      const reason = err.cause?.message ?? err.message;
      return failed(`agent ${step.agentId} failed: ${reason}`, `${started}failed: ${reason}\n`);
    }
    throw err;
  }
}
