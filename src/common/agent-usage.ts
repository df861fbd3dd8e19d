/**
 * Token usage and cost of model calls (issue 36): what one call used, running totals per model,
 * and how both are shown. Pure (the workflow bundle imports it). Cost travels as an integer of
 * nano-USD (1e-9 USD), exact to add up and safe as a JavaScript number up to about 9 million USD;
 * it is shown as a decimal string of USD. A call whose model has no price keeps its tokens and a
 * null cost with the reason.
 */

/** What one model call used, as the model activity reports it. */
export interface CallUsage {
  /** the model the call asked for (the agent's, or FLOWGATE_LLM_MODEL) */
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** prompt tokens the provider served from its cache (a part of promptTokens); 0 when not reported */
  cachedPromptTokens: number;
  /** null: the model has no price in FLOWGATE_MODEL_PRICES */
  costNanoUsd: number | null;
}

/** Running totals of one model. */
export interface ModelUsage extends CallUsage {
  calls: number;
}

/** A model's totals as an invocation's failure carries them (written by the invocation from ModelUsage values). */
export function isModelUsage(value: unknown): value is ModelUsage {
  return typeof value === 'object' && value !== null && 'model' in value && typeof value.model === 'string' && 'calls' in value && typeof value.calls === 'number';
}

/** Tokens and cost of an organization in one calendar month (UTC), as the registry keeps them. */
export interface MonthTotals {
  tokens: number;
  costNanoUsd: number;
}

/** Budgets as the invocation checks them after each model call. */
export interface UsageBudget {
  /** the agent's limits.maxTokens / limits.maxCostUsd for this invocation */
  maxTokens?: number;
  maxCostNanoUsd?: number;
  /** the organization's monthly budget */
  monthlyMaxTokens?: number;
  monthlyMaxCostNanoUsd?: number;
}

export const NANO_PER_USD = 1_000_000_000;

export function callTokens(usage: Pick<CallUsage, 'promptTokens' | 'completionTokens'>): number {
  return usage.promptTokens + usage.completionTokens;
}

