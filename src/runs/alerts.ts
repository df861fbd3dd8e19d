/**
 * Alerts on run outcomes, the worker's side (issue 54; docs/operations.md "Alerts").
 *
 * AlertNotifier: the worker's `flowgateAlerts` sink (workflows/run/metrics-interceptors.ts tells it
 * of each run that ends, workflows/interpreter/run-list.ts of each approval wait that starts or
 * ends, never on replay), and the agents' usage meter (each model call's month totals), hand what
 * concerns an enabled rule of the organization to that rule's evaluator entity
 * (workflows/alert-evaluator.ts) with signal-with-start. Once Temporal has the signal, the
 * evaluator decides and delivers durably (src/runs/alert-deliveries.ts).
 */
import type { Client } from '@temporalio/client';
import type { MonthTotals } from '../common/agent-usage';
import {
  alertWorkflowId, countsCompletions, isFailure, watchesOutcomes,
  type AlertCondition, type AlertEvaluatorInput, type AlertSignal, type AlertWatch, type AlertWatchSignal, type ApprovalWaitEvent, type RunEnded,
} from '../common/alerts';
import { alertOutcomeSignal, alertWatchSignal, stateQuery, WORKFLOW_TYPES, type EvaluateAlertRuleWorkflow } from '../common/workflow-contracts';
import { startPriority } from '../common/priority';
import { alertRuleView, type AlertRuleView } from '../contracts/alert-bodies';
import type { Logger } from '../observability/logger';
import type { Registry } from '../registry';

/** How long this process keeps an organization's enabled rules (a write through this process forgets them at once). */
export const RULES_CACHE_MS = 5_000;
const SIGNAL_ATTEMPTS = 3;
/** Budget crossings this process remembers having handed over (rule and month), not to signal on every model call. */
const BUDGET_MEMO = 10_000;

/** The share (percent) of the monthly budget used: the more spent of tokens and cost; undefined without a budget. */
export function budgetPercent(budget: { monthlyMaxTokens: number | null; monthlyMaxCostNanoUsd: number | null }, month: MonthTotals): number | undefined {
  const shares = [
    budget.monthlyMaxTokens === null ? undefined : (month.tokens / budget.monthlyMaxTokens) * 100,
    budget.monthlyMaxCostNanoUsd === null ? undefined : (month.costNanoUsd / budget.monthlyMaxCostNanoUsd) * 100,
  ].filter((s) => s !== undefined);
  return shares.length === 0 ? undefined : Math.max(...shares);
}

export class AlertNotifier {
  private readonly cache = new Map<string, { at: number; rules: AlertRuleView[] }>();
  /** each run's approval events in the order the run told them (a start is signalled before its end) */
  private readonly runChains = new Map<string, Promise<void>>();
  private readonly budgetsHandedOver = new Set<string>();

  constructor(private readonly deps: { registry: Registry; client: Client; taskQueue: string; log: Pick<Logger, 'warn' | 'error'> }) {}

  /** An organization's rules changed: read them afresh. */
  forget(orgId: string): void {
    this.cache.delete(orgId);
  }

  /** The sink: never throws, never waits (a failure to hand the outcome over is logged). */
  runEnded(ended: RunEnded): void {
    if (ended.status === 'CANCELLED') return;
    this.handOver(ended).catch((error: unknown) => this.deps.log.error('an ended run could not be handed to its alert rules', { runId: ended.runId, error }));
  }

  /** Signals each rule the outcome concerns; resolves once Temporal has every signal (tests and the sink await it). */
  async handOver(ended: RunEnded): Promise<void> {
    const failed = isFailure(ended.status);
    const rules = (await this.rules(ended.orgId)).filter((rule) => concerns(rule.condition, ended, failed));
    await Promise.all(rules.map((rule) => this.signal(rule, ended.orgId, { outcome: { ended, condition: rule.condition } })));
  }

  /** The sink of approval waits: never throws, never waits; one run's events are handed over in order. */
  approvalWaiting(event: ApprovalWaitEvent): void {
    const before = this.runChains.get(event.runId) ?? Promise.resolve();
    const next = before.then(() => this.handOverWait(event)).catch((error: unknown) => {
      this.deps.log.error('an approval wait could not be handed to its alert rules', { runId: event.runId, error });
    });
    this.runChains.set(event.runId, next);
    void next.then(() => {
      if (this.runChains.get(event.runId) === next) this.runChains.delete(event.runId);
    });
  }

