/**
 * Agents' token usage and cost (issue 36): one row per model call (per activity attempt, so a
 * retry that called the model again is counted, and a retried record is not counted twice), each
 * organization's totals per calendar month (UTC), kept in the same transaction, and
 * organizations' monthly budgets.
 */
import type { Kysely } from 'kysely';
import { addUsage, type CallUsage, type ModelUsage, type MonthTotals } from '../common/agent-usage';
import type { Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

export interface UsageCall extends CallUsage {
  orgId: string;
  agentId: string;
  invocationId: string;
  turn: number;
  attempt: number;
  /** `YYYY-MM` (UTC) */
  month: string;
}

export interface OrgBudget {
  monthlyMaxTokens: number | null;
  monthlyMaxCostNanoUsd: number | null;
  updatedAt: string | null;
}

// PostgreSQL answers bigint columns as strings.
function num(value: number | string): number {
  return typeof value === 'number' ? value : Number(value);
}

function numOrNull(value: number | string | null): number | null {
  return value === null ? null : num(value);
}

export class AgentUsageStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records one call once (by invocation, turn and attempt); answers the organization's month totals after it. */
  async record(call: UsageCall): Promise<MonthTotals> {
    const now = nowIso();
    const tokens = call.promptTokens + call.completionTokens;
    await withOrgCheck(call.orgId, () => this.db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('agent_usage_calls').values({
        invocation_id: call.invocationId, turn: call.turn, attempt: call.attempt, org_id: call.orgId, agent_id: call.agentId, month: call.month,
        model: call.model, prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens, cached_prompt_tokens: call.cachedPromptTokens,
        cost_nano_usd: call.costNanoUsd, created_at: now,
      }).onConflict((oc) => oc.columns(['invocation_id', 'turn', 'attempt']).doNothing()).returning('invocation_id').execute();
      if (inserted.length === 0) return;
      await trx.insertInto('org_usage_months')
        .values({ org_id: call.orgId, month: call.month, tokens, cost_nano_usd: call.costNanoUsd ?? 0, updated_at: now })
        .onConflict((oc) => oc.columns(['org_id', 'month']).doUpdateSet((eb) => ({
          tokens: eb('org_usage_months.tokens', '+', eb.ref('excluded.tokens')),
          cost_nano_usd: eb('org_usage_months.cost_nano_usd', '+', eb.ref('excluded.cost_nano_usd')),
          updated_at: eb.ref('excluded.updated_at'),
        })))
        .execute();
    }));
    return this.month(call.orgId, call.month);
  }

  async month(orgId: string, month: string): Promise<MonthTotals> {
    const row = await this.db.selectFrom('org_usage_months').select(['tokens', 'cost_nano_usd'])
      .where('org_id', '=', orgId).where('month', '=', month).executeTakeFirst();
    return row ? { tokens: num(row.tokens), costNanoUsd: num(row.cost_nano_usd) } : { tokens: 0, costNanoUsd: 0 };
  }

  /** Every call of one invocation, per model; another organization's invocation has none. */
  async ofInvocation(orgId: string, invocationId: string): Promise<ModelUsage[]> {
    const rows = await this.db.selectFrom('agent_usage_calls').selectAll()
      .where('invocation_id', '=', invocationId).where('org_id', '=', orgId).orderBy('turn').orderBy('attempt').execute();
    let totals: ModelUsage[] = [];
    for (const r of rows) {
      totals = addUsage(totals, {
        model: r.model, promptTokens: num(r.prompt_tokens), completionTokens: num(r.completion_tokens),
        cachedPromptTokens: num(r.cached_prompt_tokens), costNanoUsd: numOrNull(r.cost_nano_usd),
      });
    }
    return totals;
  }

  async budget(orgId: string): Promise<OrgBudget> {
    const row = await this.db.selectFrom('org_budgets').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    return row
      ? { monthlyMaxTokens: numOrNull(row.monthly_max_tokens), monthlyMaxCostNanoUsd: numOrNull(row.monthly_max_cost_nano_usd), updatedAt: row.updated_at }
      : { monthlyMaxTokens: null, monthlyMaxCostNanoUsd: null, updatedAt: null };
  }

  async setBudget(orgId: string, budget: Pick<OrgBudget, 'monthlyMaxTokens' | 'monthlyMaxCostNanoUsd'>): Promise<OrgBudget> {
    const updatedAt = nowIso();
    const values = { monthly_max_tokens: budget.monthlyMaxTokens, monthly_max_cost_nano_usd: budget.monthlyMaxCostNanoUsd, updated_at: updatedAt };
    await withOrgCheck(orgId, () => this.db.insertInto('org_budgets').values({ org_id: orgId, ...values })
      .onConflict((oc) => oc.column('org_id').doUpdateSet(values)).execute());
    return { ...budget, updatedAt };
  }
}