/** Adds one call to per-model totals (a new array, ordered by model name). */
export function addUsage(totals: readonly ModelUsage[], call: CallUsage & { calls?: number }): ModelUsage[] {
  const calls = call.calls ?? 1;
  const found = totals.find((t) => t.model === call.model);
  const rest = totals.filter((t) => t.model !== call.model);
  const next: ModelUsage = found
    ? {
      model: found.model, calls: found.calls + calls, promptTokens: found.promptTokens + call.promptTokens,
      completionTokens: found.completionTokens + call.completionTokens, cachedPromptTokens: found.cachedPromptTokens + call.cachedPromptTokens,
      costNanoUsd: found.costNanoUsd === null || call.costNanoUsd === null ? null : found.costNanoUsd + call.costNanoUsd,
    }
    : { model: call.model, calls, promptTokens: call.promptTokens, completionTokens: call.completionTokens, cachedPromptTokens: call.cachedPromptTokens, costNanoUsd: call.costNanoUsd };
  return [...rest, next].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

export function sumUsage(lists: readonly (readonly ModelUsage[])[]): ModelUsage[] {
  let totals: ModelUsage[] = [];
  for (const list of lists) for (const entry of list) totals = addUsage(totals, entry);
  return totals;
}

/** Tokens of all models, and the cost of those with a price. */
export function usageTotals(totals: readonly ModelUsage[]): { tokens: number; costNanoUsd: number; unpriced: string[] } {
  let tokens = 0;
  let costNanoUsd = 0;
  const unpriced: string[] = [];
  for (const t of totals) {
    tokens += callTokens(t);
    if (t.costNanoUsd === null) unpriced.push(t.model);
    else costNanoUsd += t.costNanoUsd;
  }
  return { tokens, costNanoUsd, unpriced };
}

/** nano-USD as a decimal string of USD without trailing zeros ("0.000185", "12.5", "0"). */
export function formatUsd(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const abs = Math.abs(Math.round(nano));
  const whole = Math.floor(abs / NANO_PER_USD);
  const fraction = String(abs % NANO_PER_USD).padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** USD given as a number (a budget, a price) in nano-USD. */
export function usdToNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

const NO_PRICE = 'no price for this model in FLOWGATE_MODEL_PRICES';

/** How an invocation, a step or a run shows its usage. */
// a type, not an interface: the contract's loose body schemas take it as a record
export type UsageView = {
  totalTokens: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  /** USD as a decimal string; null when no model called has a price */
  costUsd: string | null;
  /** why costUsd is null or partial */
  costNote?: string;
  byModel: {
    model: string; calls: number; promptTokens: number; completionTokens: number; cachedPromptTokens: number; totalTokens: number;
    costUsd: string | null; costNote?: string;
  }[];
};

export function usageView(totals: readonly ModelUsage[]): UsageView {
  const sum = usageTotals(totals);
  const priced = totals.length - sum.unpriced.length;
  return {
    totalTokens: sum.tokens,
    promptTokens: totals.reduce((n, t) => n + t.promptTokens, 0),
    completionTokens: totals.reduce((n, t) => n + t.completionTokens, 0),
    cachedPromptTokens: totals.reduce((n, t) => n + t.cachedPromptTokens, 0),
    costUsd: priced === 0 && totals.length > 0 ? null : formatUsd(sum.costNanoUsd),
    ...(sum.unpriced.length === 0 ? {} : {
      costNote: priced === 0 ? `${NO_PRICE}: ${sum.unpriced.join(', ')}` : `without ${sum.unpriced.join(', ')}: ${NO_PRICE}`,
    }),
    byModel: totals.map((t) => ({
      model: t.model, calls: t.calls, promptTokens: t.promptTokens, completionTokens: t.completionTokens, cachedPromptTokens: t.cachedPromptTokens,
      totalTokens: callTokens(t), costUsd: t.costNanoUsd === null ? null : formatUsd(t.costNanoUsd), ...(t.costNanoUsd === null ? { costNote: NO_PRICE } : {}),
    })),
  };
}

/** The calendar month (UTC) of an instant, as `YYYY-MM`. */
export function monthOf(date: Date): string {
  return date.toISOString().slice(0, 7);
}

/**
 * The budget an invocation has reached after a model call, with the figures, or undefined.
 * `invocation`: its totals so far; `month`: the organization's month totals after the call.
 */
export function budgetReached(budget: UsageBudget | undefined, invocation: readonly ModelUsage[], month: MonthTotals | undefined): string | undefined {
  if (!budget) return undefined;
  const own = usageTotals(invocation);
  if (budget.maxTokens !== undefined && own.tokens >= budget.maxTokens) {
    return `the invocation's token budget (limits.maxTokens = ${budget.maxTokens}) is reached: ${own.tokens} tokens used`;
  }
  if (budget.maxCostNanoUsd !== undefined && own.costNanoUsd >= budget.maxCostNanoUsd) {
    return `the invocation's cost budget (limits.maxCostUsd = ${formatUsd(budget.maxCostNanoUsd)} USD) is reached: ${formatUsd(own.costNanoUsd)} USD spent`;
  }
  if (month) return monthlyBudgetReached(budget, month);
  return undefined;
}

export function monthlyBudgetReached(budget: Pick<UsageBudget, 'monthlyMaxTokens' | 'monthlyMaxCostNanoUsd'>, month: MonthTotals): string | undefined {
  if (budget.monthlyMaxTokens !== undefined && month.tokens >= budget.monthlyMaxTokens) {
    return `the organization's monthly token budget (monthlyMaxTokens = ${budget.monthlyMaxTokens}) is reached: ${month.tokens} tokens used this month (UTC)`;
  }
  if (budget.monthlyMaxCostNanoUsd !== undefined && month.costNanoUsd >= budget.monthlyMaxCostNanoUsd) {
    return `the organization's monthly cost budget (monthlyMaxCostUsd = ${formatUsd(budget.monthlyMaxCostNanoUsd)} USD) is reached: ${formatUsd(month.costNanoUsd)} USD spent this month (UTC)`;
  }
  return undefined;
}
