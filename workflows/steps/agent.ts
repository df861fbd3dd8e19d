/**
 * `agent`: invokes an agent of the run's organization as a child workflow (invokeAgent) of the
 * run, so the run's page in the Temporal Web UI shows it and cancelling the run cancels it. The
 * child is bounded by the step's timeoutSeconds and the run's remaining time.
 */
import { ApplicationFailure, CancellationScope, ChildWorkflowFailure, isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { formatUsd, isModelUsage, usageTotals, type ModelUsage } from '../../src/common/agent-usage';
import { fieldOf } from '../../src/common/narrow';
import { atLevel } from '../run/features';
import type { AgentInvocationInput } from '../../src/common/agent-invocation';
import type { AgentStep } from '../../src/common/steps';
import { ENGINE_LEVEL, type RunInput } from '../../src/common/run-types';
import { childMetadata, labelled } from '../run/ui-metadata';
import { SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { WORKFLOW_TYPES, type InvokeAgentWorkflow } from '../../src/common/workflow-contracts';
import { childUuid } from '../run/child-ids';
import { runDeadline } from '../run/time-limit';
import { completed, failed, type Renderer, type StepDraft } from './step-draft';

export async function agentStep(step: AgentStep, run: RunInput, stepIndex: number | string, render: Renderer, label: string): Promise<StepDraft> {
  const message = String(await render(step.message));
  const chatId = step.chatId === undefined ? `chat_${childUuid('chat').replace(/-/g, '')}` : String(await render(step.chatId));
  const invocationId = `${run.runId}-agent-${stepIndex}`;
  const input: AgentInvocationInput = {
    invocationId, orgId: run.orgId, agentId: step.agentId, chatId, message, forwardHeaders: {}, startedBy: run.startedBy,
    parentRunId: run.runId, chainDepth: run.chainDepth ?? 0, ...(labelled() ? { engine: ENGINE_LEVEL } : {}),
  };
  let timeoutMs = step.timeoutSeconds * 1000;
  const expiry = runDeadline();
  if (expiry) timeoutMs = Math.max(1000, Math.min(timeoutMs, expiry.getTime() - Date.now()));
  // By name, not by import: the agent loop imports runAutomation for its workflow tools.
  const child = await startChild<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, {
    workflowId: invocationId,
    args: [input],
    workflowExecutionTimeout: timeoutMs,
    memo: { agent: { orgId: run.orgId, agentId: step.agentId, chatId, parentRunId: run.runId } },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.orgId, value: run.orgId },
      { key: SEARCH_ATTRIBUTES.agentId, value: step.agentId },
    ],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    ...childMetadata(`agent ${step.agentId} · ${label} of run ${run.runId}`,
      `Agent **${step.agentId}** invoked by step ${label} of run ${run.runId} (${run.automationName} v${run.automationVersion}) in chat ${chatId}.`),
  });
  const started = `invoked agent ${step.agentId} in chat ${chatId} (invocation ${invocationId})\n`;
  // level 7: the invocation's usage is recorded with the step's outcome
  const accounting = atLevel(7);
  try {
    const result = await child.result();
    const usage = accounting ? result.usage ?? [] : [];
    const stdout = `${started}${result.toolCalls.map((c) => `turn ${c.turn + 1}: ${c.ok ? 'called' : 'failed'} ${c.line}\n`).join('')}answered after ${result.turns} model turn(s)\n${usageLine(usage)}`;
    const draft = result.output !== undefined ? completed(JSON.stringify(result.output), stdout, 'json') : completed(result.response, stdout, 'markdown');
    return usage.length ? { ...draft, usage } : draft;
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    if (err instanceof ChildWorkflowFailure) {
      const reason = err.cause?.message ?? err.message;
      const usage = accounting ? failureUsage(err.cause) : [];
      const draft = failed(`agent ${step.agentId} failed: ${reason}`, `${started}failed: ${reason}\n${usageLine(usage)}`);
      return usage.length ? { ...draft, usage } : draft;
    }
    throw err;
  }
}

function usageLine(usage: readonly ModelUsage[]): string {
  if (usage.length === 0) return '';
  const { tokens, costNanoUsd, unpriced } = usageTotals(usage);
  return `used ${tokens} token(s)${unpriced.length < usage.length ? `, ${formatUsd(costNanoUsd)} USD` : ''}\n`;
}

/** The usage a failed invocation carries in its failure's details (level 7 and later). */
function failureUsage(cause: Error | undefined): ModelUsage[] {
  if (!(cause instanceof ApplicationFailure)) return [];
  const details: unknown = cause.details?.[0];
  const usage = fieldOf(details, 'usage');
  return Array.isArray(usage) ? usage.filter(isModelUsage) : [];
}
