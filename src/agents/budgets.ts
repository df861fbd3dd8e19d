/**
 * Agents' usage as the agent service shows and checks it (issue 36): an invocation's tokens and
 * cost from the registry (every model call, whatever state the invocation is in), the reason a
 * failed invocation ended, and the organization's monthly budget checked before a start.
 */
import { ApplicationFailure } from '@temporalio/common';
import { AgentFailureType } from '../common/agent-invocation';
import { monthlyBudgetReached, monthOf, usageView, type UsageView } from '../common/agent-usage';
import { isOneOf } from '../common/narrow';
import type { Registry } from '../registry';

/** Why an invocation refused at start is refused: the organization's monthly budget is used up. */
export async function monthlyBudgetRefusal(registry: Registry, orgId: string, now = new Date()): Promise<string | undefined> {
  const budget = await registry.agentUsage.budget(orgId);
  if (budget.monthlyMaxTokens === null && budget.monthlyMaxCostNanoUsd === null) return undefined;
  const reached = monthlyBudgetReached({
    ...(budget.monthlyMaxTokens === null ? {} : { monthlyMaxTokens: budget.monthlyMaxTokens }),
    ...(budget.monthlyMaxCostNanoUsd === null ? {} : { monthlyMaxCostNanoUsd: budget.monthlyMaxCostNanoUsd }),
  }, await registry.agentUsage.month(orgId, monthOf(now)));
  return reached && `budget exhausted: ${reached}; no new invocation starts until the month ends (UTC) or the budget is raised`;
}

/** Seconds until the next calendar month (UTC) begins. */
export function secondsToNextMonth(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** The reason code of a failed invocation the caller may act on (BUDGET_EXHAUSTED, TURN_LIMIT, …). */
export function failureReason(cause: unknown): string | undefined {
  if (!(cause instanceof ApplicationFailure) || !cause.type) return undefined;
  return isOneOf(Object.values(AgentFailureType), cause.type) ? cause.type : undefined;
}

export async function invocationUsage(registry: Registry, orgId: string, invocationId: string): Promise<UsageView> {
  return usageView(await registry.agentUsage.ofInvocation(orgId, invocationId));
}
