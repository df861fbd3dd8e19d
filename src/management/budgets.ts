/**
 * Organizations' monthly budgets of agent usage (docs/agents.md; issue 36): an organization reads
 * its own; the instance administrator reads and sets any organization's. A budget reached refuses
 * the next agent invocation of the organization until the month ends (UTC).
 */
import { formatUsd, monthOf, usdToNano } from '../common/agent-usage';
import type { Registry } from '../registry';
import type { AdminActor } from './keys';
import { done, refused, type Outcome } from './outcome';

export interface BudgetView {
  orgId: string;
  monthlyMaxTokens: number | null;
  /** USD as a decimal string */
  monthlyMaxCostUsd: string | null;
  /** the current calendar month (UTC), YYYY-MM */
  month: string;
  used: { tokens: number; costUsd: string };
  updatedAt: string | null;
}

/** Fields given change (null removes that limit); fields left out keep their value. */
export interface BudgetPatch {
  monthlyMaxTokens?: number | null;
  monthlyMaxCostUsd?: number | null;
}

export class BudgetAdmin {
  constructor(private readonly deps: { registry: Registry }) {}

  /** The organization's budget and this month's usage. */
  async view(orgId: string): Promise<BudgetView> {
    const store = this.deps.registry.agentUsage;
    const month = monthOf(new Date());
    const [budget, used] = await Promise.all([store.budget(orgId), store.month(orgId, month)]);
    return {
      orgId, monthlyMaxTokens: budget.monthlyMaxTokens,
      monthlyMaxCostUsd: budget.monthlyMaxCostNanoUsd === null ? null : formatUsd(budget.monthlyMaxCostNanoUsd),
      month, used: { tokens: used.tokens, costUsd: formatUsd(used.costNanoUsd) }, updatedAt: budget.updatedAt,
    };
  }

  /** An organization named by id, which only the instance administrator may read or set the budget of. */
  async otherOrg(actor: AdminActor, id: string): Promise<Outcome<string>> {
    if (!actor.instanceAdmin) {
      return refused('FORBIDDEN', 'only the instance administrator may read or set an organization\'s budget by id; an organization reads its own at /api/v1/budget');
    }
    const org = await this.deps.registry.orgs.get(id);
    return org ? done(org.id) : refused('UNKNOWN_ORG', `no organization ${id}`);
  }

  async set(orgId: string, patch: BudgetPatch): Promise<BudgetView> {
    const store = this.deps.registry.agentUsage;
    const current = await store.budget(orgId);
    await store.setBudget(orgId, {
      monthlyMaxTokens: patch.monthlyMaxTokens === undefined ? current.monthlyMaxTokens : patch.monthlyMaxTokens,
      monthlyMaxCostNanoUsd: patch.monthlyMaxCostUsd === undefined ? current.monthlyMaxCostNanoUsd
        : patch.monthlyMaxCostUsd === null ? null : usdToNano(patch.monthlyMaxCostUsd),
    });
    return this.view(orgId);
  }
}