  async handOverWait(event: ApprovalWaitEvent): Promise<void> {
    const rules = (await this.rules(event.orgId)).filter((rule) => rule.condition.kind === 'approval_waiting'
      && (rule.condition.workflowId === undefined || rule.condition.workflowId === event.workflowId));
    await Promise.all(rules.map((rule) => this.watch(rule, event.orgId, { kind: 'approval', event })));
  }

  /** The agents' usage meter: the organization's month totals after a model call. Never throws, never waits. */
  usageRecorded(orgId: string, period: string, month: MonthTotals): void {
    this.handOverUse(orgId, period, month).catch((error: unknown) => this.deps.log.error('a budget use could not be handed to its alert rules', { orgId, error }));
  }

  async handOverUse(orgId: string, period: string, month: MonthTotals, at = Date.now()): Promise<void> {
    const rules = (await this.rules(orgId)).filter((rule) => rule.condition.kind === 'budget' && !this.budgetsHandedOver.has(`${rule.id}:${period}`));
    if (rules.length === 0) return;
    const budget = await this.deps.registry.agentUsage.budget(orgId);
    const percent = budgetPercent(budget, month);
    if (percent === undefined) return;
    const crossed = rules.filter((rule) => rule.condition.kind === 'budget' && percent >= rule.condition.percent);
    const use = {
      orgId, period, percent, tokens: month.tokens, maxTokens: budget.monthlyMaxTokens, costNanoUsd: month.costNanoUsd, maxCostNanoUsd: budget.monthlyMaxCostNanoUsd, at,
    };
    await Promise.all(crossed.map(async (rule) => {
      await this.watch(rule, orgId, { kind: 'budget', use });
      // the evaluator alerts once per month whatever it is sent; this only spares it a signal per model call
      this.budgetsHandedOver.add(`${rule.id}:${period}`);
      if (this.budgetsHandedOver.size > BUDGET_MEMO) this.budgetsHandedOver.clear();
    }));
  }

  private async rules(orgId: string): Promise<AlertRuleView[]> {
    const cached = this.cache.get(orgId);
    if (cached && Date.now() - cached.at < RULES_CACHE_MS) return cached.rules;
    const rules = (await this.deps.registry.alertRules.enabled(orgId)).flatMap((r) => alertRuleView(r) ?? []);
    this.cache.set(orgId, { at: Date.now(), rules });
    return rules;
  }

  private watch(rule: AlertRuleView, orgId: string, watch: AlertWatch): Promise<void> {
    return this.signal(rule, orgId, { watch: { watch, condition: rule.condition } });
  }

  private async signal(rule: AlertRuleView, orgId: string, what: { outcome: AlertSignal } | { watch: AlertWatchSignal }): Promise<void> {
    const input: AlertEvaluatorInput = { orgId, ruleId: rule.id, condition: rule.condition };
    const start = {
      workflowId: alertWorkflowId(rule.id), taskQueue: this.deps.taskQueue, staticSummary: `alert rule ${rule.name} (${rule.kind})`,
      // in its organization's turn (src/common/priority.ts): a flooding organization's rules are signalled at every run's end
      priority: startPriority(orgId),
    };
    const { workflow } = this.deps.client;
    for (let attempt = 1; ; attempt++) {
      try {
        if ('outcome' in what) {
          await workflow.signalWithStart<EvaluateAlertRuleWorkflow, [AlertSignal]>(WORKFLOW_TYPES.evaluateAlertRule, {
            ...start, args: [input], signal: alertOutcomeSignal, signalArgs: [what.outcome],
          });
        } else {
          await workflow.signalWithStart<EvaluateAlertRuleWorkflow, [AlertWatchSignal]>(WORKFLOW_TYPES.evaluateAlertRule, {
            ...start, args: [input], signal: alertWatchSignal, signalArgs: [what.watch],
          });
        }
        return;
      } catch (error) {
        if (attempt >= SIGNAL_ATTEMPTS) throw error;
        this.deps.log.warn('an alert signal failed; trying again', { ruleId: rule.id, attempt, error });
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }
}

function concerns(condition: AlertCondition, ended: RunEnded, failed: boolean): boolean {
  if (!watchesOutcomes(condition)) return false;
  if (condition.workflowId !== undefined && condition.workflowId !== ended.workflowId) return false;
  return failed || countsCompletions(condition);
}

/** Whether run `runId` still waits at an approval (the deliveries' check before an approval_waiting alert goes out). */
export function runWaitingAtApproval(client: Client): (runId: string) => Promise<boolean> {
  return async (runId) => {
    const handle = client.workflow.getHandle(runId);
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') return false;
    const state = await handle.query(stateQuery);
    return state.waitingOn?.kind === 'approval';
  };
}
